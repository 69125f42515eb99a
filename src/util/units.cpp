#include "reveal/units.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

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

}  // namespace reveal
