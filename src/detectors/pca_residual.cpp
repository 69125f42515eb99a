// PCA residual detector; contract in include/reveal/pca_residual.h.
#include "reveal/pca_residual.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <Eigen/Dense>

namespace reveal {

void PcaResidual::fit(const Matrix& X) {
  const std::size_t n = X.rows(), d = X.cols();
  if (n < 2 || d == 0) throw std::invalid_argument("PCA needs at least 2 reference rows and 1 column");
  // Centre on the column means of the finite values; a NaN becomes the mean (0 once centred).
  mean_.assign(d, 0.0);
  std::vector<std::size_t> count(d, 0);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < d; ++c)
      if (const double v = X(r, c); std::isfinite(v)) { mean_[c] += v; ++count[c]; }
  for (std::size_t c = 0; c < d; ++c) mean_[c] = count[c] ? mean_[c] / double(count[c]) : 0.0;
  Eigen::MatrixXd Xc(n, d);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < d; ++c) {
      const double v = X(r, c);
      Xc(Eigen::Index(r), Eigen::Index(c)) = std::isfinite(v) ? v - mean_[c] : 0.0;
    }

  // Eigen-decomposition of the smaller of the covariance (d×d) and the Gram matrix (n×n).
  Eigen::VectorXd lambda;
  Eigen::MatrixXd axes;  // d × m, columns = unit principal axes, ascending eigenvalues
  const double denom = double(n - 1);
  if (d <= n) {
    const Eigen::MatrixXd C = (Xc.transpose() * Xc) / denom;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(C);
    lambda = es.eigenvalues();
    axes = es.eigenvectors();
  } else {
    const Eigen::MatrixXd G = (Xc * Xc.transpose()) / denom;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(G);
    lambda = es.eigenvalues();
    // v_i = Xcᵀ u_i / ‖Xcᵀ u_i‖ with ‖Xcᵀ u_i‖² = (n − 1) λ_i.
    axes = Xc.transpose() * es.eigenvectors();
    for (Eigen::Index i = 0; i < axes.cols(); ++i) {
      const double norm = axes.col(i).norm();
      if (norm > 0) axes.col(i) /= norm;
    }
  }
  const Eigen::Index m = lambda.size();
  double total = 0, largest = 0;
  for (Eigen::Index i = 0; i < m; ++i) {
    total += std::max(lambda(i), 0.0);
    largest = std::max(largest, lambda(i));
  }
  // Rank: eigenvalues above round-off relative to the largest.
  std::size_t rank = 0;
  for (Eigen::Index i = 0; i < m; ++i)
    if (lambda(i) > largest * 1e-10) ++rank;
  const std::size_t cap = std::min<std::size_t>(opts_.max_components, rank > 0 ? rank - 1 : 0);
  k_ = 0;
  explained_ = 0;
  double held = 0;
  while (k_ < cap && (total <= 0 || held < opts_.variance * total)) {
    held += lambda(m - 1 - Eigen::Index(k_));
    ++k_;
  }
  explained_ = total > 0 ? held / total : 0.0;
  d_ = d;
  axes_.assign(k_ * d, 0.0);
  inv_lambda_.assign(k_, 0.0);
  for (std::size_t i = 0; i < k_; ++i) {
    const Eigen::Index col = m - 1 - Eigen::Index(i);
    inv_lambda_[i] = 1.0 / lambda(col);
    for (std::size_t c = 0; c < d; ++c) axes_[i * d + c] = axes(Eigen::Index(c), col);
  }
  xc_.assign(d, 0.0);
  t_.assign(k_, 0.0);
}

PcaScore PcaResidual::score(std::span<const double> x, std::span<double> residual) const {
  PcaScore s;
  for (std::size_t c = 0; c < d_; ++c) xc_[c] = std::isfinite(x[c]) ? x[c] - mean_[c] : 0.0;
  for (std::size_t i = 0; i < k_; ++i) {
    const double* a = &axes_[i * d_];
    double t = 0;
    for (std::size_t c = 0; c < d_; ++c) t += a[c] * xc_[c];
    t_[i] = t;
    s.t2 += t * t * inv_lambda_[i];
  }
  for (std::size_t i = 0; i < k_; ++i) {
    const double* a = &axes_[i * d_];
    const double t = t_[i];
    for (std::size_t c = 0; c < d_; ++c) xc_[c] -= t * a[c];
  }
  for (std::size_t c = 0; c < d_; ++c) {
    s.spe += xc_[c] * xc_[c];
    if (!residual.empty()) residual[c] = xc_[c];
  }
  return s;
}

}  // namespace reveal
