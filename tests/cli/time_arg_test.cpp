// src/cli/time_arg.h: the time, duration and size flags every subcommand shares.
#include "cli/time_arg.h"

#include <gtest/gtest.h>

#include "cli/commands.h"

namespace reveal::cli {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kNow = 1'764'536'400 * kS;  // 2025-11-30T21:00:00Z

// The UsageError's message, or "" when `f` does not throw one.
template <class F>
std::string usage_error(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(TimeArg, Durations) {
  EXPECT_EQ(parse_duration_arg("--settle", "90s"), 90 * kS);
  EXPECT_EQ(parse_duration_arg("--settle", "2m"), 120 * kS);
  EXPECT_EQ(parse_duration_arg("--settle", "500ms"), kS / 2);
  EXPECT_EQ(parse_duration_arg("--settle", "1h"), 3600 * kS);
  EXPECT_EQ(parse_duration_arg("--settle", "0s"), 0);
  EXPECT_EQ(usage_error([] { parse_duration_arg("--step", "soon"); }),
            "--step: 'soon' is not a duration (e.g. 500ms, 90s, 2m, 1h)");
  EXPECT_EQ(usage_error([] { parse_duration_arg("--interval", "500us", 1'000'000); }),
            "--interval: '500us' is not a duration of at least 1ms (e.g. 500ms, 90s, 2m, 1h)");
  EXPECT_NE(usage_error([] { parse_duration_arg("--duration", "0s", 1); }), "");
  EXPECT_NE(usage_error([] { parse_duration_arg("--duration", "-5s"); }), "");
}

TEST(TimeArg, Sizes) {
  EXPECT_EQ(parse_size_arg("--store-max-size", "1GiB"), 1ull << 30);
  EXPECT_EQ(parse_size_arg("--store-max-size", "500MB"), 500'000'000u);
  EXPECT_EQ(parse_size_arg("--store-max-size", "64KiB"), 65536u);
  EXPECT_EQ(parse_size_arg("--store-max-size", "4096"), 4096u);
  EXPECT_EQ(usage_error([] { parse_size_arg("--store-max-size", "lots"); }),
            "--store-max-size: 'lots' is not a size (e.g. 4096, 64KiB, 500MB, 1GiB)");
  EXPECT_EQ(usage_error([] { parse_size_arg("--store-max-size", "1KiB", 1 << 20); }),
            "--store-max-size: '1KiB' is below the minimum of 1048576 bytes");
}

TEST(TimeArg, WallClock) {
  EXPECT_EQ(parse_wall_time("--end", "now", kNow), kNow);
  EXPECT_EQ(parse_wall_time("--start", "-10m", kNow), kNow - 600 * kS);
  EXPECT_EQ(parse_wall_time("--start", "now-90s", kNow), kNow - 90 * kS);
  EXPECT_EQ(parse_wall_time("--start", "1764536400", 0), kNow);
  EXPECT_EQ(parse_wall_time("--start", "1764536400.5", 0), kNow + kS / 2);
  EXPECT_EQ(parse_wall_time("--start", "2025-11-30T21:00:00Z", 0), kNow);
  EXPECT_EQ(parse_wall_time("--start", "2025-11-30T22:30:00+01:30", 0), kNow);
  EXPECT_EQ(parse_wall_time("--start", "2025-11-30T16:00:00-05:00", 0), kNow);
  for (const char* bad : {"", "yesterday", "-", "-10x", "now+5m", "2025-13-30T21:00:00Z", "1e3", "2025-11-30"})
    EXPECT_EQ(usage_error([&] { parse_wall_time("--start", bad, kNow); }),
              std::string("--start: '") + bad + "' is not a time (Unix seconds, 2026-11-30T21:00:00Z, -10m or now)")
        << bad;
}

TEST(TimeArg, WithinARun) {
  const std::int64_t first = kNow, last = kNow + 300 * kS;
  EXPECT_EQ(parse_run_time("--start", "30s", first, last), first + 30 * kS);
  EXPECT_EQ(parse_run_time("--start", "+2m", first, last), first + 120 * kS);
  EXPECT_EQ(parse_run_time("--start", "45", first, last), first + 45 * kS);
  EXPECT_EQ(parse_run_time("--start", "-30s", first, last), last - 30 * kS);
  // Offsets past the int64 range saturate instead of wrapping round to the other end.
  EXPECT_EQ(parse_run_time("--start", "2100000h", first, last), INT64_MAX);
  EXPECT_EQ(parse_run_time("--start", "-2100000h", -first, -last), INT64_MIN);
  EXPECT_EQ(parse_run_time("--end", "2025-11-30T21:01:00Z", first, last), first + 60 * kS);
  EXPECT_EQ(parse_run_time("--end", "2025-11-30T22:01:00+01:00", first, last), first + 60 * kS);
  for (const char* bad : {"", "soon", "+-5s", "--5s", "+", "-2025-11-30T21:01:00Z", "5 s"})
    EXPECT_EQ(usage_error([&] { parse_run_time("--start", bad, first, last); }).rfind(
                  std::string("--start: '") + bad + "' is not a time in the run", 0),
              0u)
        << bad;
}

TEST(TimeArg, Absolute) {
  EXPECT_EQ(parse_absolute_time("--start", "2025-11-30T21:00:00Z"), kNow);
  EXPECT_EQ(usage_error([] { parse_absolute_time("--start", "yesterday"); }),
            "--start: 'yesterday' is not a time like 2026-11-30T21:00:00Z (or with an offset, +01:00)");
  EXPECT_NE(usage_error([] { parse_absolute_time("--start", "30s"); }), "");
}

}  // namespace
}  // namespace reveal::cli
