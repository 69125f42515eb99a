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

// Reveal's fusion fits conservative tails: with min_gamma = 0 a bounded sample gets the
// exponential tail (no end point just above the reference), which puts the 1e-6 quantile
// beyond the true end point rather than inside it.
TEST(SpotTail, MinGammaZeroKeepsTheTailUnbounded) {
  const auto x = draw(20000, 3, [](double s) { return (1.0 - std::pow(s, 0.3)) / 0.3; });
  SpotTail t({.min_gamma = 0});
  t.fit(x);
  EXPECT_EQ(t.gamma(), 0.0);
  EXPECT_GT(t.threshold(1e-6), 3.34);
  EXPECT_GT(t.tail_probability(5.0), 0.0);
}

// The ten peaks of a small reference (46 windows: a 2-minute run's self reference) rarely say
// anything about the tail's shape: the plain MLE often picks a heavy tail from exponential
// data, whose 1e-6 quantile then lies far out. A shape must pass the likelihood-ratio test.
TEST(SpotTail, ShapeNeedsEvidenceOnSmallReferences) {
  int heavy_plain = 0, heavy_tested = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const auto x = draw(46, 100 + seed, [](double s) { return -std::log(s); });
    SpotTail plain({.min_gamma = 0, .shape_evidence = 0});
    SpotTail tested({.min_gamma = 0});
    plain.fit(x);
    tested.fit(x);
    heavy_plain += plain.gamma() > 0.3;
    heavy_tested += tested.gamma() > 0.3;
    EXPECT_LE(tested.threshold(1e-6), plain.threshold(1e-6) + 1e-9) << "seed " << seed;
  }
  EXPECT_GE(heavy_plain, 20);
  EXPECT_LE(heavy_tested * 3, heavy_plain);
}

// Tied peaks (a stream that moves in coarse steps) drive the unconstrained MLE to a huge γ
// with a tiny σ; below min_sigma the tail is the exponential at the floor instead.
TEST(SpotTail, ScaleBelowTheFloorFallsBackToTheExponential) {
  std::vector<double> x;
  for (int i = 0; i < 100; ++i) x.push_back(5.0 + 0.01 * (i % 7));
  for (double v : {6.8, 6.8, 6.8, 6.8, 6.9, 6.9, 7.6, 7.6, 7.6, 8.3}) x.push_back(v);
  SpotTail free_fit;
  free_fit.fit(x);
  SpotTail floored({.min_gamma = 0, .min_sigma = 0.5});
  floored.fit(x);
  EXPECT_EQ(floored.gamma(), 0.0);
  EXPECT_GE(floored.sigma(), 0.5);
  // An exponential from t with σ ≥ 0.5: the 1e-5 quantile is at least t + 0.5·ln(peaks/(n·1e-5)).
  const double r = double(floored.peaks()) / (double(floored.n()) * 1e-5);
  EXPECT_GE(floored.threshold(1e-5), floored.initial_threshold() + 0.5 * std::log(r) - 1e-9);
  EXPECT_LT(floored.threshold(1e-5), 1e3);
}

// ln P(X ≥ x) agrees with the probability where both are representable and, for an unbounded
// tail, stays finite far beyond where the probability underflows to 0.
TEST(SpotTail, LogTailProbabilityDoesNotUnderflow) {
  const auto x = draw(20000, 1, [](double s) { return -std::log(s); });
  SpotTail t({.min_gamma = 0});
  t.fit(x);
  for (double v : {0.5, 3.0, 10.0, 30.0})
    EXPECT_NEAR(t.log_tail_probability(v), std::log(t.tail_probability(v)), 1e-9) << v;
  EXPECT_EQ(t.tail_probability(2000.0), 0.0);
  EXPECT_TRUE(std::isfinite(t.log_tail_probability(2000.0)));
  EXPECT_LT(t.log_tail_probability(2000.0), -1000.0);
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
