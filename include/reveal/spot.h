// Extreme-value tail of a score stream: the peaks-over-threshold fit used by SPOT (Siffer,
// Fouque, Termier, Largouët, "Anomaly Detection in Streams with Extreme Value Theory", KDD 2017).
//
// fit(reference): t = the initial threshold, the empirical quantile at
//   level min(initial_level, 1 − min_peaks/n) of the finite reference scores, so at least
//   min_peaks scores exceed it. The excesses Y = X − t over t are fitted with a generalised
//   Pareto distribution GPD(γ, σ) by maximum likelihood, found with Grimshaw's reduction to a
//   one-dimensional root search (Grimshaw, Technometrics 35(2), 1993; SPOT §3.2): the roots θ of
//   u(θ)·v(θ) = 1, u(θ) = mean 1/(1 + θY), v(θ) = 1 + mean ln(1 + θY), give γ = v(θ) − 1,
//   σ = γ/θ; the candidate with the highest likelihood wins, the exponential tail (γ = 0,
//   σ = mean Y) included — but a shape γ ≠ 0 only when it is significant: the likelihood-ratio
//   test against the exponential (options.shape_evidence). With the ten peaks of a 2-minute
//   run's self reference the MLE's γ is mostly noise (γ = 0.8 from 10 excesses of an
//   exponential sample is common), and extrapolated to q = 1e-6 a spurious heavy tail put the
//   threshold of a robust-z stream at 96 where the exponential puts it at 11: a CPU hog at
//   z 38 passed as normal.
// threshold(q): the score exceeded with probability q per reference observation,
//   z_q = t + σ/γ·((q·n/N_t)^(−γ) − 1)   (γ = 0: t − σ·ln(q·n/N_t)); q below the empirical
//   range is where EVT earns its keep (1e-5 from a few hundred scores).
// tail_probability(x): P(X ≥ x) — the GPD tail above t, the empirical survival below it;
//   0 beyond a bounded tail's end point (γ < 0).
// Options for a conservative tail (used by Reveal's fusion): min_gamma = 0 keeps only
//   unbounded candidates (exponential or heavy, γ ≥ 0): a bounded tail fitted on a few peaks
//   would put its end point just above the reference maximum and call anything beyond it
//   impossible; min_sigma is the finest scale the caller trusts, in score units: when the MLE's
//   σ is below it the shape is not identifiable (a few tied peaks give a huge γ and a tiny σ)
//   and the tail becomes the exponential with σ = max(mean excess, min_sigma).
// log_tail_probability(x): ln P(X ≥ x), without underflow far out in the tail.
// Errors: fit() throws std::invalid_argument with fewer than 2·min_peaks finite scores or when
//   every excess is zero (a constant tail).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace reveal {

class ByteReader;
class ByteWriter;

struct SpotOptions {
  double initial_level = 0.98;  // quantile of the initial threshold t (SPOT's default)
  std::size_t min_peaks = 10;   // excesses the GPD fit needs at least
  double min_gamma = -1e300;    // candidates with a smaller shape γ are not considered
  double min_sigma = 0;         // floor of the fitted scale σ, in score units
  // A shape γ ≠ 0 must beat the exponential tail by this likelihood-ratio statistic
  // 2·(ℓ(γ̂, σ̂) − ℓ(0, Ȳ)); 2.71 is the 5 % point of the χ̄² (½χ²₀ + ½χ²₁) of one parameter on
  // a boundary. 0: the plain maximum-likelihood candidate. Not stored in model files (only
  // fit() reads it; the fitted γ and σ are stored).
  double shape_evidence = 2.71;
};

class SpotTail {
 public:
  explicit SpotTail(SpotOptions opts = {}) : opts_(opts) {}
  void fit(std::span<const double> reference);
  double threshold(double q) const;
  double tail_probability(double x) const;
  double log_tail_probability(double x) const;

  double initial_threshold() const { return t_; }
  double gamma() const { return gamma_; }  // shape γ (0: exponential tail, < 0: bounded)
  double sigma() const { return sigma_; }  // scale σ > 0
  std::size_t n() const { return n_; }
  std::size_t peaks() const { return peaks_; }
  // Model files (baseline_model.h, encoding binary_io.h): save() writes the fitted state, options
  // included; load() replaces this object's state with it, so scores are bit-identical to the
  // saved object's. load() validates what it reads and throws DecodeError on malformed input.
  void save(ByteWriter& out) const;
  void load(ByteReader& in);

 private:
  SpotOptions opts_;
  double t_ = 0, gamma_ = 0, sigma_ = 1;
  std::size_t n_ = 0, peaks_ = 0;
  std::vector<double> sorted_;  // the finite reference, ascending (empirical survival below t)
};

}  // namespace reveal
