#include "reveal/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace reveal {

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data() || !std::isfinite(v) || v < 0) return std::nullopt;
  std::string_view unit(p, s.data() + s.size() - p);
  double scale;
  if (unit.empty() || unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ns") scale = 1;
  else if (unit == "m" || unit == "min") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  else return std::nullopt;
  const double ns = v * scale;
  if (ns > 9e18) return std::nullopt;
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(ns)));
}

std::optional<std::uint64_t> parse_size(std::string_view s) {
  std::size_t digits = 0;
  while (digits < s.size() && ((s[digits] >= '0' && s[digits] <= '9') || s[digits] == '.')) ++digits;
  const std::string_view number = s.substr(0, digits), unit = s.substr(digits);
  if (number.empty() || number.front() == '.' || number.back() == '.') return std::nullopt;

  std::uint64_t scale;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "kB") scale = 1000ull;
  else if (unit == "MB") scale = 1000ull * 1000;
  else if (unit == "GB") scale = 1000ull * 1000 * 1000;
  else if (unit == "TB") scale = 1000ull * 1000 * 1000 * 1000;
  else if (unit == "KiB") scale = 1ull << 10;
  else if (unit == "MiB") scale = 1ull << 20;
  else if (unit == "GiB") scale = 1ull << 30;
  else if (unit == "PB") scale = 1000ull * 1000 * 1000 * 1000 * 1000;
  else if (unit == "EB") scale = 1000ull * 1000 * 1000 * 1000 * 1000 * 1000;
  else if (unit == "TiB") scale = 1ull << 40;
  else if (unit == "PiB") scale = 1ull << 50;
  else if (unit == "EiB") scale = 1ull << 60;
  else return std::nullopt;

  const char* b = number.data();
  const char* e = b + number.size();
  if (number.find('.') == std::string_view::npos) {  // exact integer arithmetic
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p != e) return std::nullopt;
    if (v > std::numeric_limits<std::uint64_t>::max() / scale) return std::nullopt;
    return v * scale;
  }
  // A fraction ("1.5GiB") must come to a whole number of bytes.
  double v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e || !std::isfinite(v)) return std::nullopt;
  const double bytes = v * static_cast<double>(scale);
  if (bytes >= 18446744073709551616.0 || std::abs(bytes - std::round(bytes)) > 1e-6 * std::max(1.0, bytes))
    return std::nullopt;  // 2^64 and above, or not a whole number of bytes
  return static_cast<std::uint64_t>(std::round(bytes));
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// Reads exactly `n` digits at s[pos...]; advances pos.
std::optional<int> digits(std::string_view s, std::size_t& pos, std::size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  pos += n;
  return v;
}

}  // namespace

std::optional<std::int64_t> parse_utc_time(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  std::size_t p = 0;
  const auto year = digits(s, p, 4);
  if (!year || p >= s.size() || (s[p] != '-' && s[p] != '/')) return std::nullopt;
  const char dsep = s[p++];
  const auto month = digits(s, p, 2);
  if (!month || p >= s.size() || s[p++] != dsep) return std::nullopt;
  const auto day = digits(s, p, 2);
  if (!day || p >= s.size() || (s[p] != 'T' && s[p] != ' ')) return std::nullopt;
  ++p;
  const auto hour = digits(s, p, 2);
  if (!hour || p >= s.size() || s[p++] != ':') return std::nullopt;
  const auto minute = digits(s, p, 2);
  if (!minute || p >= s.size() || s[p++] != ':') return std::nullopt;
  const auto second = digits(s, p, 2);
  if (!second) return std::nullopt;
  std::int64_t frac_ns = 0;
  if (p < s.size() && (s[p] == '.' || s[p] == ',')) {
    ++p;
    std::int64_t scale = 100'000'000;
    const std::size_t first = p;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      frac_ns += (s[p] - '0') * scale;
      scale /= 10;
      ++p;
    }
    if (p == first) return std::nullopt;
  }
  std::int64_t offset_s = 0;
  if (p < s.size() && s[p] == 'Z') {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    const int sign = s[p++] == '+' ? 1 : -1;
    const auto oh = digits(s, p, 2);
    if (!oh) return std::nullopt;
    if (p < s.size() && s[p] == ':') ++p;
    const auto om = digits(s, p, 2);
    if (!om || *oh > 23 || *om > 59) return std::nullopt;
    offset_s = sign * (*oh * 3600 + *om * 60);
  }
  if (p != s.size()) return std::nullopt;
  static constexpr std::array<int, 12> kDays{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (*year % 4 == 0 && *year % 100 != 0) || *year % 400 == 0;
  if (*year < 1970 || *year > 2200 || *month < 1 || *month > 12 || *day < 1 ||
      *day > kDays[*month - 1] || (*month == 2 && *day == 29 && !leap) || *hour > 23 || *minute > 59 ||
      *second > 59)
    return std::nullopt;
  const std::int64_t secs = days_from_civil(*year, unsigned(*month), unsigned(*day)) * 86400 + *hour * 3600 +
                            *minute * 60 + *second - offset_s;
  return secs * 1'000'000'000 + frac_ns;
}


std::string format_value(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "n/a";
  const bool per_s = unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/s") == 0;
  const std::string base = per_s ? unit.substr(0, unit.size() - 2) : unit;
  const std::string suffix = per_s ? "/s" : "";
  if (unit == "%") return fmt::format("{:.1f} %", v);
  if (unit == "count") return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{:.0f}", v) : fmt::format("{:.2f}", v);
  if (base == "bytes" || base == "kB") {
    double b = base == "kB" ? v * 1024.0 : v;
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (std::fabs(b) >= 1024.0 && i < 4) { b /= 1024.0; ++i; }
    return fmt::format("{:.{}f} {}{}", b, i == 0 ? 0 : 1, units[i], suffix);
  }
  double a = std::fabs(v);
  std::string scaled;
  if (a >= 1e9) scaled = fmt::format("{:.2f} G", v / 1e9);
  else if (a >= 1e6) scaled = fmt::format("{:.2f} M", v / 1e6);
  else if (a >= 1e4) scaled = fmt::format("{:.1f} k", v / 1e3);
  else if (a >= 100 || v == std::floor(v)) scaled = fmt::format("{:.0f} ", v);
  else scaled = fmt::format("{:.3g} ", v);
  return scaled + unit;
}

std::string format_utc(std::int64_t unix_ns) {
  std::time_t t = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace reveal
