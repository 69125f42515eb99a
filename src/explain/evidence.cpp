// An incident's evidence, window by window; contract in evidence.h.
#include "evidence.h"

#include <algorithm>
#include <cmath>

namespace reveal::explain {

void IncidentEvidence::start(std::size_t n_channels, bool pca) {
  n_ = n_channels;
  pca_ = pca;
  count_ = 0;
  for (auto* v : {&zsum_, &zabssum_, &ifsum_, &spesum_}) v->assign(n_, 0.0);
  peak_level_.fill(0.0);
  pending_level_.fill(0.0);
  peak_score_ = pending_score_ = 0;
}

void IncidentEvidence::add(bool anomalous, double fused, const std::array<double, 3>& level,
                           std::span<const double> z, std::span<const double> iforest,
                           std::span<const double> pca_spe) {
  // A normal window waits in `pending` until an anomalous one confirms it is inside.
  for (std::size_t d = 0; d < level.size(); ++d)
    if (std::isfinite(level[d])) pending_level_[d] = std::max(pending_level_[d], level[d]);
  pending_score_ = std::max(pending_score_, fused);
  if (!anomalous) return;
  for (std::size_t d = 0; d < level.size(); ++d) peak_level_[d] = std::max(peak_level_[d], pending_level_[d]);
  peak_score_ = std::max(peak_score_, pending_score_);
  pending_level_.fill(0.0);
  pending_score_ = 0;
  ++count_;
  for (std::size_t j = 0; j < n_; ++j) {
    zsum_[j] += z[j];
    zabssum_[j] += std::fabs(z[j]);
    ifsum_[j] += iforest[j];
    spesum_[j] += pca_spe[j];
  }
}

void IncidentEvidence::mean(const std::vector<double>& sum, std::vector<double>& out) const {
  out.resize(sum.size());
  for (std::size_t j = 0; j < sum.size(); ++j) out[j] = sum[j] / double(std::max<std::size_t>(count_, 1));
}

std::span<const double> IncidentEvidence::zbar() {
  mean(zsum_, zbar_);
  return zbar_;
}

DetectorEvidence IncidentEvidence::detectors() {
  DetectorEvidence e;
  mean(ifsum_, ifbar_);
  e.iforest = ifbar_;
  if (pca_) {
    mean(spesum_, spebar_);
    e.pca_spe = spebar_;
  }
  mean(zabssum_, zabsbar_);
  e.mean_abs_z = zabsbar_;
  e.peak_level = peak_level_;
  return e;
}

}  // namespace reveal::explain
