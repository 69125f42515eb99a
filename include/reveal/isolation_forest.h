// Isolation Forest (Liu, Ting, Zhou, "Isolation Forest", ICDM 2008).
//
// fit(X): X is n×d (rows = window feature vectors). Builds t trees, each on a sample of
//   ψ = min(max_samples, n) rows drawn without replacement, height limit ceil(log2 ψ).
//   Each node picks a feature uniformly among those not constant in its sample and a
//   split uniformly in (min, max). NaN in X is treated as the feature's median of the fit data.
// score(x): s(x) = 2^(−E[h(x)] / c(ψ)), in (0, 1]; ≈1 anomalous, ≤0.5 normal. h(x) is the
//   path length plus c(size) at an external node holding `size` > 1 training rows.
//   This is the negative of scikit-learn's IsolationForest.score_samples.
// c(n) = 2·H(n−1) − 2(n−1)/n with H(i) = ln(i) + γ (Euler's constant), c(2)=1, c(≤1)=0.
// Deterministic for a given seed. Scoring allocates nothing.
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
  bool fitted() const { return !trees_.empty(); }
  std::size_t n_features() const { return n_features_; }
  // Anomaly score s(x) ∈ (0,1]. x.size() must equal n_features().
  double score(std::span<const double> x) const;
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
  // Children of a node are stored next to each other (right == left + 1) after their parent.
  // 24 bytes: the double first so there is no padding.
  struct Node {
    double threshold = 0;  // internal: go left when x[feature] < threshold; external: c(size)
    int feature = -1;      // -1: external node
    int left = -1, right = -1;
    int size = 0;          // training rows reaching this node
  };
  struct Tree { std::vector<Node> nodes; };
  struct Builder;  // fit-time scratch state, defined in isolation_forest.cpp
  double path_length(const Tree& t, std::span<const double> x) const;
  double value(std::span<const double> x, std::size_t f) const;

  IsolationForestOptions opts_;
  std::vector<Tree> trees_;
  std::vector<double> fill_;  // per-feature median of fit data, used for NaN
  std::size_t n_features_ = 0;
  double c_psi_ = 1.0;
};

}  // namespace reveal
