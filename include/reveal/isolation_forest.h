// Isolation Forest (Liu, Ting, Zhou, "Isolation Forest", ICDM 2008).
//
// fit(X): X is n×d (rows = window feature vectors). Builds t trees, each on a sample of
//   ψ = min(max_samples, n) rows drawn without replacement, height limit ceil(log2 ψ).
//   Each node picks a feature uniformly among those not constant in its sample and a
//   split uniformly in (min, max). Non-finite values in X are treated as the feature's median
//   of the finite fit data.
// score(x): s(x) = 2^(−E[h(x)] / c(ψ)), in (0, 1]; ≈1 anomalous, ≤0.5 normal. h(x) is the
//   path length plus c(size) at an external node holding `size` > 1 training rows. A NaN in x
//   is read as the feature's fit median.
//   This is the negative of scikit-learn's IsolationForest.score_samples.
// score_many(X, out): score() of every row of X, bit-identical to calling score() per row, but
//   walked tree-major over blocks of rows (each tree stays in L1 while the block passes through
//   it), several times faster on many rows; allocates one block of scratch per call.
// c(n) = 2·H(n−1) − 2(n−1)/n with H(i) = ln(i) + γ (Euler's constant), c(2)=1, c(≤1)=0.
// Deterministic for a given seed. score(), mean_path_length() and feature_contributions()
// allocate nothing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reveal/matrix.h"

namespace reveal {

class ByteReader;
class ByteWriter;

// Average path length of an unsuccessful BST search among n points (the normaliser c(n)).
double average_path_length(double n);

struct IsolationForestOptions {
  int n_trees = 100;
  int max_samples = 256;  // ψ
  std::uint64_t seed = 42;
};

class IsolationForest {
 public:
  explicit IsolationForest(IsolationForestOptions opts = {}) : opts_(opts) {}
  void fit(const Matrix& X);
  bool fitted() const { return !height_.empty(); }
  std::size_t n_features() const { return n_features_; }
  // Anomaly score s(x) ∈ (0,1]. x.size() must equal n_features().
  double score(std::span<const double> x) const;
  // score() of every row of X into out (out.size() == X.rows(), X.cols() == n_features()).
  void score_many(const Matrix& X, std::span<double> out) const;
  // Mean path length E[h(x)] over the trees.
  double mean_path_length(std::span<const double> x) const;
  // Per-feature contribution to x's isolation (DIFFI-style, Carletti et al. 2023): every split
  // on x's path in tree t, at a node holding n training rows of which n' follow x, credits its
  // feature with log2(n / n') / h_t(x) — the bits of isolation the split provides (DIFFI's
  // "induced imbalance"), weighted by 1/path length so quickly-isolating trees count more.
  // Summed over trees and normalised to sum to 1; all zero when no tree splits.
  // `out` has n_features() entries. Allocates nothing.
  void feature_contributions(std::span<const double> x, std::span<double> out) const;
  // Model files (baseline_model.h, encoding binary_io.h): save() writes the fitted state, options
  // included; load() replaces this object's state with it, so scores are bit-identical to the
  // saved object's. load() validates what it reads and throws DecodeError on malformed input.
  void save(ByteWriter& out) const;
  void load(ByteReader& in);

 private:
  // The forest: every tree in one set of parallel arrays (8-byte strides, so that a node
  // index is an addressing mode). Tree t is nodes [root_[t], root_[t+1]), indexed from its
  // root; children are adjacent (left = right − 1) and come after their parent.
  //   key_     internal: the threshold as an order-preserving unsigned integer (see
  //            isolation_forest.cpp): x goes left iff key(x[feature]) < key_; external: 0,
  //            which no key is below.
  //   step_    internal: {feature·8, right child}; external: {0, its own index}. A step is
  //            i = right − (key(x[feature]) < key_[i]), with no test for the leaf: an external
  //            node steps onto itself, so a walk takes exactly its tree's height in steps.
  //   leaf_h_  external: depth + c(size), the h(x) of a path ending there.
  //   size_    training rows reaching the node (attribution only).
  struct Step {
    std::uint32_t x_off = 0, right = 0;
  };
  struct Builder;  // fit-time scratch state, defined in isolation_forest.cpp
  std::vector<std::uint64_t> key_;
  std::vector<Step> step_;
  std::vector<double> leaf_h_;
  std::vector<std::int32_t> size_;
  std::vector<std::size_t> root_;    // n_trees + 1 entries
  std::vector<std::int32_t> height_; // per tree: the depth of its deepest external node

  std::size_t n_trees() const { return height_.size(); }
  double finish(double path_sum) const;  // Σ_t h_t(x) → s(x)
  // Σ_t h_t(x) in tree order; key_at(feature·8) gives the key of x's (NaN-filled) feature.
  template <class KeyAt>
  double path_sum(KeyAt key_at) const;
  double value(std::span<const double> x, std::size_t f) const;  // x[f], NaN → fill

  IsolationForestOptions opts_;
  std::vector<double> fill_;  // per-feature median of fit data, used for NaN
  std::size_t n_features_ = 0;
  double c_psi_ = 1.0;
};

}  // namespace reveal
