// Calibrated fusion: the step between the detectors and the incidents. Each detector's score
// stream is calibrated on the reference (robust SDs above its median) and given an EVT tail
// (SPOT, Siffer et al. KDD 2017; include/reveal/spot.h); a window's score on each stream becomes
// a level, ln(D·p_d) / ln q, and the fused score is the largest level of the D fused streams
// (Bonferroni over D; contract and the false-alarm knob in include/reveal/offline.h, "Calibrated
// fusion"). WindowModel (window_model.h) feeds it its detectors' streams; `reveal detect` and the
// streaming detector share it through the model.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "reveal/binary_io.h"
#include "reveal/spot.h"

namespace reveal::pipeline {

// The score streams, in this order everywhere (WindowScore::tail_p and level, the model file).
// The trailing-mean stream (the robust-z detector at the longer time scale) may be NaN where
// a window has no trail (the recording's first rows) or the model has none; the PCA streams
// are fused and calibrated on ln(1 + score).
enum FusedStream : std::size_t {
  kRobustZStream = 0,
  kTrailStream,
  kIForestStream,
  kPcaSpeStream,
  kPcaT2Stream,
  kNumStreams
};

// A stream's robust calibration: (score − median) / scale are robust SDs above the reference.
struct Calibration {
  double median = 0, scale = 1;
};

// Median and max(1.4826·MAD, 1e-3·|median|, floor) of a reference score stream.
Calibration calibrate(const std::vector<double>& ref, double floor);

// A window is anomalous when its fused score reaches 1: some fused detector alone flags it.
inline bool is_anomalous(double fused) { return fused >= 1.0; }

// One window's scores after fusion, per stream (FusedStream order).
struct FusedLevels {
  std::array<double, kNumStreams> calibrated{};  // robust SDs above the reference median; 0 for a stream not live
  // P(a reference window scores at least this much) from the stream's EVT tail; NaN without a tail fit.
  std::array<double, kNumStreams> tail_p{};
  // ln(D·p_d) / ln q from the tail, or calibrated / cut without a usable tail; NaN when not live.
  std::array<double, kNumStreams> level{};
  double fused = 0;   // max level over the fused streams (≥ 0); anomalous at ≥ 1
  double robust = 0;  // max calibrated / cut over the fused streams but the trail (the self fit's reweighting)
  bool sustained = false;  // the robust-z stream alone reaches level 1
};

class CalibratedFusion {
 public:
  // `cuts`: per stream the robust-SD level that flags a window without a tail (and that keeps a
  // window out of the tail fits); `floors`: per stream the smallest robust scale, in its units;
  // `window_period_s`: seconds between window starts (turns false_per_day into q). Throws
  // DetectError when false_per_day or window_period_s is not a positive number.
  CalibratedFusion(std::array<double, kNumStreams> cuts, std::array<double, kNumStreams> floors,
                   double window_period_s, double false_per_day);

  // Fits each stream's calibration on its reference scores `ref[d]` (reference windows in one
  // order; an empty stream, or one without a finite score, is not fitted: PCA off, no trail,
  // too few windows), then its EVT tail on the windows that are not `startup` and that no
  // calibration flags (some stream ≥ its cut). NaN scores are left out.
  // `reach[d]`: the highest score stream d can take (a q/D quantile beyond it would silence the
  // stream, which then keeps its robust-SD level). `n_fused`: D, the leading streams fused.
  // `fused`: the streams fused (a stream without a calibration never is); D is their number.
  void fit(const std::array<const std::vector<double>*, kNumStreams>& ref, const std::vector<char>& startup,
           std::array<double, kNumStreams> reach, std::array<bool, kNumStreams> fused);

  // Re-targets the fit to `f` expected false incidents per day (q = f·period / 86400 s, at
  // most 1/2) with the streams `fused` (those with a calibration; D their number); which tails
  // can reach their q/D quantile changes, the tails do not. Throws DetectError when f is not
  // positive.
  void set_false_per_day(double f, std::array<bool, kNumStreams> fused);

  // Fuses one window's raw stream scores (`stream`: robust z, its trailing mean, forest,
  // ln(1 + SPE), ln(1 + T²)); `pca_live`: the PCA streams were scored; a NaN score (no trail)
  // gives that stream no level. Allocates nothing.
  FusedLevels fuse(const std::array<double, kNumStreams>& stream, bool pca_live) const;

  // Score (stream units) at which stream d alone flags a window: its tail's q/D quantile, or
  // median + cut·scale without a usable tail.
  double threshold(std::size_t d) const;

  double window_false_rate() const;
  double false_per_day() const { return false_per_day_; }
  double window_period_s() const { return period_s_; }
  std::size_t fused_streams() const { return n_fused_; }
  bool fused(std::size_t d) const { return d < kNumStreams && fused_[d]; }
  bool fitted(std::size_t d) const { return d < kNumStreams && fitted_[d]; }
  const std::array<double, kNumStreams>& cuts() const { return cut_; }
  const std::array<double, kNumStreams>& reach() const { return reach_; }
  const Calibration& calibration(std::size_t d) const { return cal_[d]; }

  // The model file's part (layout in window_model_io.cpp): 5 × (f64 median, f64 scale), then
  // u64 5 and per stream u8 has-tail [+ SpotTail]. load() needs set_false_per_day() afterwards;
  // it throws DecodeError on malformed data.
  void save(ByteWriter& out) const;
  void load(ByteReader& in, std::array<double, kNumStreams> reach);

 private:
  std::array<double, kNumStreams> cut_, floor_, reach_{};
  std::array<Calibration, kNumStreams> cal_{};
  std::array<SpotTail, kNumStreams> tails_;
  std::array<bool, kNumStreams> fitted_{};    // the stream has a calibration (some finite reference score)
  std::array<bool, kNumStreams> tail_fit_{};  // the stream has an EVT tail (tail_p)
  std::array<bool, kNumStreams> tail_ok_{};   // ... and its q/D threshold is within reach (level from it)
  double period_s_ = 1, false_per_day_ = 1, log_q_ = 0;
  std::array<bool, kNumStreams> fused_{true, true, true, false, false};
  std::size_t n_fused_ = 3;
};

}  // namespace reveal::pipeline
