#include "reveal/pca_residual.h"

#include <cmath>
#include <random>
#include <stdexcept>

#include <Eigen/Dense>
#include <gtest/gtest.h>

namespace reveal {
namespace {

// n points on a 2-D plane inside R^5 (x2 = x0 + x1, x3 = x0 − x1, x4 = 2·x0) plus small noise.
Matrix plane(std::size_t n, std::uint64_t seed, double noise = 0.01) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0), e(0.0, noise);
  Matrix X(n, 5);
  for (std::size_t r = 0; r < n; ++r) {
    const double a = g(rng), b = g(rng);
    const double row[5] = {a, b, a + b, a - b, 2 * a};
    for (std::size_t c = 0; c < 5; ++c) X(r, c) = row[c] + e(rng);
  }
  return X;
}

TEST(PcaResidual, KeepsThePlaneAndSeparatesT2FromSpe) {
  PcaResidual p;
  p.fit(plane(500, 1));
  EXPECT_EQ(p.components(), 2u);
  EXPECT_GT(p.explained(), 0.99);
  // Far along the plane: the usual correlations hold, so T² is large and SPE is tiny.
  const double along[5] = {6, 6, 12, 0, 12};
  const PcaScore s1 = p.score(along);
  EXPECT_GT(s1.t2, 30.0);
  EXPECT_LT(s1.spe, 0.05);
  // Close to the centre but off the plane (x2 no longer equals x0 + x1): SPE large, T² small.
  const double off[5] = {0, 0, 3, 0, 0};
  const PcaScore s2 = p.score(off);
  EXPECT_GT(s2.spe, 4.0);
  EXPECT_LT(s2.t2, 10.0);
}

TEST(PcaResidual, ResidualIsTheContributionPlotAndMatchesAnSvd) {
  const Matrix X = plane(300, 2, 0.2);
  PcaResidual p({.variance = 0.9, .max_components = 50});
  p.fit(X);
  ASSERT_EQ(p.components(), 2u);
  // Reference: SVD of the centred data, residual of projecting on the first 2 right singular vectors.
  Eigen::MatrixXd A(X.rows(), X.cols());
  for (std::size_t r = 0; r < X.rows(); ++r)
    for (std::size_t c = 0; c < X.cols(); ++c) A(r, c) = X(r, c);
  const Eigen::RowVectorXd mu = A.colwise().mean();
  A.rowwise() -= mu;
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeThinV);
  const Eigen::MatrixXd V = svd.matrixV().leftCols(2);
  const double x[5] = {1.0, -2.0, 0.5, 3.0, -1.0};
  Eigen::VectorXd xc(5);
  for (int c = 0; c < 5; ++c) xc(c) = x[c] - mu(c);
  const Eigen::VectorXd r = xc - V * (V.transpose() * xc);
  std::vector<double> res(5);
  const PcaScore s = p.score(x, res);
  double sum = 0;
  for (int c = 0; c < 5; ++c) {
    EXPECT_NEAR(res[c], r(c), 1e-9) << c;
    sum += res[c] * res[c];
  }
  EXPECT_NEAR(s.spe, r.squaredNorm(), 1e-9);
  EXPECT_NEAR(sum, s.spe, 1e-12);
  // T² with the eigenvalues σ²/(n − 1).
  const Eigen::VectorXd t = V.transpose() * xc;
  const double n1 = double(X.rows() - 1);
  const double t2 = t(0) * t(0) / (svd.singularValues()(0) * svd.singularValues()(0) / n1) +
                    t(1) * t(1) / (svd.singularValues()(1) * svd.singularValues()(1) / n1);
  EXPECT_NEAR(s.t2, t2, 1e-9 * t2);
}

// More features than rows: the Gram-matrix path gives the same model as the covariance path.
TEST(PcaResidual, WideDataUsesTheGramMatrixWithTheSameResult) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  const std::size_t n = 12, d = 40;
  Matrix X(n, d);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < d; ++c) X(r, c) = g(rng) * (c < 3 ? 5.0 : 1.0);
  PcaResidual wide({.variance = 0.5, .max_components = 50});
  wide.fit(X);
  // Compare with the SVD of the centred data directly.
  Eigen::MatrixXd A(n, d);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < d; ++c) A(r, c) = X(r, c);
  const Eigen::RowVectorXd mu = A.colwise().mean();
  A.rowwise() -= mu;
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeThinV);
  const std::size_t k = wide.components();
  ASSERT_GE(k, 1u);
  ASSERT_LT(k, n - 1);
  const Eigen::MatrixXd V = svd.matrixV().leftCols(Eigen::Index(k));
  std::vector<double> x(d);
  for (auto& v : x) v = g(rng);
  Eigen::VectorXd xc(d);
  for (std::size_t c = 0; c < d; ++c) xc(c) = x[c] - mu(c);
  const double spe = (xc - V * (V.transpose() * xc)).squaredNorm();
  EXPECT_NEAR(wide.score(x).spe, spe, 1e-8 * spe);
}

TEST(PcaResidual, NaNCountsAsTheMeanAndBadInputThrows) {
  PcaResidual p;
  p.fit(plane(200, 3));
  const double nan = std::nan("");
  const double with_nan[5] = {nan, nan, nan, nan, nan};
  EXPECT_LT(p.score(with_nan).spe, 1e-3);
  EXPECT_LT(p.score(with_nan).t2, 1e-3);
  PcaResidual q;
  EXPECT_THROW(q.fit(Matrix(1, 5)), std::invalid_argument);
  EXPECT_THROW(q.fit(Matrix(5, 0)), std::invalid_argument);
  // Constant data: rank 0, no component, SPE is the squared distance from the mean.
  PcaResidual c;
  c.fit(Matrix(10, 3, 2.0));
  EXPECT_EQ(c.components(), 0u);
  const double x[3] = {2.0, 3.0, 2.0};
  EXPECT_DOUBLE_EQ(c.score(x).spe, 1.0);
}

}  // namespace
}  // namespace reveal
