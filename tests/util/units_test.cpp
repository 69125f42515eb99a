#include <gtest/gtest.h>

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

}  // namespace
}  // namespace reveal
