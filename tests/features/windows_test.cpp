#include <cmath>

#include <gtest/gtest.h>

#include "reveal/features.h"

namespace reveal {
namespace {

TEST(Windows, StatsOverSlidingWindows) {
  Series s;
  s.channels = {{"a", "x", Kind::gauge, Subsystem::cpu}};
  s.t_s = {0, 1, 2, 3, 4};
  s.values = Matrix(5, 1);
  const double v[] = {1, 2, 3, 10, std::nan("")};
  for (int i = 0; i < 5; ++i) s.values(i, 0) = v[i];
  Windows w = make_windows(s, {3, 1});
  ASSERT_EQ(w.first_row.size(), 3u);
  EXPECT_DOUBLE_EQ(w.at(0, 0, kMean), 2.0);
  EXPECT_NEAR(w.at(0, 0, kStd), std::sqrt(2.0 / 3.0), 1e-12);
  EXPECT_DOUBLE_EQ(w.at(0, 0, kMin), 1.0);
  EXPECT_DOUBLE_EQ(w.at(0, 0, kMax), 3.0);
  EXPECT_DOUBLE_EQ(w.at(0, 0, kSlope), 1.0);
  EXPECT_DOUBLE_EQ(w.at(1, 0, kSlope), 4.0);  // 2,3,10 at t=1,2,3
  EXPECT_DOUBLE_EQ(w.at(2, 0, kMean), 6.5);    // NaN skipped
  EXPECT_DOUBLE_EQ(w.t_end_s[2], 4.0);
}

TEST(Windows, StrideAndTooShort) {
  Series s;
  s.channels = {{"a", "x", Kind::gauge, Subsystem::cpu}};
  s.t_s = {0, 1, 2, 3, 4, 5, 6};
  s.values = Matrix(7, 1, 1.0);
  EXPECT_EQ(make_windows(s, {3, 2}).first_row.size(), 3u);
  s.t_s.resize(2);
  s.values = Matrix(2, 1, 1.0);
  EXPECT_EQ(make_windows(s, {3, 1}).first_row.size(), 0u);
}

TEST(Windows, AllNaNWindowIsNaN) {
  Series s;
  s.channels = {{"a", "x", Kind::gauge, Subsystem::cpu}};
  s.t_s = {0, 1, 2};
  s.values = Matrix(3, 1, std::nan(""));
  Windows w = make_windows(s, {3, 1});
  EXPECT_TRUE(std::isnan(w.at(0, 0, kMean)));
}

// The trailing mean, min and max (kTrail...) cover the `trail` rows ending with the window's
// last row; NaN while the series holds fewer, or when fewer than half of them are finite.
TEST(Windows, TrailingStatsEndWithTheWindow) {
  Series s;
  s.channels = {{"a", "x", Kind::gauge, Subsystem::cpu}};
  const double v[] = {1, 2, 3, 4, 5, 6, std::nan(""), std::nan(""), std::nan(""), 10};
  s.values = Matrix(10, 1);
  for (int i = 0; i < 10; ++i) {
    s.t_s.push_back(i);
    s.values(i, 0) = v[i];
  }
  const Windows w = make_windows(s, {.length = 2, .stride = 1, .trail = 4});
  EXPECT_EQ(w.trail, 4u);
  ASSERT_EQ(w.first_row.size(), 9u);
  EXPECT_TRUE(std::isnan(w.at(0, 0, kTrail)));  // rows 0-1: the trail would start before row 0
  EXPECT_TRUE(std::isnan(w.at(1, 0, kTrailMin)));
  EXPECT_DOUBLE_EQ(w.at(2, 0, kTrail), 2.5);    // rows 0-3
  EXPECT_DOUBLE_EQ(w.at(2, 0, kTrailMin), 1.0);
  EXPECT_DOUBLE_EQ(w.at(2, 0, kTrailMax), 4.0);
  EXPECT_DOUBLE_EQ(w.at(2, 0, kMean), 3.5);     // the window's own rows 2-3
  EXPECT_DOUBLE_EQ(w.at(5, 0, kTrail), 5.0);    // rows 3-6: 4, 5, 6 (NaN skipped)
  EXPECT_TRUE(std::isnan(w.at(7, 0, kTrail)));  // rows 5-8: one finite of four
  EXPECT_TRUE(std::isnan(w.at(7, 0, kMean)));   // rows 7-8: no finite value
  EXPECT_TRUE(std::isnan(w.at(8, 0, kTrail)));  // rows 6-9: 10 alone
  EXPECT_DOUBLE_EQ(w.at(8, 0, kMean), 10.0);
}

TEST(Windows, ATrailNoLongerThanTheWindowIsTheWindow) {
  Series s;
  s.channels = {{"a", "x", Kind::gauge, Subsystem::cpu}};
  s.t_s = {0, 1, 2, 3};
  s.values = Matrix(4, 1);
  for (int i = 0; i < 4; ++i) s.values(i, 0) = i * i;
  const Windows w = make_windows(s, {.length = 3, .stride = 1, .trail = 0});
  EXPECT_EQ(w.trail, 3u);
  for (std::size_t k = 0; k < w.first_row.size(); ++k) {
    EXPECT_DOUBLE_EQ(w.at(k, 0, kTrail), w.at(k, 0, kMean));
    EXPECT_DOUBLE_EQ(w.at(k, 0, kTrailMin), w.at(k, 0, kMin));
    EXPECT_DOUBLE_EQ(w.at(k, 0, kTrailMax), w.at(k, 0, kMax));
  }
}

}  // namespace
}  // namespace reveal
