// The reference model over window features: the detectors (robust z, Isolation Forest, PCA
// residual; src/detectors) fitted on reference windows and fused by CalibratedFusion (fusion.h).
// Shared by the offline pipeline (offline.cpp, `reveal detect`) and the streaming detector
// (streaming.cpp, `reveal agent`). Algorithms: include/reveal/offline.h. Choosing the reference
// (columns, floors, the self fit) is reference.h; explaining an incident is src/explain.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "fusion.h"
#include "reveal/binary_io.h"
#include "reveal/offline.h"
#include "reveal/features.h"
#include "reveal/isolation_forest.h"
#include "reveal/pca_residual.h"
#include "reveal/progress.h"
#include "reveal/robust_z.h"

namespace reveal::pipeline {

// Rows of `w` (channel columns `cols`, aligned with the model's channels) that form a reference;
// keep == nullptr takes every window.
struct ReferenceWindows {
  const Windows* windows = nullptr;
  const std::vector<int>* cols = nullptr;
  const std::vector<char>* keep = nullptr;
  // Windows before this index (the recording's start-up) are reference windows for the robust
  // statistics, the forest and the PCA model, but not for the EVT tails.
  std::size_t tail_from = 0;
  // The windows of the trailing-mean stream's reference (its robust z and EVT tail); a subset
  // of `keep`'s. nullptr: the same as keep.
  const std::vector<char>* keep_trail = nullptr;
  // These windows are the recording being judged, in time order (offline self reference): a
  // sustained step of a level constant otherwise keeps its full z (RobustZOptions::
  // steps_stand_out). Honoured when it is the only reference.
  bool self = false;
};

struct WindowScore {
  double z_raw = 0, trail_raw = 0, if_raw = 0, spe_raw = 0, t2_raw = 0;  // detector scores
  double z_cal = 0, trail_cal = 0, if_cal = 0, spe_cal = 0, t2_cal = 0;  // calibrated: robust SDs above the reference median
  // spe/t2 are 0 when the PCA model is off or unfitted; trail_raw is NaN when the window has no
  // trailing mean (the recording's first rows) or the model no trail stream.
  // Per fused detector, its level: ln(D·p_d) / ln(q) from its EVT tail probability p_d (q: the
  // per-window false-alarm rate of DetectOptions::false_per_day, D: detectors fused), or
  // c_d / cut_d when the detector has no tail fit. ≥ 1: the detector alone flags the window.
  // fused = max over detectors (≥ 0); anomalous at ≥ 1 (offline.h, "Calibrated fusion").
  double fused = 0;
  // max(z_cal / z_cut, if_cal / if_cut[, spe_cal / pca_cut]): the robust-SD level, which the
  // self-reference reweighting uses (fit_self) since it tolerates a contaminated reference.
  // Not the trail stream's (trail_cal / z_cut), which fit_self weighs for that stream alone.
  double robust = 0;
  // The robust-z detector alone flags the window (the level of its window or trailing-mean
  // stream ≥ 1): a deviation sustained over the whole window (IncidentTracker's `sustained`).
  bool sustained = false;
  // Per stream (order: robust_z, robust_z_trail, iforest, pca_spe, pca_t2; fusion.h): P(a reference
  // window scores at least this much), from the EVT tail of the reference stream (spot.h);
  // NaN when the stream has no tail fit (too few reference windows, constant tail, PCA off).
  std::array<double, kNumStreams> tail_p{};
  // Per detector (same order): its level, ln(D·p_d) / ln q, or c_d / cut_d without a tail fit
  // (≥ 1: it alone flags the window), computed for the PCA streams too when PCA is fitted but
  // not fused; NaN for a stream that is not fitted.
  std::array<double, kNumStreams> level{};
  // The levels the incident's evidence weighs per detector (explain::IncidentEvidence): the
  // robust-z window stream's, the forest's and the PCA SPE's. The trailing-mean stream detects
  // but does not choose the evidence: counted as robust z, it silenced the forest's view of
  // incidents it had raised (the attribution's rule, src/explain/attribution.cpp), which named
  // memory for fork storms and CPU hogs on the benchmark's host days.
  std::array<double, 3> detector_levels() const {
    return {level[kRobustZStream], level[kIForestStream], level[kPcaSpeStream]};
  }
  // Per subsystem: RMS of the 3 largest |z| among its channels, calibrated on the reference
  // like the robust-z stream and divided by z_cut (≥ 1 anomalous); NaN without channels.
  std::array<double, kNumSubsystems> subsystem{};
};

// The channel of largest |z| in a window's robust z (`z` as WindowModel::score writes it; the
// first on ties, 0 when empty): the window's one-line evidence.
std::size_t strongest_channel(std::span<const double> z);

class WindowModel {
 public:
  // One entry per model channel: the floor of its robust scale and its subsystem.
  // `window_period_s`: seconds between window starts (stride × sampling interval), which turns
  // opts.false_per_day into the per-window false-alarm rate q. `no_trail` (empty, or one flag
  // per channel): channels the trail stream leaves out — the ambient symptoms (hypervisor
  // steal, workload_change.h), which come and go with the neighbours for tens of seconds and
  // are judged by the level they held recently, not by a run's narrow trailing means: scored
  // there, a steal burst after a fault held its incident 19 s past the fault. Throws
  // DetectError when false_per_day or window_period_s is not positive.
  WindowModel(std::vector<double> floors, std::vector<Subsystem> subsystems, const DetectOptions& opts,
              double window_period_s, std::vector<char> no_trail = {});

  // Fits robust z (median, MAD with floors) of the window means and of the trailing means,
  // the Pearson-pruned Isolation Forest features,
  // the forest and the score calibrations on the reference windows, and each stream's EVT tail
  // on the reference windows that no robust-SD calibration flags. Throws DetectError when the
  // reference holds no window.
  void fit(std::span<const ReferenceWindows> refs);

  // Scores window k of `w` whose model channels are the columns `cols`, writing each channel's
  // sustained robust z into `z` (size n_channels()). Allocates nothing; not thread-safe.
  WindowScore score(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> z) const;
  // score() of every window of `w`, the same values, with the forest scored in one batch
  // (IsolationForest::score_many). `z` is resized to windows × n_channels() and row k receives
  // window k's robust z. Allocates; for the offline pipeline. Reports windows featurised and
  // scored to `progress` (if any) as `stage`.
  std::vector<WindowScore> score_all(const Windows& w, const std::vector<int>& cols, Matrix& z,
                                     Progress* progress = nullptr, std::string_view stage = "score") const;

  // Per model channel, the larger rise of window k at the two time scales: out[j] =
  // max(z[j], the held trailing-mean z of trail_stream()), `z` being the window's robust z as
  // score() wrote it. What the symptom gate (workload_change.h) judges a rise by: a runnable
  // task queue 4 tasks longer on a host whose queue varies by ±1 is 5 robust SDs in a window
  // but 9 in its trailing mean. Allocates nothing; not thread-safe.
  void rise_z(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<const double> z,
              std::span<double> out) const;

  // Per model channel, each detector's share of window k's anomaly (each sums to 1, or is all
  // 0 when the detector has nothing): `iforest` from the forest's feature contributions
  // (isolation_forest.h; a kept channel's mean and std features, channels pruned by Pearson get
  // 0); `pca_spe` from the squared SPE residuals (contribution plot; 0 without a PCA fit).
  // Both of size n_channels(). Allocates nothing.
  void contributions(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> iforest,
                     std::span<double> pca_spe) const;

  const RobustZ& robust_z() const { return rz_; }
  // Robust z of the trailing means (WindowStat kTrail); unfitted (no features) without a trail.
  const RobustZ& robust_z_trail() const { return rzt_; }
  // The Isolation Forest's input for window k (size 2·n_model_channels(): robust-standardised
  // mean and std of each pruned channel), as fit() and score() compute it; needs a fit. Public
  // for bench/pipeline/window_features.cpp, which exports the matrix the forest sees.
  void features(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> out) const;
  const std::vector<double>& floors() const { return floors_; }
  std::size_t n_channels() const { return floors_.size(); }
  // The channels the Isolation Forest sees: not constant in the reference, after Pearson pruning.
  std::size_t n_model_channels() const { return kept_.size(); }
  std::size_t reference_windows() const { return n_ref_; }
  // The robust-SD cuts of the robust-z (both time scales), forest and PCA streams (DetectOptions).
  double z_cut() const { return fusion_.cuts()[kRobustZStream]; }
  double if_cut() const { return fusion_.cuts()[kIForestStream]; }
  double pca_cut() const { return fusion_.cuts()[kPcaSpeStream]; }
  // Per-window false-alarm rate q and the number of fused detectors D (offline.h).
  double window_false_rate() const { return fusion_.window_false_rate(); }
  double false_per_day() const { return fusion_.false_per_day(); }
  // Re-targets a fitted model to another expected number of false incidents per day (the
  // tails stay; q and which streams can reach their q/D quantile change). Throws DetectError
  // when `f` is not positive.
  void set_false_per_day(double f);
  // The number of fused streams (D) and whether stream d (tail_p order) is one of them: robust
  // z, its trailing mean when the windows have a trail (WindowOptions::trail > length), the
  // forest, and the PCA SPE with PcaUse::fuse.
  std::size_t fused_detectors() const { return fusion_.fused_streams(); }
  bool fused(std::size_t d) const { return fusion_.fused(d); }
  // Raw score at which stream d (tail_p order) alone flags a window: its EVT tail's
  // q/D quantile, or the robust-SD cut without a tail fit; NaN when the stream is not fitted.
  double threshold(std::size_t d) const;
  std::size_t pca_components() const { return pca_.components(); }
  const std::vector<Subsystem>& subsystems() const { return subsystems_; }
  PcaUse pca_use() const { return pca_use_; }
  double prune_r() const { return prune_r_; }
  std::uint64_t seed() const { return seed_; }

  // Model files (include/reveal/baseline_model.h; window_model_io.cpp): save() writes the
  // options and every member fit() sets, load() rebuilds a model that scores every window
  // bit-identically. A member added to the fitted state must be added to both (and the model
  // format's version raised when old files cannot be read any more). save() needs a fit
  // (std::logic_error); load() throws DecodeError on malformed or inconsistent data.
  void save(ByteWriter& out) const;
  static WindowModel load(ByteReader& in);

 private:
  // Detector 3 input: every model channel's robust z of its window mean (clipped).
  void pca_features(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> out) const;
  double z_stream(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> z,
                  std::array<double, kNumSubsystems>* sub) const;
  // The trailing-mean stream of window k; NaN when no channel has a trailing mean there or the
  // model has no trail. Leaves each channel's held trailing-mean z in ztr_ (0 where not held).
  double trail_stream(const Windows& w, std::size_t k, const std::vector<int>& cols) const;
  // The streams fused, for the fusion's fit and re-targeting.
  std::array<bool, kNumStreams> fused_mask() const;
  // Per stream, the highest score it can take (CalibratedFusion::fit).
  std::array<double, kNumStreams> reach() const;
  // score() given the window's raw forest score.
  WindowScore score_with(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> z,
                         double if_raw) const;

  std::vector<double> floors_;
  std::vector<Subsystem> subsystems_;
  std::vector<char> no_trail_;  // empty or one flag per channel (its trailing-mean median is NaN: z 0)
  double prune_r_;
  std::uint64_t seed_;
  PcaUse pca_use_;
  RobustZ rz_, rzt_;
  bool trail_ = false;  // the trailing-mean stream is scored (a fit found finite trailing means)
  std::vector<std::size_t> kept_;
  IsolationForest forest_;
  PcaResidual pca_;
  CalibratedFusion fusion_;
  double if_reach_ = 1;  // the highest Isolation Forest score its ψ allows
  std::array<Calibration, kNumSubsystems> sub_cal_{};
  std::array<bool, kNumSubsystems> sub_present_{};
  std::size_t n_ref_ = 0;
  // Scoring scratch.
  mutable std::vector<double> vlo_, vhi_, zlo_, zhi_, feat_, pfeat_, fcontrib_, resid_, vtr_, ztr_;
};

}  // namespace reveal::pipeline
