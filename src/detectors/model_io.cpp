// save()/load() of the detectors' fitted state for model files (include/reveal/baseline_model.h).
// Each writes its options and every member its fit() sets, in declaration order, with the
// encoding of include/reveal/binary_io.h; load() checks sizes and indices so that a corrupt but
// decodable file cannot make scoring read out of bounds or loop (DecodeError instead).
#include <algorithm>
#include <cmath>
#include <string>

#include "reveal/binary_io.h"
#include "reveal/isolation_forest.h"
#include "reveal/pca_residual.h"
#include "reveal/robust_z.h"
#include "reveal/spot.h"

namespace reveal {
namespace {

[[noreturn]] void corrupt(const std::string& what) { throw DecodeError("corrupt model data: " + what); }

}  // namespace

// --- RobustZ: options, then per feature median and scale -------------------------------------
void RobustZ::save(ByteWriter& out) const {
  out.f64(opts_.rel_floor);
  out.f64(opts_.abs_floor);
  out.f64s(median_);
  out.f64s(scale_);
}

void RobustZ::load(ByteReader& in) {
  RobustZOptions o;
  o.rel_floor = in.f64();
  o.abs_floor = in.f64();
  std::vector<double> med = in.f64s(), sc = in.f64s();
  if (med.size() != sc.size()) corrupt("robust z medians and scales differ in number");
  opts_ = o;
  median_ = std::move(med);
  scale_ = std::move(sc);
}

// --- IsolationForest: options, features, c(ψ), NaN fills, then the forest's parallel arrays ----
//   u64 trees T; (T+1) × u64 root offsets; T × i32 heights; u64 nodes N; N × (u64 key,
//   u32 feature·8, u32 right child (relative to its tree's root), f64 leaf h, i32 size)
void IsolationForest::save(ByteWriter& out) const {
  out.i32(opts_.n_trees);
  out.i32(opts_.max_samples);
  out.u64(opts_.seed);
  out.u64(n_features_);
  out.f64(c_psi_);
  out.f64s(fill_);
  out.u64(height_.size());
  for (std::size_t r : root_) out.u64(r);
  for (std::int32_t h : height_) out.i32(h);
  out.u64(key_.size());
  for (std::size_t i = 0; i < key_.size(); ++i) {
    out.u64(key_[i]);
    out.u32(step_[i].x_off);
    out.u32(step_[i].right);
    out.f64(leaf_h_[i]);
    out.i32(size_[i]);
  }
}

void IsolationForest::load(ByteReader& in) {
  IsolationForestOptions o;
  o.n_trees = in.i32();
  o.max_samples = in.i32();
  o.seed = in.u64();
  const std::uint64_t nf = in.u64();
  const double c_psi = in.f64();
  std::vector<double> fill = in.f64s();
  if (fill.size() != nf) corrupt("forest fill values do not match its feature count");
  const std::size_t T = in.count(12);  // per tree at least a root offset and a height
  std::vector<std::size_t> root(T + 1);
  for (std::size_t& r : root) r = std::size_t(in.u64());
  std::vector<std::int32_t> height(T);
  for (std::int32_t& h : height) h = in.i32();
  const std::size_t N = in.count(28);
  std::vector<std::uint64_t> key(N);
  std::vector<Step> step(N);
  std::vector<double> leaf_h(N);
  std::vector<std::int32_t> size(N);
  for (std::size_t i = 0; i < N; ++i) {
    key[i] = in.u64();
    step[i].x_off = in.u32();
    step[i].right = in.u32();
    leaf_h[i] = in.f64();
    size[i] = in.i32();
  }
  // Scoring steps i = right − (key(x) < key_[i]) a fixed number of times: every index it can
  // reach must lie inside its tree, and every feature inside the input.
  if (root.front() != 0 || root.back() != N) corrupt("forest tree offsets do not cover its nodes");
  for (std::size_t t = 0; t < T; ++t) {
    if (root[t + 1] <= root[t]) corrupt("a forest tree has no node");
    const std::size_t n = root[t + 1] - root[t];
    if (height[t] < 0 || std::size_t(height[t]) > n) corrupt("a forest tree's height is out of range");
    for (std::size_t i = 0; i < n; ++i) {
      const Step& st = step[root[t] + i];
      const bool external = key[root[t] + i] == 0;
      if (external) {
        if (st.right != i || st.x_off != 0) corrupt("a forest leaf does not step onto itself");
      } else {
        if (st.x_off % 8 != 0 || st.x_off / 8 >= nf) corrupt("a forest node splits on a feature out of range");
        if (st.right <= i + 1 || st.right >= n) corrupt("a forest node's children are out of place");
      }
    }
  }
  opts_ = o;
  n_features_ = std::size_t(nf);
  c_psi_ = c_psi;
  fill_ = std::move(fill);
  root_ = std::move(root);
  height_ = std::move(height);
  key_ = std::move(key);
  step_ = std::move(step);
  leaf_h_ = std::move(leaf_h);
  size_ = std::move(size);
}

// --- PcaResidual: options, d, k, explained share, mean (d), axes (k×d), 1/λ (k) ---------------
void PcaResidual::save(ByteWriter& out) const {
  out.f64(opts_.variance);
  out.u64(opts_.max_components);
  out.u64(d_);
  out.u64(k_);
  out.f64(explained_);
  if (d_ == 0) {  // unfitted (or cleared): no arrays, whatever an earlier fit left behind
    out.f64s({});
    out.f64s({});
    out.f64s({});
    return;
  }
  out.f64s(mean_);
  out.f64s(axes_);
  out.f64s(inv_lambda_);
}

void PcaResidual::load(ByteReader& in) {
  PcaOptions o;
  o.variance = in.f64();
  o.max_components = std::size_t(in.u64());
  const std::uint64_t d = in.u64(), k = in.u64();
  const double explained = in.f64();
  std::vector<double> mean = in.f64s(), axes = in.f64s(), inv_lambda = in.f64s();
  if (k > d || (d == 0 && k != 0)) corrupt("PCA keeps more components than features");
  if (d > 0 && (mean.size() != d || axes.size() != k * d || inv_lambda.size() != k))
    corrupt("PCA arrays do not match its dimensions");
  opts_ = o;
  d_ = std::size_t(d);
  k_ = std::size_t(k);
  explained_ = explained;
  mean_ = std::move(mean);
  axes_ = std::move(axes);
  inv_lambda_ = std::move(inv_lambda);
  xc_.assign(d_, 0.0);
  t_.assign(k_, 0.0);
}

// --- SpotTail: options, t, γ, σ, n, peaks, the sorted reference -------------------------------
void SpotTail::save(ByteWriter& out) const {
  out.f64(opts_.initial_level);
  out.u64(opts_.min_peaks);
  out.f64(opts_.min_gamma);
  out.f64(opts_.min_sigma);
  out.f64(t_);
  out.f64(gamma_);
  out.f64(sigma_);
  out.u64(n_);
  out.u64(peaks_);
  out.f64s(sorted_);
}

void SpotTail::load(ByteReader& in) {
  SpotOptions o;
  o.initial_level = in.f64();
  o.min_peaks = std::size_t(in.u64());
  o.min_gamma = in.f64();
  o.min_sigma = in.f64();
  if (std::isnan(o.min_gamma) || !(o.min_sigma >= 0)) corrupt("EVT tail options out of range");
  const double t = in.f64(), gamma = in.f64(), sigma = in.f64();
  const std::uint64_t n = in.u64(), peaks = in.u64();
  std::vector<double> sorted = in.f64s();
  if (sorted.size() != n || peaks > n) corrupt("EVT tail sizes disagree");
  if (n > 0 && peaks == 0) corrupt("EVT tail has no peak");
  if (!std::is_sorted(sorted.begin(), sorted.end())) corrupt("EVT tail reference is not sorted");
  opts_ = o;
  t_ = t;
  gamma_ = gamma;
  sigma_ = sigma;
  n_ = std::size_t(n);
  peaks_ = std::size_t(peaks);
  sorted_ = std::move(sorted);
}

}  // namespace reveal
