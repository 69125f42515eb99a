#include "reveal/robust_z.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace reveal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Matrix column(const std::vector<double>& v) {
  Matrix m(v.size(), 1);
  for (std::size_t i = 0; i < v.size(); ++i) m(i, 0) = v[i];
  return m;
}

TEST(RobustZHelpers, MedianOddEvenAndNaN) {
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{7}), 7.0);
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{1, kNaN, 3}), 2.0);
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{kNaN, 10, kNaN, 2, 6, 100}), 8.0);
  EXPECT_TRUE(std::isnan(median_of(std::vector<double>{})));
  EXPECT_TRUE(std::isnan(median_of(std::vector<double>{kNaN, kNaN})));
}

// Large inputs take a sampled-bracket selection (robust_z.cpp); it must give exactly the
// type-7 quantile of the sorted values, with runs of ties, trends, outliers and every rank.
TEST(RobustZHelpers, LargeQuantilesEqualTheSortedDefinitionExactly) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> z(0.0, 1.0);
  const auto reference = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double h = static_cast<double>(v.size() - 1) * q;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    const double frac = h - static_cast<double>(lo);
    if (lo + 1 >= v.size() || frac == 0.0) return v[lo];
    return v[lo] + frac * (v[lo + 1] - v[lo]);
  };
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n = 4000 + static_cast<std::size_t>(rng() % 30000);
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) {
      switch (trial % 6) {
        case 0: v[i] = z(rng); break;                                        // continuous
        case 1: v[i] = static_cast<double>(rng() % 5); break;                // a few values
        case 2: v[i] = static_cast<double>(i);  break;                       // sorted
        case 3: v[i] = static_cast<double>(n - i) + 0.5 * z(rng); break;     // reverse trend
        case 4: v[i] = rng() % 10 < 7 ? 3.0 : z(rng); break;                 // 70 % one tie
        default: v[i] = rng() % 100 == 0 ? 1e6 * z(rng) : z(rng); break;    // outliers
      }
    }
    for (double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0})
      EXPECT_EQ(quantile_of(v, q), reference(v, q)) << "trial " << trial << " n " << n << " q " << q;
    EXPECT_EQ(median_of(v), reference(v, 0.5));
    // In place, v keeps its values (RobustZ::fit takes several quantiles of one buffer).
    std::vector<double> w = v;
    EXPECT_EQ(median_in_place(w), reference(v, 0.5));
    std::sort(w.begin(), w.end());
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(w, sorted);
  }
}

TEST(RobustZHelpers, Mad) {
  // |x − 3| = {2, 1, 0, 1, 97} → median 1: the outlier does not move it.
  EXPECT_DOUBLE_EQ(mad_of(std::vector<double>{1, 2, 3, 4, 100}, 3.0), 1.0);
  // Even count: |x − 2.5| = {1.5, 0.5, 0.5, 1.5} → 1.
  EXPECT_DOUBLE_EQ(mad_of(std::vector<double>{1, 2, 3, 4, kNaN}, 2.5), 1.0);
  EXPECT_DOUBLE_EQ(mad_of(std::vector<double>{5, 5, 5}, 5.0), 0.0);
  EXPECT_TRUE(std::isnan(mad_of(std::vector<double>{1, 2}, kNaN)));
  EXPECT_TRUE(std::isnan(mad_of(std::vector<double>{kNaN}, 0.0)));
}

TEST(RobustZHelpers, QuantileLinearLikeNumpy) {
  const std::vector<double> v{4, 1, 3, 2};  // unsorted on purpose
  // numpy.quantile([1,2,3,4], q): h = 3q.
  EXPECT_DOUBLE_EQ(quantile_of(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile_of(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(quantile_of(v, 0.5), 2.5);
  EXPECT_NEAR(quantile_of(v, 0.9), 3.7, 1e-12);
  EXPECT_NEAR(quantile_of(v, 0.1), 1.3, 1e-12);
  EXPECT_DOUBLE_EQ(quantile_of(std::vector<double>{50, 10, 40, 20, 30}, 0.25), 20.0);
  EXPECT_NEAR(quantile_of(std::vector<double>{kNaN, 1, 2, kNaN, 3, 4}, 0.9), 3.7, 1e-12);
  EXPECT_DOUBLE_EQ(quantile_of(std::vector<double>{9}, 0.3), 9.0);
  EXPECT_TRUE(std::isnan(quantile_of(std::vector<double>{kNaN}, 0.5)));
  EXPECT_TRUE(std::isnan(quantile_of(std::vector<double>{}, 0.5)));
}

TEST(RobustZ, ZOfKnownValueUsesMadScale) {
  RobustZ rz;
  rz.fit(column({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  // median 5.5; MAD 2.5 → 1.4826·2.5 = 3.7065 beats (9.1 − 1.9)/2.563 = 2.809 and the floors.
  ASSERT_EQ(rz.n_features(), 1u);
  EXPECT_DOUBLE_EQ(rz.median()[0], 5.5);
  EXPECT_NEAR(rz.scale()[0], 1.4826 * 2.5, 1e-12);
  std::vector<double> out(1);
  const std::vector<double> x{20.0};
  rz.z(x, out);
  EXPECT_NEAR(out[0], 14.5 / (1.4826 * 2.5), 1e-12);
  const std::vector<double> at_median{5.5};
  rz.z(at_median, out);
  EXPECT_DOUBLE_EQ(out[0], 0.0);
}

TEST(RobustZ, InterDecileFloorWhenMadIsZero) {
  // Over half the values equal the median, so MAD = 0, but the tails carry spread, scattered
  // over 4 separate stretches (a sparse channel).
  RobustZ rz;
  rz.fit(column({-5, 0, 0, 5, 0, -5, 0, 0, 5, 0}));
  // Sorted: −5 −5 0 0 0 0 0 0 5 5. q90: h = 8.1 → 5; q10: h = 0.9 → −5 → 10/2.563.
  EXPECT_DOUBLE_EQ(rz.median()[0], 0.0);
  EXPECT_NEAR(rz.scale()[0], 10.0 / 2.563, 1e-12);
  // Interpolated inter-decile range (sorted index i holds v[i]):
  RobustZ wide;
  wide.fit(column({1, 5, 2, 5, 3, 5, 4, 5, 5, 5, 5, 5, 6, 5, 7, 5, 8, 5, 9, 5}));
  // median 5, |x−5| has 12 zeros of 20 → MAD 0; sorted 1 2 3 4 5×12 6 7 8 9:
  // q90: h = 17.1 → 7 + 0.1·(8 − 7) = 7.1, q10: h = 1.9 → 2 + 0.9·(3 − 2) = 2.9.
  EXPECT_NEAR(wide.scale()[0], (7.1 - 2.9) / 2.563, 1e-12);
}

// A level constant but for one sustained step, in one recording judged against itself
// (steps_stand_out), is not a sparse channel: the inter-decile range would span the step itself
// and cap its z near 2.6. Without the option (references of several recordings) it does.
TEST(RobustZ, StepsOfAConstantLevelStandOutInOneRecording) {
  RobustZOptions self;
  self.steps_stand_out = true;
  std::vector<double> step(20, 10.0);
  for (std::size_t i = 8; i < 14; ++i) step[i] = 132.0;  // 6 of 20 rows: one stretch
  RobustZ rz(self);
  rz.fit(column(step));
  EXPECT_DOUBLE_EQ(rz.median()[0], 10.0);
  EXPECT_DOUBLE_EQ(rz.scale()[0], 0.1);  // the 1 % relative floor only
  std::vector<double> out(1);
  const std::vector<double> x{132.0};
  rz.z(x, out);
  EXPECT_NEAR(out[0], 1220.0, 1e-9);

  std::vector<double> paused = step;
  paused[11] = 10.0;  // the step pauses once: two stretches, still a step
  RobustZ two(self);
  two.fit(column(paused));
  EXPECT_DOUBLE_EQ(two.scale()[0], 0.1);

  std::vector<double> scattered(20, 10.0);  // the same values in three stretches: sparse
  for (std::size_t i : {2, 3, 9, 10, 16, 17}) scattered[i] = 132.0;
  RobustZ sparse(self);
  sparse.fit(column(scattered));
  EXPECT_NEAR(sparse.scale()[0], (132.0 - 10.0) / 2.563, 1e-9);

  RobustZ several;  // default: a stretch may be a whole normal run at another level
  several.fit(column(step));
  EXPECT_NEAR(several.scale()[0], (132.0 - 10.0) / 2.563, 1e-9);
}

TEST(RobustZ, RelativeAndAbsoluteFloorsOnConstantColumns) {
  Matrix m(20, 2);
  for (std::size_t i = 0; i < 20; ++i) {
    m(i, 0) = 100.0;  // constant, non-zero: scale = 1 % of 100 = 1
    m(i, 1) = 0.0;    // constant zero: scale = abs_floor
  }
  RobustZ rz;
  rz.fit(m);
  EXPECT_DOUBLE_EQ(rz.scale()[0], 1.0);
  EXPECT_DOUBLE_EQ(rz.scale()[1], 1e-9);
  std::vector<double> out(2);
  const std::vector<double> x{103.0, 2e-9};
  rz.z(x, out);
  EXPECT_NEAR(out[0], 3.0, 1e-12);
  EXPECT_NEAR(out[1], 2.0, 1e-9);

  RobustZ custom(RobustZOptions{.rel_floor = 0.1, .abs_floor = 0.5});
  custom.fit(m);
  EXPECT_DOUBLE_EQ(custom.scale()[0], 10.0);
  EXPECT_DOUBLE_EQ(custom.scale()[1], 0.5);
}

TEST(RobustZ, NaNHandling) {
  Matrix m(5, 3);
  const double c0[] = {1, kNaN, 3, kNaN, 2};  // NaN ignored: median 2
  for (std::size_t i = 0; i < 5; ++i) {
    m(i, 0) = c0[i];
    m(i, 1) = kNaN;  // all NaN: no evidence
    m(i, 2) = static_cast<double>(i);
  }
  RobustZ rz;
  rz.fit(m);
  EXPECT_DOUBLE_EQ(rz.median()[0], 2.0);
  EXPECT_TRUE(std::isnan(rz.median()[1]));
  EXPECT_TRUE(std::isfinite(rz.scale()[1]));
  std::vector<double> out(3, 123.0);
  const std::vector<double> x{kNaN, 1e6, kNaN};
  rz.z(x, out);
  EXPECT_EQ(out[0], 0.0);
  EXPECT_EQ(out[1], 0.0);
  EXPECT_EQ(out[2], 0.0);
  const std::vector<double> y{kNaN, kNaN, 2.0};
  rz.z(y, out);
  EXPECT_EQ(out[1], 0.0);
  EXPECT_DOUBLE_EQ(out[2], 0.0);
}

TEST(RobustZ, RejectsSizeMismatch) {
  RobustZ rz;
  rz.fit(column({1, 2, 3}));
  std::vector<double> out(2);
  const std::vector<double> x{1.0, 2.0};
  EXPECT_THROW(rz.z(x, out), std::invalid_argument);
}

}  // namespace
}  // namespace reveal
