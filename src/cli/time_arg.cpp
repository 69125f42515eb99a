#include "time_arg.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "commands.h"
#include "reveal/units.h"

namespace reveal::cli {
namespace {

constexpr const char* kIsoExample = "2026-11-30T21:00:00Z";

// A non-negative duration or nullopt ("" is malformed).
std::optional<std::int64_t> duration_ns(std::string_view s) {
  const auto d = parse_duration(s);
  if (!d) return std::nullopt;
  return d->count();
}

}  // namespace

std::int64_t parse_duration_arg(const std::string& flag, const std::string& text, std::int64_t min_ns) {
  const auto d = duration_ns(text);
  if (!d || *d < min_ns) {
    const std::string at_least = min_ns >= 1'000'000'000 ? " of at least " + std::to_string(min_ns / 1'000'000'000) + "s"
                                 : min_ns >= 1'000'000   ? " of at least " + std::to_string(min_ns / 1'000'000) + "ms"
                                 : min_ns > 0            ? " above 0"
                                                         : "";
    throw UsageError(flag + ": '" + text + "' is not a duration" + at_least + " (e.g. 500ms, 90s, 2m, 1h)");
  }
  return *d;
}

std::uint64_t parse_size_arg(const std::string& flag, const std::string& text, std::uint64_t min_bytes) {
  const auto s = parse_size(text);
  if (!s) throw UsageError(flag + ": '" + text + "' is not a size (e.g. 4096, 64KiB, 500MB, 1GiB)");
  if (*s < min_bytes)
    throw UsageError(flag + ": '" + text + "' is below the minimum of " + std::to_string(min_bytes) + " bytes");
  return *s;
}

std::int64_t parse_wall_time(const std::string& flag, const std::string& text, std::int64_t now_ns) {
  const auto bad = [&] {
    return UsageError(flag + ": '" + text + "' is not a time (Unix seconds, " + kIsoExample + ", -10m or now)");
  };
  std::string_view s = text;
  if (s == "now") return now_ns;
  if (s.starts_with("now-")) s.remove_prefix(3);
  if (s.starts_with("-")) {
    const auto d = duration_ns(s.substr(1));
    if (!d) throw bad();
    return now_ns - *d;
  }
  if (!s.empty() && s.find_first_not_of("0123456789.") == std::string_view::npos) {
    char* end = nullptr;
    const double secs = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !(secs >= 0) || secs > 1e11) throw bad();
    return std::llround(secs * 1e9);
  }
  if (const auto t = parse_utc_time(s)) return *t;
  throw bad();
}

std::int64_t parse_run_time(const std::string& flag, const std::string& text, std::int64_t first_ns,
                            std::int64_t last_ns) {
  std::string_view s = text;
  const bool from_end = s.starts_with("-");
  if (from_end || s.starts_with("+")) s.remove_prefix(1);
  if (const auto d = duration_ns(s); d && !s.empty() && s.front() != '+' && s.front() != '-') {
    // Saturated: an offset beyond the int64 range (about 292 years) is before or after any sample.
    std::int64_t t = 0;
    if (from_end) return __builtin_sub_overflow(last_ns, *d, &t) ? INT64_MIN : t;
    return __builtin_add_overflow(first_ns, *d, &t) ? INT64_MAX : t;
  }
  if (!from_end && s.size() == text.size())
    if (const auto t = parse_utc_time(s)) return *t;
  throw UsageError(flag + ": '" + text + "' is not a time in the run (an offset from its start like 30s or +2m, " +
                   "from its end like -30s, or " + kIsoExample + ")");
}

std::int64_t parse_absolute_time(const std::string& flag, const std::string& text) {
  const auto t = parse_utc_time(text);
  if (!t) throw UsageError(flag + ": '" + text + "' is not a time like " + kIsoExample + " (or with an offset, +01:00)");
  return *t;
}

}  // namespace reveal::cli
