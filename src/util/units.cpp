#include "reveal/units.h"

#include <charconv>
#include <cmath>
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

}  // namespace reveal
