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

}  // namespace
}  // namespace reveal
