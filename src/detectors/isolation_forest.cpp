// Isolation Forest (Liu, Ting, Zhou, ICDM 2008); see include/reveal/isolation_forest.h.
//
// Fit, per tree t = 0..n_trees−1:
//   * generator: std::mt19937_64 seeded with splitmix64(seed + t), so trees are independent of
//     each other's consumption and of the platform's <random> distributions (uniform integers
//     and reals are drawn from the raw 64-bit output here, not via std::*_distribution);
//   * sample: ψ rows without replacement (partial Fisher–Yates over a row permutation that
//     persists across trees; any starting order yields a uniform ψ-subset); a feature's
//     sample column is copied into a column-major ψ×d scratch, non-finite values replaced by
//     the column median, when a node of the tree first draws it;
//   * nodes, depth-first with an explicit stack: a node becomes external at the height limit
//     ceil(log2 ψ), with ≤ 1 row, or when every feature is constant on its rows. Otherwise a
//     feature is drawn uniformly among the node's non-constant ones (by drawing without
//     replacement from the candidates and discarding constant ones, which is the same
//     distribution and costs O(rows) per node in the usual case), and a threshold uniformly in
//     (min, max]; rows with value < threshold go left, so both children are non-empty.
//   Features constant over the whole fit data are never candidates. Cost O(t·(ψ·d + ψ·log ψ)).
//   Each tree is then stored in the forest's parallel arrays (see the header): per node an
//   8-byte threshold key and an 8-byte {feature·8, right child}, children adjacent, external
//   nodes stepping onto themselves; h = depth + c(size) of each external node and the training
//   row count of each node in two more arrays that a walk reads once (h) or never (size).
//   The column medians (NaN fill) and the constant-column test (all finite values equal, or
//   none) read X once per eight columns into reused buffers.
// Keys: a double maps to an unsigned integer with the same order, key(x) = bits(x + 0.0) with
//   the sign bit set for x ≥ 0 and all bits flipped for x < 0 (x + 0.0 turns −0.0 into +0.0,
//   which compares equal to it). For non-NaN x and t, key(x) < key(t) exactly when x < t, so
//   every walk takes the same path as a comparison of doubles would, and NaN is replaced by
//   the fill value before keying. An integer comparison feeds a subtract-with-borrow directly.
// Score: a walk takes exactly the tree's height in steps, i = right − (key(x[f]) < key[i]),
//   with no test for the leaf (an external node steps onto itself), then reads h of the node
//   it ends on: no data-dependent branch. score() keys x once into a stack buffer (up to 512
//   features; beyond, per node) and walks eight trees in lockstep so that their load chains
//   overlap. score_many() keys a block of rows at a time into groups of eight rows stored
//   feature-major (the eight keys of a feature adjacent, so one base register and the node's
//   feature·8 address all eight), then walks one tree at a time over the block, eight rows in
//   lockstep: the tree stays in L1 and the block in L2. Either way each row's h values are
//   summed in tree order, so every path gives bit-identical scores, equal to the former
//   double-comparing walk. No allocation in score().
// Contributions (DIFFI-style, Carletti et al. 2023, simplified): for tree t with path length
//   h_t(x) (including the leaf's c(size)), each internal node v on x's path, holding n_v fit
//   rows of which n_c go to the child x takes, adds
//       log2(n_v / n_c) / h_t(x)
//   to the feature v splits on. The log2 term is the "bits of isolation" the split provides
//   (it telescopes to log2(ψ / leaf size) along the path), so a split that cuts x off from most
//   rows counts much more than a split that halves them; 1/h_t(x) weights trees that isolate x
//   quickly more, as DIFFI does. The sum over trees is normalised to 1; all zero if no tree
//   splits. A plain 1/depth weight was rejected: feature choice is uniform and independent of
//   x, so on 5-D data with an outlier in one feature it picked the wrong feature in ~80 % of
//   trials, against 0 % for this definition.
#include "reveal/isolation_forest.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

#include "reveal/robust_z.h"

namespace reveal {
namespace {

constexpr double kEulerGamma = 0.5772156649015329;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform integer in [0, k), k > 0, without modulo bias.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t k) {
  for (;;) {
    const std::uint64_t r = rng();
    // Accept unless r < 2^64 mod k; that bound is < k, so only r < k needs the division.
    if (r >= k || r >= (0 - k) % k) return r % k;
  }
}

// Order-preserving integer image of a non-NaN double (see the file comment).
std::uint64_t key_of(double v) {
  v += 0.0;  // −0.0 → +0.0
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  const std::uint64_t mask = static_cast<std::uint64_t>(static_cast<std::int64_t>(u) >> 63) | (1ULL << 63);
  return u ^ mask;
}

constexpr std::size_t kLanes = 8;         // rows (score_many) or trees (score) walked in lockstep
constexpr std::size_t kMaxStackKeys = 512; // score() keys x on the stack up to this many features

// score_many()'s kernel: one tree over `groups` groups of kLanes keyed rows (feature-major
// within a group, see score_many), adding h to each row's sum. A function of its own, with
// every base in a register, so that a step compiles to about six instructions per row.
template <class Step>
[[gnu::noinline]] void walk_tree(const std::uint64_t* key, const Step* step, const double* h,
                                 std::int32_t steps, const std::uint64_t* keys, std::size_t groups,
                                 std::size_t d, double* sum) {
  static_assert(sizeof(Step) == sizeof(std::uint64_t));
  const char* xg = reinterpret_cast<const char*>(keys);
  for (std::size_t g = 0; g < groups; ++g, xg += d * kLanes * sizeof *keys) {
    std::size_t i[kLanes] = {};
    for (std::int32_t s = 0; s < steps; ++s)
      for (std::size_t k = 0; k < kLanes; ++k) {
        std::uint64_t w;  // the Step {x_off, right} as one load
        std::memcpy(&w, step + i[k], sizeof w);
        constexpr bool kLittle = std::endian::native == std::endian::little;
        const std::size_t off = kLittle ? static_cast<std::uint32_t>(w) : w >> 32;
        const std::size_t right = kLittle ? w >> 32 : static_cast<std::uint32_t>(w);
        std::uint64_t xk;
        std::memcpy(&xk, xg + off * kLanes + k * sizeof xk, sizeof xk);
        i[k] = right - static_cast<std::size_t>(xk < key[i[k]]);
      }
    double* sg = sum + g * kLanes;
    for (std::size_t k = 0; k < kLanes; ++k) sg[k] += h[i[k]];
  }
}

// Uniform double in [0, 1) with 53 random bits.
double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace

double average_path_length(double n) {
  if (!(n > 1.0)) return 0.0;
  if (n <= 2.0) return 1.0;
  return 2.0 * (std::log(n - 1.0) + kEulerGamma) - 2.0 * (n - 1.0) / n;
}

// Fit-time scratch, reused across trees.
struct IsolationForest::Builder {
  std::size_t psi = 0, d = 0;
  int height_limit = 0;
  std::vector<double> sample;         // column-major ψ×d: sample[f·ψ + r], filled on demand
  std::vector<std::size_t> filled_for; // per feature: the tree whose sample column is in `sample`
  std::size_t tree = 0;               // the tree being built
  const Matrix* X = nullptr;
  const std::size_t* sample_rows = nullptr;  // the ψ rows of X in this tree's sample
  const double* fill = nullptr;       // per feature: the value standing in for non-finite ones
  std::vector<int> rows;              // row ids 0..ψ−1, partitioned in place while building
  std::vector<int> right_rows;        // partition scratch
  std::vector<int> usable;            // features not constant over the whole fit data
  std::vector<int> candidates;        // per-node scratch copy of `usable`
  struct Work { int node, lo, hi, depth; };
  std::vector<Work> stack;
  // The tree being built, node by node (children adjacent, after their parent).
  struct BuildNode {
    double threshold = 0;
    int feature = -1;  // -1: external
    int left = -1;
    int size = 0;
    int depth = 0;
  };
  std::vector<BuildNode> nodes;

  // This tree's sample column of feature f (non-finite values replaced), copied from X the
  // first time a node of the tree draws f: a tree draws at most ψ − 1 features, so on wide
  // matrices most columns are never copied.
  const double* column(int f) {
    double* col = sample.data() + static_cast<std::size_t>(f) * psi;
    if (filled_for[static_cast<std::size_t>(f)] != tree) {
      filled_for[static_cast<std::size_t>(f)] = tree;
      for (std::size_t r = 0; r < psi; ++r) {
        const double v = (*X)(sample_rows[r], static_cast<std::size_t>(f));
        col[r] = std::isfinite(v) ? v : fill[f];
      }
    }
    return col;
  }

  void build(std::mt19937_64& rng) {
    nodes.clear();
    for (std::size_t r = 0; r < psi; ++r) rows[r] = static_cast<int>(r);
    nodes.emplace_back();
    stack.clear();
    stack.push_back({0, 0, static_cast<int>(psi), 0});
    while (!stack.empty()) {
      const Work w = stack.back();
      stack.pop_back();
      const int m = w.hi - w.lo;
      nodes[w.node].size = m;
      nodes[w.node].depth = w.depth;
      if (w.depth >= height_limit || m <= 1) continue;  // external
      int feature = -1;
      double lo_v = 0, hi_v = 0;
      candidates.assign(usable.begin(), usable.end());
      while (!candidates.empty()) {
        const auto k = static_cast<std::size_t>(uniform_below(rng, candidates.size()));
        const int f = candidates[k];
        const double* col = column(f);
        double mn = col[rows[w.lo]], mx = mn;
        for (int i = w.lo + 1; i < w.hi; ++i) {
          const double v = col[rows[i]];
          mn = std::min(mn, v);
          mx = std::max(mx, v);
        }
        if (mn < mx) {
          feature = f;
          lo_v = mn;
          hi_v = mx;
          break;
        }
        candidates[k] = candidates.back();
        candidates.pop_back();
      }
      if (feature < 0) continue;  // every feature constant on the node's rows: external
      // Threshold in (min, max]: a draw that rounds onto min (u = 0, or max−min tiny) is
      // redrawn a few times, then max is used; either way both children are non-empty.
      double thr = hi_v;
      for (int tries = 0; tries < 8; ++tries) {
        const double t = lo_v + uniform01(rng) * (hi_v - lo_v);
        if (t > lo_v && t <= hi_v) {
          thr = t;
          break;
        }
      }
      // Partition rows[lo, hi) by value < thr, branch-free (the comparison is unpredictable):
      // the left rows are written in place (never ahead of the read position), the right
      // ones to scratch and appended. The order within a side differs from std::partition's,
      // which changes nothing: a node's draws, min, max and split depend only on its row set.
      const double* col = sample.data() + static_cast<std::size_t>(feature) * psi;
      int n_left = 0, n_right = 0;
      for (int i = w.lo; i < w.hi; ++i) {
        const int r = rows[i];
        const bool go_left = col[r] < thr;
        rows[w.lo + n_left] = r;
        right_rows[n_right] = r;
        n_left += go_left;
        n_right += !go_left;
      }
      std::copy(right_rows.begin(), right_rows.begin() + n_right, rows.begin() + w.lo + n_left);
      const int split = w.lo + n_left;
      const int left = static_cast<int>(nodes.size());
      nodes.emplace_back();
      nodes.emplace_back();
      BuildNode& node = nodes[w.node];
      node.feature = feature;
      node.threshold = thr;
      node.left = left;
      stack.push_back({left + 1, split, w.hi, w.depth + 1});
      stack.push_back({left, w.lo, split, w.depth + 1});
    }
  }
};

void IsolationForest::fit(const Matrix& X) {
  if (opts_.n_trees <= 0 || opts_.max_samples <= 0)
    throw std::invalid_argument("IsolationForest: n_trees and max_samples must be positive");
  const std::size_t n = X.rows(), d = X.cols();
  if (n == 0) throw std::invalid_argument("IsolationForest::fit: no rows");

  // Column medians of the finite fit data stand in for NaN (0 for an all-NaN column).
  fill_.assign(d, 0.0);
  Builder b;
  b.d = d;
  b.psi = std::min(static_cast<std::size_t>(opts_.max_samples), n);
  b.height_limit = static_cast<int>(std::ceil(std::log2(static_cast<double>(b.psi))));
  {
    // Eight columns per pass over X (a cache line of each row): their finite values into
    // reused buffers, then per column the median (the fill) and whether the finite values are
    // all equal (then the column, NaN filled, is constant).
    constexpr std::size_t kChunk = 8;
    std::vector<double> finite(std::min(d, kChunk) * n);
    for (std::size_t f0 = 0; f0 < d; f0 += kChunk) {
      const std::size_t w = std::min(kChunk, d - f0);
      std::size_t m[kChunk] = {};
      double lo[kChunk], hi[kChunk];
      std::fill(lo, lo + kChunk, std::numeric_limits<double>::infinity());
      std::fill(hi, hi + kChunk, -std::numeric_limits<double>::infinity());
      for (std::size_t i = 0; i < n; ++i) {
        const double* row = X.row(i).data() + f0;
        for (std::size_t c = 0; c < w; ++c) {
          const double v = row[c];
          if (!std::isfinite(v)) continue;
          finite[c * n + m[c]++] = v;
          lo[c] = std::min(lo[c], v);
          hi[c] = std::max(hi[c], v);
        }
      }
      for (std::size_t c = 0; c < w; ++c) {
        const double med = median_in_place(std::span(finite.data() + c * n, m[c]));
        if (std::isfinite(med)) fill_[f0 + c] = med;
        if (lo[c] < hi[c]) b.usable.push_back(static_cast<int>(f0 + c));
      }
    }
  }
  b.sample.resize(b.psi * d);
  b.filled_for.assign(d, static_cast<std::size_t>(-1));
  b.X = &X;
  b.fill = fill_.data();
  b.rows.resize(b.psi);
  b.right_rows.resize(b.psi);
  b.candidates.reserve(b.usable.size());
  b.stack.reserve(2 * static_cast<std::size_t>(b.height_limit) + 2);
  b.nodes.reserve(2 * b.psi);

  std::vector<std::size_t> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = i;

  n_features_ = d;
  c_psi_ = average_path_length(static_cast<double>(b.psi));
  const auto n_trees = static_cast<std::size_t>(opts_.n_trees);
  key_.clear();
  step_.clear();
  leaf_h_.clear();
  size_.clear();
  root_.assign(1, 0);
  height_.clear();
  const std::size_t max_nodes = n_trees * (2 * b.psi - 1);
  key_.reserve(max_nodes);
  step_.reserve(max_nodes);
  leaf_h_.reserve(max_nodes);
  size_.reserve(max_nodes);
  root_.reserve(n_trees + 1);
  height_.reserve(n_trees);
  for (std::size_t t = 0; t < n_trees; ++t) {
    std::mt19937_64 rng(splitmix64(opts_.seed + t));
    // Partial Fisher–Yates: perm[0..ψ) is the sample; its columns are copied on demand.
    for (std::size_t r = 0; r < b.psi; ++r) {
      const std::size_t j = r + static_cast<std::size_t>(uniform_below(rng, n - r));
      std::swap(perm[r], perm[j]);
    }
    b.tree = t;
    b.sample_rows = perm.data();
    b.build(rng);
    // Emit the tree in the scoring layout.
    int height = 0;
    for (std::size_t k = 0; k < b.nodes.size(); ++k) {
      const Builder::BuildNode& bn = b.nodes[k];
      if (bn.feature < 0) {
        key_.push_back(0);
        step_.push_back({0, static_cast<std::uint32_t>(k)});
        leaf_h_.push_back(bn.depth + average_path_length(bn.size));
        height = std::max(height, bn.depth);
      } else {
        key_.push_back(key_of(bn.threshold));
        step_.push_back({static_cast<std::uint32_t>(bn.feature) * 8, static_cast<std::uint32_t>(bn.left + 1)});
        leaf_h_.push_back(0.0);
      }
      size_.push_back(bn.size);
    }
    root_.push_back(key_.size());
    height_.push_back(height);
  }
  key_.shrink_to_fit();  // the reservation assumed full trees
  step_.shrink_to_fit();
  leaf_h_.shrink_to_fit();
  size_.shrink_to_fit();
}

double IsolationForest::value(std::span<const double> x, std::size_t f) const {
  const double v = x[f];
  return std::isnan(v) ? fill_[f] : v;
}

double IsolationForest::finish(double path_sum) const {
  const double e = path_sum / static_cast<double>(n_trees());
  if (c_psi_ <= 0) return 0.5;  // ψ = 1: a single training row says nothing either way
  return std::exp2(-e / c_psi_);
}

template <class KeyAt>
double IsolationForest::path_sum(KeyAt key_at) const {
  const std::size_t T = n_trees();
  double sum = 0;
  std::size_t t = 0;
  for (; t + kLanes <= T; t += kLanes) {
    const std::uint64_t* key[kLanes];
    const Step* step[kLanes];
    std::uint32_t i[kLanes];
    std::int32_t steps = 0;
    for (std::size_t k = 0; k < kLanes; ++k) {
      key[k] = key_.data() + root_[t + k];
      step[k] = step_.data() + root_[t + k];
      i[k] = 0;
      steps = std::max(steps, height_[t + k]);
    }
    for (std::int32_t s = 0; s < steps; ++s)
      for (std::size_t k = 0; k < kLanes; ++k) {
        const Step st = step[k][i[k]];
        i[k] = st.right - static_cast<std::uint32_t>(key_at(st.x_off) < key[k][i[k]]);
      }
    for (std::size_t k = 0; k < kLanes; ++k) sum += leaf_h_[root_[t + k] + i[k]];
  }
  for (; t < T; ++t) {
    const std::uint64_t* key = key_.data() + root_[t];
    const Step* step = step_.data() + root_[t];
    std::uint32_t i = 0;
    for (std::int32_t s = 0; s < height_[t]; ++s) {
      const Step st = step[i];
      i = st.right - static_cast<std::uint32_t>(key_at(st.x_off) < key[i]);
    }
    sum += leaf_h_[root_[t] + i];
  }
  return sum;
}

double IsolationForest::mean_path_length(std::span<const double> x) const {
  if (!fitted()) throw std::logic_error("IsolationForest: not fitted");
  if (x.size() != n_features_)
    throw std::invalid_argument("IsolationForest: size does not match the fitted feature count");
  double sum;
  if (n_features_ <= kMaxStackKeys) {
    std::uint64_t keys[kMaxStackKeys];
    for (std::size_t f = 0; f < n_features_; ++f) keys[f] = key_of(value(x, f));
    const char* base = reinterpret_cast<const char*>(keys);
    sum = path_sum([base](std::uint32_t off) {
      std::uint64_t k;
      std::memcpy(&k, base + off, sizeof k);
      return k;
    });
  } else {
    sum = path_sum([&](std::uint32_t off) { return key_of(value(x, off / 8)); });
  }
  return sum / static_cast<double>(n_trees());
}

double IsolationForest::score(std::span<const double> x) const {
  const double e = mean_path_length(x);
  if (c_psi_ <= 0) return 0.5;  // ψ = 1: a single training row says nothing either way
  return std::exp2(-e / c_psi_);
}

void IsolationForest::score_many(const Matrix& X, std::span<double> out) const {
  if (!fitted()) throw std::logic_error("IsolationForest: not fitted");
  if (X.cols() != n_features_ || out.size() != X.rows())
    throw std::invalid_argument("IsolationForest::score_many: matrix or output size does not match");
  const std::size_t n = X.rows(), d = n_features_, T = n_trees();
  if (n == 0) return;
  // Rows per block: about 64 KiB of keys, in groups of kLanes, so a block stays in L2 while
  // each tree (about 8 KiB of keys and steps at ψ = 256) passes over it from L1.
  constexpr std::size_t kBlockBytes = 64 * 1024;
  const std::size_t groups = std::clamp<std::size_t>(
      kBlockBytes / (sizeof(std::uint64_t) * kLanes * std::max<std::size_t>(d, 1)), 1, 512);
  const std::size_t block = groups * kLanes;
  // keys[(g·d + f)·kLanes + k]: feature f of row k of group g.
  std::vector<std::uint64_t> keys(block * std::max<std::size_t>(d, 1));
  std::vector<double> sum(block);
  for (std::size_t r0 = 0; r0 < n; r0 += block) {
    const std::size_t m = std::min(block, n - r0);
    const std::size_t mg = (m + kLanes - 1) / kLanes;
    for (std::size_t r = 0; r < mg * kLanes; ++r) {
      std::uint64_t* g = keys.data() + (r / kLanes) * d * kLanes + r % kLanes;
      if (r < m) {
        const double* x = X.data().data() + (r0 + r) * d;
        for (std::size_t f = 0; f < d; ++f) {
          const double v = x[f];
          g[f * kLanes] = key_of(std::isnan(v) ? fill_[f] : v);
        }
      } else {
        for (std::size_t f = 0; f < d; ++f) g[f * kLanes] = 0;  // padding, scored and dropped
      }
    }
    std::fill(sum.begin(), sum.begin() + static_cast<std::ptrdiff_t>(mg * kLanes), 0.0);
    for (std::size_t t = 0; t < T; ++t)
      walk_tree(key_.data() + root_[t], step_.data() + root_[t], leaf_h_.data() + root_[t], height_[t],
                keys.data(), mg, d, sum.data());
    for (std::size_t r = 0; r < m; ++r) out[r0 + r] = finish(sum[r]);
  }
}

void IsolationForest::feature_contributions(std::span<const double> x,
                                            std::span<double> out) const {
  if (!fitted()) throw std::logic_error("IsolationForest: not fitted");
  if (x.size() != n_features_ || out.size() != n_features_)
    throw std::invalid_argument("IsolationForest: size does not match the fitted feature count");
  std::fill(out.begin(), out.end(), 0.0);
  for (std::size_t t = 0; t < n_trees(); ++t) {
    if (height_[t] == 0) continue;  // no split in this tree
    const std::uint64_t* key = key_.data() + root_[t];
    const Step* step = step_.data() + root_[t];
    const std::int32_t* size = size_.data() + root_[t];
    const auto next = [&](std::uint32_t i) {
      const Step st = step[i];
      return st.right - static_cast<std::uint32_t>(key_of(value(x, st.x_off / 8)) < key[i]);
    };
    std::uint32_t i = 0;
    for (std::int32_t s = 0; s < height_[t]; ++s) i = next(i);
    const double inv_h = 1.0 / leaf_h_[root_[t] + i];  // ≥ 1 split, so h ≥ 1
    for (i = 0; key[i] != 0;) {  // internal (an external node's key is 0)
      const std::uint32_t j = next(i);
      out[step[i].x_off / 8] += inv_h * std::log2(static_cast<double>(size[i]) / size[j]);
      i = j;
    }
  }
  double total = 0;
  for (double v : out) total += v;
  if (total > 0)
    for (double& v : out) v /= total;
}

}  // namespace reveal
