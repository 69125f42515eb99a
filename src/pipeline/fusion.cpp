// Calibrated fusion; contract in fusion.h.
#include "fusion.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "reveal/offline.h"
#include "reveal/robust_z.h"

namespace reveal::pipeline {
namespace {

constexpr double kTailScaleFloor = 0.5;  // EVT tail σ ≥ this × the stream's scale floor
constexpr double kNaN = __builtin_nan("");

std::vector<double> finite(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (std::isfinite(x)) out.push_back(x);
  return out;
}

}  // namespace

Calibration calibrate(const std::vector<double>& ref, double floor) {
  Calibration c;
  c.median = median_of(ref);
  const double mad = mad_of(ref, c.median);
  c.scale = std::max({1.4826 * mad, 1e-3 * std::fabs(c.median), floor});
  return c;
}

CalibratedFusion::CalibratedFusion(std::array<double, kNumStreams> cuts, std::array<double, kNumStreams> floors,
                                   double window_period_s, double false_per_day)
    : cut_(cuts), floor_(floors) {
  if (!(window_period_s > 0) || !std::isfinite(window_period_s))
    throw DetectError("window period must be a positive number of seconds");
  period_s_ = window_period_s;
  reach_.fill(__builtin_inf());
  set_false_per_day(false_per_day, fused_);
  // The tails' scale floor: the mean excess of a normal distribution over its 90th percentile
  // is 0.47 SD, so a stream whose robust SD is at its floor has excesses of about half of it.
  for (std::size_t d = 0; d < kNumStreams; ++d)
    tails_[d] = SpotTail({.min_gamma = 0, .min_sigma = kTailScaleFloor * floor_[d]});
}

void CalibratedFusion::fit(const std::array<const std::vector<double>*, kNumStreams>& ref,
                           const std::vector<char>& startup, std::array<double, kNumStreams> reach,
                           std::array<bool, kNumStreams> fused) {
  // Each stream's scale has a floor in its own units so that a reference of near-identical
  // scores cannot turn a tiny change into a huge one. The robust-z and forest streams cover
  // every reference window; the trail and PCA streams (NaN where a window has no trail or no
  // held-out score) may have no finite score at all.
  for (std::size_t d = 0; d < kNumStreams; ++d) {
    const std::vector<double> f = finite(*ref[d]);
    fitted_[d] = !f.empty();
    cal_[d] = fitted_[d] ? calibrate(f, floor_[d]) : Calibration{};
  }
  // The EVT tails describe normal windows: reference windows that the robust-SD calibration
  // itself flags (some stream ≥ its cut) are left out of every tail fit, and so are start-up
  // windows. A self reference keeps a fault that covers more than half of it, and its windows
  // would otherwise be the very peaks the tail is fitted on; start-up transients would inflate
  // the tail's scale.
  const std::size_t n = startup.size();
  std::vector<char> normal(n, 1);
  for (std::size_t k = 0; k < n; ++k) {
    if (startup[k]) { normal[k] = 0; continue; }
    bool high = false;
    for (std::size_t d = 0; d < kNumStreams && !high; ++d) {
      if (!fitted_[d] || k >= ref[d]->size()) continue;
      const double c = ((*ref[d])[k] - cal_[d].median) / cal_[d].scale;
      high = c >= cut_[d];  // NaN (no score for this window) flags nothing
    }
    normal[k] = !high;
  }
  reach_ = reach;
  std::vector<double> tail_ref;
  for (std::size_t d = 0; d < kNumStreams; ++d) {
    tail_fit_[d] = false;
    if (!fitted_[d]) continue;
    tail_ref.clear();
    for (std::size_t k = 0; k < ref[d]->size(); ++k)
      if (normal[k] && std::isfinite((*ref[d])[k])) tail_ref.push_back((*ref[d])[k]);
    try {
      tails_[d].fit(tail_ref);
      tail_fit_[d] = true;
    } catch (const std::invalid_argument&) {
      // Too few reference windows or a constant tail: no tail probability for this stream.
    }
  }
  set_false_per_day(false_per_day_, fused);
}

void CalibratedFusion::set_false_per_day(double f, std::array<bool, kNumStreams> fused) {
  if (!(f > 0) || !std::isfinite(f)) throw DetectError("expected false incidents per day must be a positive number");
  false_per_day_ = f;
  n_fused_ = 0;
  for (std::size_t d = 0; d < kNumStreams; ++d) {
    // Before a fit every stream may be fused; after one, only those with a calibration.
    fused_[d] = fused[d] && (fitted_[d] || std::none_of(fitted_.begin(), fitted_.end(), [](bool b) { return b; }));
    n_fused_ += fused_[d] ? 1 : 0;
  }
  n_fused_ = std::max<std::size_t>(n_fused_, 1);
  // q = F·T_w / 1 day, at most 1/2 (a knob of thousands a day on long windows is not a rate).
  log_q_ = std::log(std::min(0.5, f * period_s_ / 86400.0));
  // A q/D quantile beyond the stream's range would silence the detector: such a stream (the
  // forest's bounded score, on a reference too short to resolve rate q) keeps its robust-SD
  // calibration.
  const double q_d = std::exp(log_q_) / double(n_fused_);
  for (std::size_t d = 0; d < kNumStreams; ++d)
    tail_ok_[d] = tail_fit_[d] && tails_[d].threshold(q_d) < reach_[d];
}

FusedLevels CalibratedFusion::fuse(const std::array<double, kNumStreams>& stream, bool pca_live) const {
  FusedLevels s;
  const double log_d = std::log(double(n_fused_));
  for (std::size_t d = 0; d < kNumStreams; ++d) {
    const bool live = fitted_[d] && (d < kPcaSpeStream || pca_live) && !std::isnan(stream[d]);
    s.calibrated[d] = live ? (stream[d] - cal_[d].median) / cal_[d].scale : 0.0;
    const double robust = s.calibrated[d] / cut_[d];
    s.tail_p[d] = tail_fit_[d] && live ? tails_[d].tail_probability(stream[d]) : kNaN;
    // Bonferroni over the D fused detectors: the window is anomalous when some p_d ≤ q / D.
    s.level[d] = !live ? kNaN : tail_ok_[d] ? (tails_[d].log_tail_probability(stream[d]) + log_d) / log_q_ : robust;
    if (!fused_[d] || !live) continue;
    s.fused = std::max(s.fused, s.level[d]);
    if (d != kTrailStream) s.robust = std::max(s.robust, robust);
    if (d == kRobustZStream || d == kTrailStream) s.sustained = s.sustained || s.level[d] >= 1.0;
  }
  return s;
}

double CalibratedFusion::threshold(std::size_t d) const {
  const double q_d = std::exp(log_q_) / double(n_fused_);
  if (!fitted_[d]) return kNaN;
  return tail_ok_[d] ? tails_[d].threshold(q_d) : cal_[d].median + cut_[d] * cal_[d].scale;
}

double CalibratedFusion::window_false_rate() const { return std::exp(log_q_); }

void CalibratedFusion::save(ByteWriter& out) const {
  for (std::size_t d = 0; d < kNumStreams; ++d) {
    out.boolean(fitted_[d]);
    out.f64(cal_[d].median);
    out.f64(cal_[d].scale);
  }
  out.u64(tails_.size());
  for (std::size_t d = 0; d < tails_.size(); ++d) {
    out.boolean(tail_fit_[d]);
    if (tail_fit_[d]) tails_[d].save(out);
  }
}

void CalibratedFusion::load(ByteReader& in, std::array<double, kNumStreams> reach) {
  for (std::size_t d = 0; d < kNumStreams; ++d) {
    fitted_[d] = in.boolean();
    cal_[d].median = in.f64();
    cal_[d].scale = in.f64();
    if (fitted_[d] && !(cal_[d].scale > 0)) throw DecodeError("corrupt model data: a stream calibration's scale is not positive");
  }
  if (in.u64() != tails_.size()) throw DecodeError("corrupt model data: unexpected number of EVT tails");
  for (std::size_t d = 0; d < tails_.size(); ++d) {
    tail_fit_[d] = in.boolean();
    if (tail_fit_[d] && !fitted_[d]) throw DecodeError("corrupt model data: an EVT tail for a stream without calibration");
    if (tail_fit_[d]) tails_[d].load(in);
  }
  reach_ = reach;
}

}  // namespace reveal::pipeline
