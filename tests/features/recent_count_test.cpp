// Events counted over a sliding window (src/features/recent_count.h).
#include "features/recent_count.h"

#include <cmath>

#include <gtest/gtest.h>

namespace reveal::features {
namespace {

// A drop every 2 s sampled at 1 Hz (rates 1, 0, 1, 0 ...) reads as a level that holds, and a
// single drop reads 1 for the length of the window.
TEST(RecentCount, AlternatingRatesBecomeALevelThatHolds) {
  RecentCount c(60.0);
  EXPECT_EQ(c.push(0, std::nan("")), 0) << "the first row has no rate";
  double v = 0;
  for (int t = 1; t <= 30; ++t) v = c.push(t, t % 2 ? 1.0 : 0.0);
  EXPECT_NEAR(v, 15.0, 1e-9);
  for (int t = 31; t <= 60; ++t) v = c.push(t, t % 2 ? 1.0 : 0.0);
  EXPECT_NEAR(v, 30.0, 1e-9) << "a minute of drops every 2 s";
  double lo = 1e9;
  for (int t = 61; t <= 80; ++t) lo = std::min(lo, c.push(t, t % 2 ? 1.0 : 0.0));
  EXPECT_NEAR(lo, 30.0, 1e-9) << "the level holds: its minimum never falls to the single-sample 0";
  for (int t = 81; t <= 141; ++t) v = c.push(t, 0.0);
  EXPECT_EQ(v, 0.0) << "all left the minute";

  RecentCount one(20.0);
  EXPECT_EQ(one.window_s(), 20.0);
  one.push(0, 0);
  EXPECT_NEAR(one.push(1, 1.0), 1.0, 1e-12);
  EXPECT_NEAR(one.push(20, 0.0), 1.0, 1e-12) << "still inside the window";
  EXPECT_EQ(one.push(21, 0.0), 0.0);
}

// Rates over uneven intervals count rate × Δt; NaN (a gap) counts none; a row not after the
// previous one adds nothing; at 100 Hz the ring keeps the newest rows (a lower bound).
TEST(RecentCount, UnevenIntervalsGapsAndTimeSteps) {
  RecentCount c(60.0);
  c.push(10, 0);
  EXPECT_NEAR(c.push(12, 0.5), 1.0, 1e-12);   // 0.5/s over 2 s
  EXPECT_NEAR(c.push(13, std::nan("")), 1.0, 1e-12);
  EXPECT_NEAR(c.push(12.5, 4.0), 1.0, 1e-12) << "not after the previous row";
  EXPECT_NEAR(c.push(13.5, 2.0), 2.0, 1e-12);  // 2/s over 0.5 s from 13
  RecentCount fast(60.0);
  double v = 0;
  for (int i = 1; i <= 6000; ++i) v = fast.push(i * 0.01, 1.0);  // one event a second for 60 s
  EXPECT_GT(v, 9.0);
  EXPECT_LE(v, 60.0 + 1e-9);
}

}  // namespace
}  // namespace reveal::features
