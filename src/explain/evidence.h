// The evidence an incident is attributed from, gathered window by window. One accumulator for
// both paths: `reveal detect` feeds a finished incident's windows (src/pipeline/offline.cpp), the
// streaming detector feeds them as they arrive (src/pipeline/streaming.cpp), so both tell the
// same story about the same windows (tests/pipeline/parity_test.cpp).
//
// Windows are fed in order, from the incident's first. Anomalous windows add their per-channel
// robust z and the Isolation Forest's and PCA residual's contribution shares; zbar(),
// detectors().iforest and .pca_spe are their means over the anomalous windows. Every window of
// the incident, including normal ones in a gap the incident bridged, counts toward each
// detector's peak level and the peak fused score; a normal window counts once a later anomalous
// window shows it lies inside the incident. Normal windows after the last anomalous one are not
// part of it (a streaming detector sees them before it knows the incident ended).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "attribution.h"

namespace reveal::explain {

class IncidentEvidence {
 public:
  // Starts a new incident over `n_channels` model channels; `pca`: the model has a PCA fit, so
  // pca_spe shares are evidence. Allocates only when n_channels grows.
  void start(std::size_t n_channels, bool pca);

  // Feeds the incident's next window. `fused`: its fused score; `level`: robust_z, iforest and
  // pca_spe levels (NaN: not computed, ignored). For an anomalous window `z`, `iforest` and
  // `pca_spe` hold n_channels values (its robust z and contribution shares); for a normal one
  // they are not read. Allocates nothing.
  void add(bool anomalous, double fused, const std::array<double, 3>& level, std::span<const double> z,
           std::span<const double> iforest, std::span<const double> pca_spe);

  std::size_t anomalous_windows() const { return count_; }
  double peak_score() const { return peak_score_; }
  // Mean robust z per channel over the anomalous windows (0 before the first).
  std::span<const double> zbar();
  // Mean contribution shares, mean |robust z| per channel and peak levels; the spans stay valid
  // until the next add() or start().
  DetectorEvidence detectors();

 private:
  void mean(const std::vector<double>& sum, std::vector<double>& out) const;

  std::size_t n_ = 0, count_ = 0;
  bool pca_ = false;
  std::vector<double> zsum_, zabssum_, ifsum_, spesum_, zbar_, zabsbar_, ifbar_, spebar_;
  std::array<double, 3> peak_level_{}, pending_level_{};
  double peak_score_ = 0, pending_score_ = 0;
};

// Each model channel's mean over rows [r0, r1) of a row source: `row(r)` gives row r's values,
// `cols[j]` the column of model channel j. Non-finite values are skipped; NaN for a channel
// without a finite value. `out` is resized to cols.size().
template <class RowAt>
void channel_means(std::uint64_t r0, std::uint64_t r1, const std::vector<int>& cols, RowAt&& row,
                   std::vector<double>& out) {
  out.resize(cols.size());
  for (std::size_t j = 0; j < cols.size(); ++j) {
    double sum = 0;
    std::size_t n = 0;
    for (std::uint64_t r = r0; r < r1; ++r)
      if (const double x = row(r)[std::size_t(cols[j])]; std::isfinite(x)) { sum += x; ++n; }
    out[j] = n ? sum / double(n) : __builtin_nan("");
  }
}

}  // namespace reveal::explain
