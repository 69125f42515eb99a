// PCA residual detector: squared prediction error (SPE, the Q statistic) and Hotelling's T².
//
// Sources: Jackson & Mudholkar, "Control procedures for residuals associated with principal
// component analysis", Technometrics 21(3), 1979 (Q); MacGregor & Kourti, "Statistical process
// control of multivariate processes", Control Eng. Practice 3(3), 1995 (T² and SPE together);
// Miller, Swanson & Heckler, "Contribution plots", 1998 (per-variable SPE contributions).
//
// fit(X): X is n×d (rows = reference window feature vectors, already scaled: the pipeline passes
//   each channel's robust z of its window mean). Columns are centred on their reference mean;
//   a NaN (a channel missing in a window) counts as the mean. The principal axes are the
//   eigenvectors of the d×d covariance (or, when n < d, obtained from the n×n Gram matrix; same
//   result). The model keeps the fewest leading components whose eigenvalues hold `variance` of
//   the total (at most max_components, at most rank − 1 so a residual space always remains).
// score(x): centred x; scores t = Pᵀx (k values); T² = Σ t_i²/λ_i, the distance inside the
//   model plane (big moves along the usual correlations, e.g. more load); SPE = ‖x − Pt‖², the
//   part of x the usual correlations cannot explain (a broken correlation: network traffic
//   without the CPU time that normally comes with it). `residual` (size d, optional) gets the
//   per-feature residual r_j; r_j² sums to SPE (its contribution plot).
// Units: SPE in squared feature units, T² dimensionless. Scoring allocates nothing; not
// thread-safe (scratch buffers).
// Errors: fit() throws std::invalid_argument when X has fewer than 2 rows or no column.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "reveal/matrix.h"

namespace reveal {

class ByteReader;
class ByteWriter;

struct PcaOptions {
  double variance = 0.9;             // share of the reference variance the model plane keeps
  std::size_t max_components = 50;   // cap on k (cost of scoring is d·k)
};

struct PcaScore {
  double spe = 0;  // Q statistic
  double t2 = 0;   // Hotelling's T²
};

class PcaResidual {
 public:
  explicit PcaResidual(PcaOptions opts = {}) : opts_(opts) {}
  void fit(const Matrix& X);
  bool fitted() const { return d_ > 0; }
  void clear() { d_ = k_ = 0; }  // back to unfitted (e.g. a reference too small to fit)
  std::size_t n_features() const { return d_; }
  std::size_t components() const { return k_; }
  // Share of the reference variance in the kept components.
  double explained() const { return explained_; }
  PcaScore score(std::span<const double> x, std::span<double> residual = {}) const;
  // Model files (baseline_model.h, encoding binary_io.h): save() writes the fitted state, options
  // included; load() replaces this object's state with it, so scores are bit-identical to the
  // saved object's. load() validates what it reads and throws DecodeError on malformed input.
  void save(ByteWriter& out) const;
  void load(ByteReader& in);

 private:
  PcaOptions opts_;
  std::size_t d_ = 0, k_ = 0;
  double explained_ = 0;
  std::vector<double> mean_;    // d
  std::vector<double> axes_;    // k×d, row i = i-th principal axis (unit length)
  std::vector<double> inv_lambda_;  // k: 1/λ_i
  mutable std::vector<double> xc_, t_;  // scratch
};

}  // namespace reveal
