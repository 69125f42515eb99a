#include <gtest/gtest.h>

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

}  // namespace
}  // namespace reveal
