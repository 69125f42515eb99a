// The reference model over window features and the attribution of an incident: the parts of
// detection shared by the offline pipeline (detect.cpp, `reveal detect`) and the streaming
// detector (streaming.cpp, `reveal agent`). Algorithms: include/reveal/detect.h.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "reveal/agent.h"
#include "reveal/binary_io.h"
#include "reveal/detect.h"
#include "reveal/features.h"
#include "reveal/incident.h"
#include "reveal/isolation_forest.h"
#include "reveal/pca_residual.h"
#include "reveal/spot.h"
#include "reveal/robust_z.h"

namespace reveal::pipeline {

struct Calibration {
  double median = 0, scale = 1;
};
// Column `c` of `m` restricted to its finite values.
std::vector<double> finite_column(const Matrix& m, std::size_t c);

// Median and max(1.4826·MAD, 1e-3·|median|, floor) of a reference score stream.
Calibration calibrate(const std::vector<double>& ref, double floor);

// Columns of `s` worth scoring: at least half the samples finite, and not constant on `basis`
// (the run itself when `basis` is null). Used by self mode; baseline mode adds its own checks.
std::vector<int> varying_columns(const Series& s);

// Per scored column, the smallest deviation worth a robust SD (unit resolution; memory-sized
// levels at least 0.5 % of the host's RAM when proc.meminfo:MemTotal is in `s`).
std::vector<double> channel_floors(const Series& s, const std::vector<int>& cols);

// Rows of `w` (channel columns `cols`, aligned with the model's channels) that form a reference;
// keep == nullptr takes every window.
struct ReferenceWindows {
  const Windows* windows = nullptr;
  const std::vector<int>* cols = nullptr;
  const std::vector<char>* keep = nullptr;
  // Windows before this index (the recording's start-up) are reference windows for the robust
  // statistics, the forest and the PCA model, but not for the EVT tails.
  std::size_t tail_from = 0;
};

struct WindowScore {
  double z_raw = 0, if_raw = 0, spe_raw = 0, t2_raw = 0;  // detector scores
  double z_cal = 0, if_cal = 0, spe_cal = 0, t2_cal = 0;  // calibrated: robust SDs above the reference median
  // spe/t2 are 0 when the PCA model is off or unfitted.
  // Per fused detector, its level: ln(D·p_d) / ln(q) from its EVT tail probability p_d (q: the
  // per-window false-alarm rate of DetectOptions::false_per_day, D: detectors fused), or
  // c_d / cut_d when the detector has no tail fit. ≥ 1: the detector alone flags the window.
  // fused = max over detectors (≥ 0); anomalous at ≥ 1 (detect.h, "Calibrated fusion").
  double fused = 0;
  // max(z_cal / z_cut, if_cal / if_cut[, spe_cal / pca_cut]): the robust-SD level, which the
  // self-reference reweighting uses (fit_self) since it tolerates a contaminated reference.
  double robust = 0;
  // The robust-z detector alone flags the window (its level ≥ 1): a deviation sustained over
  // the whole window (IncidentTracker's `sustained`).
  bool sustained = false;
  // Per detector (order: robust_z, iforest, pca_spe, pca_t2): P(a reference
  // window scores at least this much), from the EVT tail of the reference stream (spot.h);
  // NaN when the stream has no tail fit (too few reference windows, constant tail, PCA off).
  std::array<double, 4> tail_p{};
  // Per detector (same order): its level, ln(D·p_d) / ln q, or c_d / cut_d without a tail fit
  // (≥ 1: it alone flags the window), computed for the PCA streams too when PCA is fitted but
  // not fused; NaN for a stream that is not fitted.
  std::array<double, 4> level{};
  // Per subsystem: RMS of the 3 largest |z| among its channels, calibrated on the reference
  // like the robust-z stream and divided by z_cut (≥ 1 anomalous); NaN without channels.
  std::array<double, kNumSubsystems> subsystem{};
};

class WindowModel {
 public:
  // One entry per model channel: the floor of its robust scale and its subsystem.
  // `window_period_s`: seconds between window starts (stride × sampling interval), which turns
  // opts.false_per_day into the per-window false-alarm rate q. Throws DetectError when
  // false_per_day or window_period_s is not positive.
  WindowModel(std::vector<double> floors, std::vector<Subsystem> subsystems, const DetectOptions& opts,
              double window_period_s);

  // Fits robust z (median, MAD with floors), the Pearson-pruned Isolation Forest features,
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

  // Per model channel, each detector's share of window k's anomaly (each sums to 1, or is all
  // 0 when the detector has nothing): `iforest` from the forest's feature contributions
  // (isolation_forest.h; a kept channel's mean and std features, channels pruned by Pearson get
  // 0); `pca_spe` from the squared SPE residuals (contribution plot; 0 without a PCA fit).
  // Both of size n_channels(). Allocates nothing.
  void contributions(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> iforest,
                     std::span<double> pca_spe) const;

  const RobustZ& robust_z() const { return rz_; }
  // The Isolation Forest's input for window k (size 2·n_model_channels(): robust-standardised
  // mean and std of each pruned channel), as fit() and score() compute it; needs a fit. Public
  // for bench/pipeline/window_features.cpp, which exports the matrix the forest sees.
  void features(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> out) const;
  const std::vector<double>& floors() const { return floors_; }
  std::size_t n_channels() const { return floors_.size(); }
  // The channels the Isolation Forest sees: not constant in the reference, after Pearson pruning.
  std::size_t n_model_channels() const { return kept_.size(); }
  std::size_t reference_windows() const { return n_ref_; }
  // Raw reference score streams of the last fit (for the offline report).
  double z_cut() const { return z_cut_; }
  double if_cut() const { return if_cut_; }
  double pca_cut() const { return pca_cut_; }
  // Per-window false-alarm rate q and the number of fused detectors D (detect.h).
  double window_false_rate() const { return std::exp(log_q_); }
  double false_per_day() const { return false_per_day_; }
  // Re-targets a fitted model to another expected number of false incidents per day (the
  // tails stay; q and which streams can reach their q/D quantile change). Throws DetectError
  // when `f` is not positive.
  void set_false_per_day(double f);
  std::size_t fused_detectors() const { return pca_use_ == PcaUse::fuse && pca_.fitted() ? 3 : 2; }
  // Raw score at which detector d (tail_p order) alone flags a window: its EVT tail's
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
  // score() given the window's raw forest score.
  WindowScore score_with(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> z,
                         double if_raw) const;

  std::vector<double> floors_;
  std::vector<Subsystem> subsystems_;
  double z_cut_, if_cut_, pca_cut_, prune_r_;
  std::uint64_t seed_;
  PcaUse pca_use_;
  RobustZ rz_;
  std::vector<std::size_t> kept_;
  IsolationForest forest_;
  PcaResidual pca_;
  Calibration z_cal_, if_cal_, spe_cal_, t2_cal_;
  double false_per_day_ = 1, period_s_ = 1, log_q_ = 0;
  double if_reach_ = 1;  // the highest Isolation Forest score its ψ allows
  std::array<SpotTail, 4> tails_;
  std::array<bool, 4> tail_fit_{};  // the stream has an EVT tail (tail_p)
  std::array<bool, 4> tail_ok_{};   // ... and its q/D threshold is within reach (level from it)
  std::array<Calibration, kNumSubsystems> sub_cal_{};
  std::array<bool, kNumSubsystems> sub_present_{};
  std::size_t n_ref_ = 0;
  // Scoring scratch.
  mutable std::vector<double> vlo_, vhi_, zlo_, zhi_, feat_, pfeat_, fcontrib_, resid_;
};

// The Series every reference mode scores: to_rates() then add_derived() (detect.cpp).
Series prepare_series(const Recording& r);

// Seconds between the starts of `w`'s windows as recorded (the recording's interval when it
// has one window); positive.
double window_period_s(const Windows& w, const Recording& r);

// A recording's first `settle_windows` windows (its start-up) in a reference of `windows`:
// when they are at most a quarter of it they stay out of the reference (`drop` = them) and of
// the EVT tails; in a shorter recording, where they may be most of its clean data, they stay in
// the reference but out of the tails (`tail_from`), unless that leaves less than half for them.
struct StartupUse {
  std::size_t drop = 0, tail_from = 0;
};
StartupUse startup_reference(std::size_t windows, std::size_t settle_windows);

// Self-reference fit with iterative reweighting (detect.h): fit on every window but the start-up
// (startup_reference()), drop windows whose robust-SD level (WindowScore::robust) is ≥ 0.5
// (± one window length) and refit, up to 3 passes while at least half remain. Returns the final
// keep mask; `model` is fitted on it. Each pass's scoring is reported to `progress` (if any) as
// stage "fit".
std::vector<char> fit_self(WindowModel& model, const Windows& w, const std::vector<int>& cols,
                           std::size_t settle_windows, Progress* progress = nullptr);

// What the Isolation Forest and the PCA residual say about an incident: per model channel,
// their mean contribution share over its anomalous windows (WindowModel::contributions; empty
// spans = none), and each detector's peak level over the incident (robust_z, iforest, pca_spe).
struct DetectorEvidence {
  std::span<const double> iforest, pca_spe;
  std::array<double, 3> peak_level{};
};

// Attribution of one incident (detect.h): `zbar` is each model channel's mean robust z over
// the incident's anomalous windows, `mean_value` its mean over the incident's samples,
// `chans` the model channels' descriptions. Each detector gives subsystem shares: robust_z
// from effect sizes (detect.h), iforest and pca_spe from their contribution shares with the
// same channel weights (falls ×0.25, per-CPU ÷ CPUs; each subsystem: the sum of its 3 largest).
// The incident's shares are robust_z's when its peak level is ≥ 1; otherwise the mean of
// iforest's and pca_spe's weighted by peak level over those ≥ 1 (robust_z when none is). The
// top channels are those of largest |z| when robust_z takes part, else of largest combined share.
// Fills subsystem, confidence, subsystem_shares, detectors, focus, top and action of `inc`.
void attribute(Incident& inc, std::span<const double> zbar, std::span<const double> mean_value,
               const WindowModel& model, const std::vector<const ChannelInfo*>& chans, int cores,
               int top_channels, const DetectorEvidence& more);

}  // namespace reveal::pipeline
