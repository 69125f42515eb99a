#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reveal/units.h"

namespace reveal {
namespace {
using namespace std::chrono_literals;

TEST(Units, ParseDuration) {
  EXPECT_EQ(parse_duration("1s"), std::chrono::nanoseconds(1s));
  EXPECT_EQ(parse_duration("500ms"), std::chrono::nanoseconds(500ms));
  EXPECT_EQ(parse_duration("2m"), std::chrono::nanoseconds(120s));
  EXPECT_EQ(parse_duration("1.5"), std::chrono::nanoseconds(1500ms));
  EXPECT_EQ(parse_duration("1h"), std::chrono::nanoseconds(3600s));
  for (const char* bad : {"", "s", "-1s", "1x", "nan", "inf", "1e30s", "1 s"})
    EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
}

TEST(Units, ParseSize) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("10B"), 10u);
  EXPECT_EQ(parse_size("500kB"), 500'000u);
  EXPECT_EQ(parse_size("2MB"), 2'000'000u);
  EXPECT_EQ(parse_size("3GB"), 3'000'000'000u);
  EXPECT_EQ(parse_size("1KiB"), 1024u);
  EXPECT_EQ(parse_size("256MiB"), 256ull << 20);
  EXPECT_EQ(parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(parse_size("2TiB"), 2ull << 40);
  EXPECT_EQ(parse_size("1.5GiB"), 3ull << 29);
  EXPECT_EQ(parse_size("0.5kB"), 500u);
  EXPECT_EQ(parse_size("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parse_size("1EiB"), 1ull << 60);
  EXPECT_EQ(parse_size("15EiB"), 15ull << 60);
  EXPECT_EQ(parse_size("2PB"), 2'000'000'000'000'000u);
  EXPECT_EQ(parse_size("1.5PiB"), 3ull << 49);
  EXPECT_EQ(parse_size("15.5EiB"), 31ull << 59);  // above 2^63: no signed rounding on the way
  for (const char* bad : {"", "MiB", "-1", "-1MiB", "+5", "1.5", "0.1B", "1 MiB", " 1", "1mib", "1Mi", "1KB",
                          "1kiB", "1.", ".5MiB", "1.2.3", "18446744073709551616", "17179869184GiB", "16EiB", "16.5EiB", "18.5EB", "1e3",
                          "0x10", "5MiB "})
    EXPECT_FALSE(parse_size(bad).has_value()) << bad;
}

TEST(Units, ParseUtcTime) {
  EXPECT_EQ(parse_utc_time("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_utc_time("2024/01/31 12:00:00.123"), 1'706'702'400'123'000'000);
  EXPECT_EQ(parse_utc_time("2024-01-31T13:00:00+01:00"), 1'706'702'400'000'000'000);
  EXPECT_EQ(parse_utc_time("2024-02-29T00:00:00Z"), 1'709'164'800'000'000'000);
  EXPECT_FALSE(parse_utc_time("2023-02-29T00:00:00Z"));
  EXPECT_FALSE(parse_utc_time("2024-01-31"));
  EXPECT_FALSE(parse_utc_time("2024-13-01T00:00:00Z"));
  EXPECT_FALSE(parse_utc_time("2024-01-31T24:00:00Z"));
  EXPECT_FALSE(parse_utc_time("2024-01-31T12:00:00.Z"));
  EXPECT_FALSE(parse_utc_time("2024-01-31T12:00:00Zjunk"));
}

TEST(Units, FormatValueAndUtc) {
  EXPECT_EQ(format_value(41.04, "%"), "41.0 %");
  EXPECT_EQ(format_value(3 * 1024 * 1024, "bytes/s"), "3.0 MiB/s");
  EXPECT_EQ(format_value(2048, "kB"), "2.0 MiB");
  EXPECT_EQ(format_value(7, "count"), "7");
  EXPECT_EQ(format_value(std::nan(""), "%"), "n/a");
  EXPECT_EQ(format_utc(0), "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace reveal
