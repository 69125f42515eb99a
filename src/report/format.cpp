#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "reveal/report.h"

namespace reveal {

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
