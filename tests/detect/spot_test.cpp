#include "reveal/spot.h"

#include <cmath>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

namespace reveal {
namespace {

std::vector<double> draw(std::size_t n, std::uint64_t seed, double (*inverse_cdf)(double)) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> x(n);
  for (auto& v : x) v = inverse_cdf(1.0 - u(rng));  // 1 − u ∈ (0, 1]
  return x;
}

// Survival S(x) = e^−x: the tail is exponential (γ = 0) and the 1e-5 quantile is ln 1e5.
TEST(SpotTail, ExponentialTailAndAnExtrapolatedQuantile) {
  const auto x = draw(20000, 1, [](double s) { return -std::log(s); });
  SpotTail t;
  t.fit(x);
  EXPECT_NEAR(t.gamma(), 0.0, 0.12);
  EXPECT_NEAR(t.sigma(), 1.0, 0.15);
  EXPECT_NEAR(t.threshold(1e-5), std::log(1e5), 0.12 * std::log(1e5));
  EXPECT_NEAR(t.tail_probability(t.threshold(1e-5)), 1e-5, 1e-9);
  EXPECT_NEAR(t.tail_probability(std::log(10.0)), 0.1, 0.01);  // below t: empirical
}

// A heavy (Pareto-like) tail: GPD with γ = 0.5, σ = 1 from 0: S(x) = (1 + x/2)^−2.
TEST(SpotTail, HeavyTailShapeIsRecovered) {
  const auto x = draw(20000, 2, [](double s) { return 2.0 * (std::pow(s, -0.5) - 1.0); });
  SpotTail t;
  t.fit(x);
  EXPECT_NEAR(t.gamma(), 0.5, 0.15);
  const double truth = 2.0 * (std::pow(1e-4, -0.5) - 1.0);  // 198
  EXPECT_NEAR(t.threshold(1e-4), truth, 0.35 * truth);
}

// A bounded tail: GPD with γ = −0.3, σ = 1 from 0, end point 1/0.3 ≈ 3.33 (the maximum
// likelihood estimate is regular for γ > −0.5; uniform data, γ = −1, is not).
TEST(SpotTail, BoundedTailHasAnEndPoint) {
  const auto x = draw(20000, 3, [](double s) { return (1.0 - std::pow(s, 0.3)) / 0.3; });
  SpotTail t;
  t.fit(x);
  EXPECT_NEAR(t.gamma(), -0.3, 0.15);
  EXPECT_LE(t.threshold(1e-6), 3.6);
  EXPECT_EQ(t.tail_probability(5.0), 0.0);
}

// A small reference (the self reference of a 2-minute run) still gets a usable fit.
TEST(SpotTail, SmallReferenceKeepsTenPeaks) {
  const auto x = draw(120, 4, [](double s) { return -std::log(s); });
  SpotTail t;
  t.fit(x);
  EXPECT_GE(t.peaks(), 10u);
  EXPECT_GT(t.threshold(1e-4), t.initial_threshold());
  EXPECT_TRUE(std::isfinite(t.threshold(1e-5)));
}

TEST(SpotTail, BadReferencesThrow) {
  SpotTail t;
  EXPECT_THROW(t.fit(std::vector<double>(5, 1.0)), std::invalid_argument);
  EXPECT_THROW(t.fit(std::vector<double>(100, 1.0)), std::invalid_argument);  // constant
  std::vector<double> with_nan(100, std::nan(""));
  EXPECT_THROW(t.fit(with_nan), std::invalid_argument);
}

}  // namespace
}  // namespace reveal
