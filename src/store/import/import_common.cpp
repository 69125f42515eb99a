// Shared importer helpers, time parsing and subsystem guesses (no store code: the fuzzers link
// this without SQLite).
#include "store/import/import_common.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

namespace reveal {
namespace importer {

std::vector<Line> split_lines(std::string_view data) {
  if (data.starts_with("\xEF\xBB\xBF")) data.remove_prefix(3);
  std::vector<Line> lines;
  std::size_t number = 1;
  while (!data.empty()) {
    const std::size_t nl = data.find('\n');
    std::string_view text = data.substr(0, nl);
    if (text.ends_with('\r')) text.remove_suffix(1);
    lines.push_back({text, number++});
    if (nl == std::string_view::npos) break;
    data.remove_prefix(nl + 1);
  }
  return lines;
}

void fail_at(const std::string& file, std::size_t line, std::size_t col, const std::string& message) {
  throw ImportError(fmt::format("{}:{}:{}: {}", file, line, col, message));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> parse_value(std::string_view s, bool allow_gap) {
  s = trim(s);
  if (s.empty() || s == "nan" || s == "NaN" || s == "NAN") {
    if (allow_gap) return std::nan("");
    return std::nullopt;
  }
  if (s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '+') return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

namespace {
// Length of the well-formed UTF-8 sequence of 2..4 bytes at s[i] (RFC 3629: no overlong forms,
// no surrogates, at most U+10FFFF), or 0.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  const std::size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  if ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) > 0x9F) || (c == 0xF0 && b(i + 1) < 0x90) ||
      (c == 0xF4 && b(i + 1) > 0x8F))
    return 0;
  return n;
}
}  // namespace

std::string sanitise(std::string_view s, std::string_view extra) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (const std::size_t n = utf8_sequence(s, i)) {  // "é", "温度": kept, so they stay distinct
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || extra.find(c) != std::string_view::npos ? c : '_';
    ++i;
  }
  return out;
}

std::string quote(std::string_view s) {
  std::string out = "'";
  for (std::size_t i = 0; i < s.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += std::isprint(c) ? std::string(1, char(c)) : fmt::format("\\x{:02x}", c);
  }
  return out + (s.size() > 40 ? "...'" : "'");
}

std::int64_t start_ns(const ImportOptions& opt) { return opt.start_unix_ns.value_or(kDefaultImportStartNs); }

std::int64_t interval_ns(const ImportOptions& opt) {
  if (!std::isfinite(opt.interval_s) || opt.interval_s <= 0 || opt.interval_s > 1e6)
    throw ImportError(fmt::format("interval {} s is not a positive duration", opt.interval_s));
  return std::max<std::int64_t>(1, std::llround(opt.interval_s * 1e9));
}

std::string file_stem(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  const std::size_t dot = path.find_last_of('.');
  if (dot != std::string_view::npos && dot > 0) path = path.substr(0, dot);
  return std::string(path);
}

void finish_metadata(Recording& rec, const std::string& format, const std::string& hostname,
                     const std::vector<std::string>& inputs, double fallback_interval_s) {
  RunMetadata& m = rec.meta;
  m.hostname = hostname;
  m.command = "reveal import " + format;
  for (const auto& in : inputs) m.command += " " + in;
  m.root = "";
  m.reveal_version = "0.1.0";
  m.probes = {{"import." + format, true, "", rec.channels.size()}};
  m.start_unix_ns = rec.t_unix_ns.front();
  m.end_unix_ns = rec.t_unix_ns.back();
  m.complete = true;
  std::vector<std::uint64_t> gaps;  // times increase, so the unsigned difference is exact
  for (std::size_t i = 1; i < rec.t_unix_ns.size(); ++i)
    gaps.push_back(std::uint64_t(rec.t_unix_ns[i]) - std::uint64_t(rec.t_unix_ns[i - 1]));
  if (gaps.empty()) {
    m.interval_s = fallback_interval_s;
  } else {
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    m.interval_s = double(gaps[gaps.size() / 2]) * 1e-9;
  }
}

TimeFormat detect_time_format(std::string_view first) {
  if (parse_utc_time(first)) return {true, 1};
  const auto v = importer::parse_value(first, false);
  if (!v) return {false, 1};  // reported by parse_time
  const double a = std::fabs(*v);
  if (a < 1e11) return {false, 1'000'000'000};
  if (a < 1e14) return {false, 1'000'000};
  if (a < 1e17) return {false, 1'000};
  return {false, 1};
}

namespace {
std::optional<std::int64_t> parse_unix_or_iso(std::string_view text, const TimeFormat& tf) {
  if (tf.iso) return parse_utc_time(text);
  if (const auto i = importer::parse_int(text)) {
    std::int64_t ns = 0;
    if (__builtin_mul_overflow(*i, tf.mult, &ns)) return std::nullopt;
    return ns;
  }
  const auto d = tf.mult == 1 ? std::nullopt : importer::parse_value(text, false);  // ns are whole
  if (!d) return std::nullopt;
  const double ns = *d * double(tf.mult);
  if (!(std::fabs(ns) < 9.2e18)) return std::nullopt;
  return std::llround(ns);
}

}  // namespace

std::optional<std::int64_t> parse_time(std::string_view text, const TimeFormat& tf) {
  std::optional<std::int64_t> t = parse_unix_or_iso(text, tf);
  if (t && *t < 0) return std::nullopt;
  return t;
}

}  // namespace importer

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
  s = importer::trim(s);
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

Subsystem guess_subsystem(std::string_view name) {
  // Reveal's own sources (docs/METRICS.md), by the part before ':'.
  static const std::map<std::string_view, Subsystem, std::less<>> kSources{
      {"proc.stat", Subsystem::cpu},           {"proc.loadavg", Subsystem::cpu},
      {"sys.cpufreq", Subsystem::cpu},         {"sys.cpuidle", Subsystem::cpu},
      {"perf", Subsystem::cpu},                {"proc.meminfo", Subsystem::memory},
      {"proc.vmstat", Subsystem::memory},      {"proc.net.dev", Subsystem::network},
      {"proc.net.snmp", Subsystem::network},   {"sys.net", Subsystem::network},
      {"ethtool", Subsystem::network},         {"proc.diskstats", Subsystem::storage},
      {"sys.rapl", Subsystem::power_thermal},  {"sys.hwmon", Subsystem::power_thermal},
      {"sys.thermal", Subsystem::power_thermal}, {"rdma", Subsystem::interconnect},
      {"nvml", Subsystem::gpu},                {"proc.pressure", Subsystem::system},
      {"cgroup", Subsystem::system},           {"derived", Subsystem::system}};
  const std::size_t colon = name.find(':');
  if (colon != std::string_view::npos)
    if (auto it = kSources.find(name.substr(0, colon)); it != kSources.end()) return it->second;
  // Otherwise the first word (split at anything but letters and digits) that names a part.
  std::size_t i = 0;
  while (i < name.size()) {
    while (i < name.size() && !std::isalnum(static_cast<unsigned char>(name[i]))) ++i;
    std::string w;
    while (i < name.size() && std::isalnum(static_cast<unsigned char>(name[i])))
      w += char(std::tolower(static_cast<unsigned char>(name[i++])));
    if (w.empty()) break;
    const auto is = [&](std::initializer_list<std::string_view> words) {
      return std::find(words.begin(), words.end(), w) != words.end();
    };
    const auto digits_after = [&](std::string_view prefix) {
      return w.starts_with(prefix) &&
             std::all_of(w.begin() + prefix.size(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (digits_after("gpu") || is({"nvml", "dcgm", "nvidia"})) return Subsystem::gpu;
    if (is({"infiniband", "rdma", "nvlink", "pcie"})) return Subsystem::interconnect;
    if (is({"rapl", "hwmon", "thermal", "temp", "temperature", "power", "energy", "watts", "joules", "fan",
            "celsius"}))
      return Subsystem::power_thermal;
    if (w.starts_with("disk") || digits_after("nvme") || is({"block", "filesystem", "iops"})) return Subsystem::storage;
    if (digits_after("eth") || is({"network", "net", "netstat", "sockstat", "tcp", "udp", "icmp", "packets"}))
      return Subsystem::network;
    if (w.starts_with("mem") || is({"memory", "vmstat", "swap", "oom", "shmem"})) return Subsystem::memory;
    if (digits_after("cpu") || is({"load", "loadavg", "perf", "sched", "turbostat", "instructions", "cycles"}))
      return Subsystem::cpu;
  }
  return Subsystem::system;
}

}  // namespace reveal
