// Peaks-over-threshold GPD tail (SPOT); contract in include/reveal/spot.h.
#include "reveal/spot.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace reveal {
namespace {

// Log-likelihood of GPD(γ, σ) for excesses y; −inf outside the support.
double gpd_log_likelihood(const std::vector<double>& y, double gamma, double sigma) {
  if (!(sigma > 0)) return -std::numeric_limits<double>::infinity();
  const double n = double(y.size());
  if (std::fabs(gamma) < 1e-12) {
    double s = 0;
    for (double v : y) s += v;
    return -n * std::log(sigma) - s / sigma;
  }
  double s = 0;
  for (double v : y) {
    const double a = 1 + gamma * v / sigma;
    if (!(a > 0)) return -std::numeric_limits<double>::infinity();
    s += std::log(a);
  }
  return -n * std::log(sigma) - (1 + 1 / gamma) * s;
}

// Grimshaw's function w(θ) = u(θ)·v(θ) − 1.
double grimshaw_w(const std::vector<double>& y, double theta) {
  double u = 0, v = 0;
  for (double x : y) {
    const double a = 1 + theta * x;
    u += 1 / a;
    v += std::log(a);
  }
  const double n = double(y.size());
  return (u / n) * (1 + v / n) - 1;
}

// Roots of w on (lo, hi) with lo·hi > 0: sign changes over a grid that is linear and also
// geometric towards the end nearer 0 (roots crowd there when the interval is wide), refined by
// bisection.
void roots_in(const std::vector<double>& y, double lo, double hi, std::vector<double>& out) {
  constexpr int kGrid = 200;
  std::vector<double> grid;
  const double near = std::fabs(lo) < std::fabs(hi) ? lo : hi, far = near == lo ? hi : lo;
  for (int i = 0; i <= kGrid; ++i) {
    grid.push_back(lo + (hi - lo) * double(i) / kGrid);
    grid.push_back(near * std::pow(far / near, double(i) / kGrid));
  }
  std::sort(grid.begin(), grid.end());
  double prev_x = grid[0], prev_w = grimshaw_w(y, prev_x);
  for (std::size_t i = 1; i < grid.size(); ++i) {
    const double x = grid[i];
    if (x == prev_x) continue;
    const double w = grimshaw_w(y, x);
    if (std::isfinite(prev_w) && std::isfinite(w) && (prev_w == 0 || (prev_w < 0) != (w < 0))) {
      double a = prev_x, b = x, wa = prev_w;
      for (int it = 0; it < 60; ++it) {
        const double m = 0.5 * (a + b), wm = grimshaw_w(y, m);
        if ((wa < 0) == (wm < 0)) { a = m; wa = wm; } else { b = m; }
      }
      out.push_back(0.5 * (a + b));
    }
    prev_x = x;
    prev_w = w;
  }
}

}  // namespace

void SpotTail::fit(std::span<const double> reference) {
  sorted_.clear();
  for (double v : reference)
    if (std::isfinite(v)) sorted_.push_back(v);
  n_ = sorted_.size();
  if (n_ < 2 * opts_.min_peaks)
    throw std::invalid_argument("EVT tail fit needs at least " + std::to_string(2 * opts_.min_peaks) +
                                " finite reference scores, got " + std::to_string(n_));
  std::sort(sorted_.begin(), sorted_.end());
  const double level = std::min(opts_.initial_level, 1.0 - double(opts_.min_peaks) / double(n_));
  t_ = sorted_[std::min(n_ - 1, std::size_t(std::floor(level * double(n_ - 1))))];
  std::vector<double> y;
  for (auto it = std::upper_bound(sorted_.begin(), sorted_.end(), t_); it != sorted_.end(); ++it) y.push_back(*it - t_);
  peaks_ = y.size();
  if (peaks_ < 2) throw std::invalid_argument("EVT tail fit: the reference's upper tail is constant");
  const double ymin = *std::min_element(y.begin(), y.end());
  const double ymax = *std::max_element(y.begin(), y.end());
  double ymean = 0;
  for (double v : y) ymean += v;
  ymean /= double(peaks_);
  if (!(ymax > 0)) throw std::invalid_argument("EVT tail fit: the reference's upper tail is constant");

  // Candidates: the exponential tail and every root of Grimshaw's equation in the two
  // intervals where they can lie, (−1/Y_max, 0) and (0, 2(Ȳ − Y_min)/Y_min²).
  const double exp_ll = gpd_log_likelihood(y, 0, ymean);
  double best_gamma = 0, best_sigma = ymean, best_ll = exp_ll;
  if (opts_.min_gamma > 0) best_ll = -std::numeric_limits<double>::infinity();
  std::vector<double> thetas;
  const double eps = 1e-8 / ymax;
  roots_in(y, -1.0 / ymax + eps, -eps, thetas);
  const double upper = ymin > 0 ? 2 * (ymean - ymin) / (ymin * ymin) : 1.0 / ymax * 1e3;
  if (upper > eps) roots_in(y, eps, upper, thetas);
  for (double th : thetas) {
    double v = 0;
    for (double x : y) v += std::log(1 + th * x);
    const double gamma = v / double(peaks_);
    const double sigma = gamma / th;
    if (gamma < opts_.min_gamma) continue;
    const double ll = gpd_log_likelihood(y, gamma, sigma);
    if (ll > best_ll) { best_ll = ll; best_gamma = gamma; best_sigma = sigma; }
  }
  if (!std::isfinite(best_ll)) throw std::invalid_argument("EVT tail fit: no tail with shape >= min_gamma fits the reference");
  // Parsimony: the exponential tail unless the data demand a shape (likelihood-ratio test).
  if (best_gamma != 0 && opts_.min_gamma <= 0 && std::isfinite(exp_ll) && 2 * (best_ll - exp_ll) < opts_.shape_evidence) {
    best_gamma = 0;
    best_sigma = ymean;
  }
  if (best_sigma < opts_.min_sigma) {
    // The excesses are finer than the resolution the caller trusts: their shape is not
    // identifiable (a few tied peaks give a huge γ with a tiny σ), so the tail is the
    // exponential at the floor scale.
    best_gamma = 0;
    best_sigma = std::max(ymean, opts_.min_sigma);
  }
  gamma_ = best_gamma;
  sigma_ = best_sigma;
}

double SpotTail::threshold(double q) const {
  const double r = q * double(n_) / double(peaks_);
  if (std::fabs(gamma_) < 1e-12) return t_ - sigma_ * std::log(r);
  return t_ + sigma_ / gamma_ * (std::pow(r, -gamma_) - 1);
}

double SpotTail::tail_probability(double x) const {
  if (!(x > t_)) {
    // Empirical survival: share of the reference at or above x.
    const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), x);
    return double(sorted_.end() - it) / double(n_);
  }
  const double share = double(peaks_) / double(n_);
  const double y = x - t_;
  if (std::fabs(gamma_) < 1e-12) return share * std::exp(-y / sigma_);
  const double a = 1 + gamma_ * y / sigma_;
  if (!(a > 0)) return 0.0;  // beyond a bounded tail's end point
  return share * std::pow(a, -1 / gamma_);
}

double SpotTail::log_tail_probability(double x) const {
  if (!(x > t_)) return std::log(tail_probability(x));
  const double log_share = std::log(double(peaks_) / double(n_));
  const double y = x - t_;
  if (std::fabs(gamma_) < 1e-12) return log_share - y / sigma_;
  const double a = 1 + gamma_ * y / sigma_;
  if (!(a > 0)) return -std::numeric_limits<double>::infinity();
  return log_share - std::log(a) / gamma_;
}

}  // namespace reveal
