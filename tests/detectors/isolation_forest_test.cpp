#include "reveal/isolation_forest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "reveal/robust_z.h"

namespace reveal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// n rows of d independent N(0,1) features.
Matrix gaussian(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  Matrix m(n, d);
  for (double& v : m.data()) v = z(rng);
  return m;
}

std::vector<double> scores(const IsolationForest& f, const Matrix& X) {
  std::vector<double> s(X.rows());
  for (std::size_t i = 0; i < X.rows(); ++i) s[i] = f.score(X.row(i));
  return s;
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t k = 0; k < idx.size(); ++k) r[idx[k]] = static_cast<double>(k);
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

// Exact harmonic number, independent of the ln + γ approximation under test.
double harmonic(int i) {
  double h = 0;
  for (int k = 1; k <= i; ++k) h += 1.0 / k;
  return h;
}

TEST(AveragePathLength, KnownValues) {
  EXPECT_EQ(average_path_length(0), 0.0);
  EXPECT_EQ(average_path_length(1), 0.0);
  EXPECT_EQ(average_path_length(2), 1.0);
  const double g = 0.5772156649;
  EXPECT_NEAR(average_path_length(3), 2 * (std::log(2.0) + g) - 4.0 / 3.0, 1e-9);  // 1.2074
  EXPECT_NEAR(average_path_length(3), 1.207392, 1e-6);
  EXPECT_NEAR(average_path_length(256), 2 * (std::log(255.0) + g) - 2 * 255.0 / 256.0, 1e-9);
  EXPECT_NEAR(average_path_length(256), 10.2448, 1e-4);
  EXPECT_NEAR(average_path_length(100), 2 * (std::log(99.0) + g) - 2 * 99.0 / 100.0, 1e-9);
}

TEST(AveragePathLength, CloseToExactHarmonicAndMonotone) {
  // ln(i) + γ undershoots H(i) by ≈ 1/(2i), so c differs from the exact form by ≈ 1/i.
  for (int n : {10, 50, 256, 1000}) {
    const double exact = 2 * harmonic(n - 1) - 2.0 * (n - 1) / n;
    EXPECT_NEAR(average_path_length(n), exact, 1.0 / (n - 1)) << "n=" << n;
  }
  double prev = average_path_length(1);
  for (int n = 2; n <= 5000; ++n) {
    const double c = average_path_length(n);
    EXPECT_GT(c, prev) << "n=" << n;
    prev = c;
  }
}

TEST(IsolationForest, FarPointScoresHighCloudScoresLow) {
  Matrix X = gaussian(1000, 2, 7);
  const std::vector<double> far{8.0, -8.0};
  X.append_row(far);
  IsolationForest f;
  f.fit(X);
  ASSERT_TRUE(f.fitted());
  ASSERT_EQ(f.n_features(), 2u);
  const double s_far = f.score(far);
  EXPECT_GT(s_far, 0.7);
  double sum = 0;
  for (std::size_t i = 0; i < 1000; ++i) {
    const double s = f.score(X.row(i));
    EXPECT_GT(s, 0.0);
    EXPECT_LE(s, 1.0);
    EXPECT_LT(s, s_far) << "row " << i;
    sum += s;
  }
  EXPECT_LT(sum / 1000, 0.55);
}

TEST(IsolationForest, IsolatedPointHasShorterPaths) {
  Matrix X = gaussian(500, 3, 11);
  const std::vector<double> far{0.0, 12.0, 0.0};
  X.append_row(far);
  IsolationForest f(IsolationForestOptions{.n_trees = 200, .max_samples = 128, .seed = 3});
  f.fit(X);
  double inlier = 0;
  for (std::size_t i = 0; i < 500; ++i) inlier += f.mean_path_length(X.row(i));
  inlier /= 500;
  const double h_far = f.mean_path_length(far);
  EXPECT_LT(h_far, inlier - 2.0);
  // Paths never exceed the height limit plus the leaf adjustment: ceil(log2 128) + c(128).
  EXPECT_LE(inlier, 7 + average_path_length(128));
  EXPECT_NEAR(f.score(far), std::exp2(-h_far / average_path_length(128)), 1e-12);
}

TEST(IsolationForest, DeterministicForSeedAndStableAcrossSeeds) {
  Matrix X = gaussian(800, 4, 5);
  for (int k = 0; k < 5; ++k) {  // a few clear outliers, far in every feature, anchor the ranking
    const double a = 5.0 + k;
    X.append_row(std::vector<double>{a, k % 2 ? a : -a, -a, k % 3 ? a : -a});
  }
  IsolationForest a(IsolationForestOptions{.seed = 1});
  IsolationForest b(IsolationForestOptions{.seed = 1});
  IsolationForest c(IsolationForestOptions{.seed = 2});
  a.fit(X);
  b.fit(X);
  c.fit(X);
  const auto sa = scores(a, X), sb = scores(b, X), sc = scores(c, X);
  EXPECT_EQ(sa, sb);  // bit-identical
  EXPECT_NE(sa, sc);  // different trees
  // Refitting the same object gives the same forest again.
  a.fit(X);
  EXPECT_EQ(scores(a, X), sb);
  // Similar ranking: Spearman correlation, and the same top outliers.
  EXPECT_GT(pearson(ranks(sa), ranks(sc)), 0.9);
  const auto top = [](const std::vector<double>& s) {
    std::vector<std::size_t> idx(s.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + 5, idx.end(),
                      [&](auto x, auto y) { return s[x] > s[y]; });
    idx.resize(5);
    std::sort(idx.begin(), idx.end());
    return idx;
  };
  const std::vector<std::size_t> expected{800, 801, 802, 803, 804};
  EXPECT_EQ(top(sa), expected);
  EXPECT_EQ(top(sc), expected);
}

// All-constant data: no node can split, so every tree is one external node holding ψ' rows,
// E[h(x)] = c(ψ') for any x, and s = 2^(−c(ψ')/c(ψ)) = 0.5 because the normaliser uses the same
// ψ = min(max_samples, n). Checked with ψ < n and with max_samples > n (ψ = n).
TEST(IsolationForest, ConstantDataScoresOneHalfEverywhere) {
  for (std::size_t n : {1000u, 50u}) {
    Matrix X(n, 3, 4.25);
    IsolationForest f;  // max_samples 256
    f.fit(X);
    const double psi = static_cast<double>(std::min<std::size_t>(256, n));
    const std::vector<double> same{4.25, 4.25, 4.25}, other{-100.0, 7.0, 1e9};
    // Equal up to the rounding of summing 100 equal path lengths and dividing.
    EXPECT_NEAR(f.mean_path_length(same), average_path_length(psi), 1e-12) << "n=" << n;
    EXPECT_NEAR(f.mean_path_length(other), average_path_length(psi), 1e-12) << "n=" << n;
    EXPECT_NEAR(f.score(same), 0.5, 1e-12);
    EXPECT_NEAR(f.score(other), 0.5, 1e-12);
    std::vector<double> contrib(3, 9.0);
    f.feature_contributions(other, contrib);
    EXPECT_EQ(contrib, std::vector<double>(3, 0.0));  // no splits, no attribution
  }
}

TEST(IsolationForest, SampleLargerThanData) {
  Matrix X = gaussian(40, 2, 9);
  const std::vector<double> far{10.0, 10.0};
  X.append_row(far);
  IsolationForest f(IsolationForestOptions{.n_trees = 100, .max_samples = 1000, .seed = 4});
  f.fit(X);
  // Each tree holds all 41 rows, height limit ceil(log2 41) = 6.
  for (std::size_t i = 0; i < X.rows(); ++i) {
    const double h = f.mean_path_length(X.row(i));
    EXPECT_GT(h, 0.0);
    EXPECT_LE(h, 6 + average_path_length(41) + 1e-12);
    EXPECT_NEAR(f.score(X.row(i)), std::exp2(-h / average_path_length(41)), 1e-12);
  }
  EXPECT_GT(f.score(far), 0.7);
}

TEST(IsolationForest, TinyInputs) {
  Matrix one(1, 2, 3.0);
  IsolationForest f;
  f.fit(one);  // ψ = 1: c(1) = 0, no evidence either way
  const std::vector<double> x{0.0, 0.0};
  EXPECT_DOUBLE_EQ(f.score(x), 0.5);
  Matrix two(2, 1);
  two(1, 0) = 1.0;
  f.fit(two);  // ψ = 2: height limit 1, one split, leaves of size 1
  const std::vector<double> y{0.0};
  EXPECT_DOUBLE_EQ(f.mean_path_length(y), 1.0);
  EXPECT_DOUBLE_EQ(f.score(y), 0.5);
}

TEST(IsolationForest, ConstantFeatureIsNeverSplitOn) {
  Matrix X = gaussian(300, 3, 21);
  for (std::size_t i = 0; i < X.rows(); ++i) X(i, 1) = 5.0;
  IsolationForest f;
  f.fit(X);
  // Feature 1 never splits, so its value cannot change the path.
  const std::vector<double> a{0.3, 5.0, -0.2}, b{0.3, 1e6, -0.2};
  EXPECT_EQ(f.score(a), f.score(b));
  std::vector<double> contrib(3);
  f.feature_contributions(b, contrib);
  EXPECT_EQ(contrib[1], 0.0);
}

TEST(IsolationForest, NaNInFitAndScoreUsesColumnMedian) {
  Matrix X = gaussian(400, 3, 13);
  for (std::size_t i = 0; i < X.rows(); ++i) X(i, 2) += 50.0;  // median far from 0
  std::mt19937_64 rng(99);
  for (double& v : X.data())
    if (rng() % 10 == 0) v = kNaN;
  for (std::size_t j = 0; j < 3; ++j) X(17, j) = kNaN;  // a fully missing row
  IsolationForest f;
  f.fit(X);
  for (std::size_t i = 0; i < X.rows(); ++i) {
    const double s = f.score(X.row(i));
    EXPECT_TRUE(std::isfinite(s)) << "row " << i;
    EXPECT_GT(s, 0.0);
    EXPECT_LE(s, 1.0);
  }
  // A NaN in a scored row behaves exactly like the fit data's column median.
  std::vector<double> col(X.rows());
  for (std::size_t i = 0; i < X.rows(); ++i) col[i] = X(i, 2);
  const double med2 = median_of(col);
  const std::vector<double> with_nan{1.5, -0.5, kNaN}, with_med{1.5, -0.5, med2};
  EXPECT_EQ(f.score(with_nan), f.score(with_med));
  const std::vector<double> all_nan{kNaN, kNaN, kNaN};
  EXPECT_TRUE(std::isfinite(f.score(all_nan)));
  std::vector<double> contrib(3);
  f.feature_contributions(all_nan, contrib);
  EXPECT_NEAR(contrib[0] + contrib[1] + contrib[2], 1.0, 1e-12);
}

TEST(IsolationForest, AllNaNColumnIsIgnored) {
  Matrix X = gaussian(200, 2, 17);
  for (std::size_t i = 0; i < X.rows(); ++i) X(i, 0) = kNaN;
  IsolationForest f;
  f.fit(X);
  const std::vector<double> a{kNaN, 0.1}, b{42.0, 0.1};
  EXPECT_EQ(f.score(a), f.score(b));
}

TEST(IsolationForest, ContributionsPointAtTheDeviatingFeature) {
  for (std::size_t k = 0; k < 5; ++k) {
    Matrix X = gaussian(500, 5, 100 + k);
    std::vector<double> out_row{0.1, -0.2, 0.0, 0.3, -0.1};
    out_row[k] = 9.0;  // inlier in every feature but k
    X.append_row(out_row);
    IsolationForest f(IsolationForestOptions{.seed = 7 + k});
    f.fit(X);
    std::vector<double> contrib(5);
    f.feature_contributions(out_row, contrib);
    double sum = 0;
    for (double c : contrib) {
      EXPECT_GE(c, 0.0);
      sum += c;
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    const auto arg = static_cast<std::size_t>(
        std::max_element(contrib.begin(), contrib.end()) - contrib.begin());
    EXPECT_EQ(arg, k);
    EXPECT_GT(contrib[k], 0.4) << "k=" << k;
  }
}

TEST(IsolationForest, ContributionsOfAnInlierAreSpread) {
  Matrix X = gaussian(500, 5, 31);
  IsolationForest f;
  f.fit(X);
  const std::vector<double> centre{0.0, 0.0, 0.0, 0.0, 0.0};
  std::vector<double> contrib(5);
  f.feature_contributions(centre, contrib);
  // No feature dominates a central point (uniform would be 0.2 each).
  for (double c : contrib) {
    EXPECT_GT(c, 0.08);
    EXPECT_LT(c, 0.4);
  }
}

// score_many() walks tree-major over blocks of keyed rows, score() row by row with eight trees
// in lockstep (and, beyond 512 features, without the stack key buffer): all must agree bit
// for bit, through NaN (fill), ±inf, −0.0, partial lane groups and several blocks.
TEST(IsolationForest, ScoreManyEqualsScoreBitForBit) {
  struct Case { std::size_t n, d; int trees, psi; };
  for (const Case c : {Case{1, 1, 100, 256}, Case{9, 3, 13, 7}, Case{1000, 4, 100, 256},
                       Case{5000, 24, 21, 256}, Case{300, 600, 9, 64}, Case{2, 2, 1, 1}}) {
    Matrix X = gaussian(c.n, c.d, 40 + c.n);
    std::mt19937_64 rng(c.d);
    for (double& v : X.data()) {
      const auto r = rng() % 50;
      if (r == 0) v = kNaN;
      else if (r == 1) v = -0.0;
      else if (r == 2) v = 0.0;
    }
    X(0, 0) = std::numeric_limits<double>::infinity();
    IsolationForest f(IsolationForestOptions{.n_trees = c.trees, .max_samples = c.psi, .seed = 5});
    f.fit(X);
    std::vector<double> many(X.rows());
    f.score_many(X, many);
    EXPECT_EQ(many, scores(f, X)) << "n=" << c.n << " d=" << c.d;
  }
  // −0.0 and +0.0 compare equal, so they take the same paths.
  Matrix X = gaussian(500, 2, 3);
  for (std::size_t i = 0; i < X.rows(); i += 3) X(i, 0) = 0.0;
  IsolationForest f;
  f.fit(X);
  const std::vector<double> pz{0.0, 0.5}, nz{-0.0, 0.5};
  EXPECT_EQ(f.score(pz), f.score(nz));
  std::vector<double> out(0);
  f.score_many(Matrix(0, 2), out);  // no rows: nothing to do
  std::vector<double> wrong(3);
  EXPECT_THROW(f.score_many(X, wrong), std::invalid_argument);
}

// Scores pinned to the values of the forest before its compact layout (24-byte nodes, walks
// comparing doubles; reveal_iforest_tool fit-score at commit 45be31f): a layout or traversal
// change must leave them bit-identical. Exact arithmetic data (no <random> distribution).
TEST(IsolationForest, ScoresEqualThePinnedReferenceExactly) {
  Matrix X(600, 5);
  for (std::size_t i = 0; i < 600; ++i)
    for (std::size_t j = 0; j < 5; ++j)
      X(i, j) = (i * 31 + j * 17) % 53 == 0 ? kNaN : static_cast<double>((i * 7919 + j * 104729) % 1000) / 37.0 - 13.5;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<double>> q{{X(0, 0), X(0, 1), X(0, 2), X(0, 3), X(0, 4)},
                                           {X(1, 0), X(1, 1), X(1, 2), X(1, 3), X(1, 4)},
                                           {X(100, 0), X(100, 1), X(100, 2), X(100, 3), X(100, 4)},
                                           {X(599, 0), X(599, 1), X(599, 2), X(599, 3), X(599, 4)},
                                           {1000, -1000, 0, kNaN, -0.0},
                                           {kInf, -kInf, 0.0, 5, -0.0}};
  const std::vector<double> want11{0.53916187929341541, 0.467818280283471, 0.47056354203132239,
                                   0.52378853477319776, 0.60933779668750454, 0.61197931610626966};
  const std::vector<double> want3{0.52204681155410693, 0.50984945172971941, 0.52165324543064528,
                                  0.44270292301482411, 0.5848367830563288, 0.5848367830563288};
  IsolationForest a(IsolationForestOptions{.seed = 11});
  IsolationForest b(IsolationForestOptions{.n_trees = 13, .max_samples = 64, .seed = 3});
  a.fit(X);
  b.fit(X);
  for (std::size_t k = 0; k < q.size(); ++k) {
    EXPECT_EQ(a.score(q[k]), want11[k]) << "query " << k;
    EXPECT_EQ(b.score(q[k]), want3[k]) << "query " << k;
  }
}

TEST(IsolationForest, RejectsBadInput) {
  IsolationForest f;
  EXPECT_THROW(f.fit(Matrix{}), std::invalid_argument);
  const std::vector<double> x{1.0};
  EXPECT_THROW(f.score(x), std::logic_error);
  f.fit(gaussian(10, 2, 1));
  EXPECT_THROW(f.score(x), std::invalid_argument);
  std::vector<double> out(1);
  const std::vector<double> x2{1.0, 2.0};
  EXPECT_THROW(f.feature_contributions(x2, out), std::invalid_argument);
  IsolationForest bad(IsolationForestOptions{.n_trees = 0});
  EXPECT_THROW(bad.fit(gaussian(10, 2, 1)), std::invalid_argument);
}

}  // namespace
}  // namespace reveal
