// The reference model over window features and the attribution of an incident: the parts of
// detection shared by the offline pipeline (detect.cpp, `reveal detect`) and the streaming
// detector (streaming.cpp, `reveal agent`). Algorithms: include/reveal/detect.h.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "reveal/agent.h"
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
};

struct WindowScore {
  double z_raw = 0, if_raw = 0, spe_raw = 0, t2_raw = 0;  // detector scores
  double z_cal = 0, if_cal = 0, spe_cal = 0, t2_cal = 0;  // calibrated: robust SDs above the reference median
  // max(z_cal / z_cut, if_cal / if_cut[, spe_cal / pca_cut with PcaUse::fuse]); anomalous at ≥ 1.
  // spe/t2 are 0 when the PCA model is off or unfitted.
  double fused = 0;
  // The robust-z detector alone flags the window (z_cal ≥ z_cut): a deviation sustained over
  // the whole window (IncidentTracker's `sustained`).
  bool sustained = false;
  // Per detector (kTailDetectors order: robust_z, iforest, pca_spe, pca_t2): P(a reference
  // window scores at least this much), from the EVT tail of the reference stream (spot.h);
  // NaN when the stream has no tail fit (too few reference windows, constant tail, PCA off).
  std::array<double, 4> tail_p{};
  // Per subsystem: RMS of the 3 largest |z| among its channels, calibrated on the reference
  // like the robust-z stream and divided by z_cut (≥ 1 anomalous); NaN without channels.
  std::array<double, kNumSubsystems> subsystem{};
};

class WindowModel {
 public:
  // One entry per model channel: the floor of its robust scale and its subsystem.
  WindowModel(std::vector<double> floors, std::vector<Subsystem> subsystems, const DetectOptions& opts);

  // Fits robust z (median, MAD with floors), the Pearson-pruned Isolation Forest features,
  // the forest and the score calibrations on the reference windows. Throws DetectError when
  // the reference holds no window.
  void fit(std::span<const ReferenceWindows> refs);

  // Scores window k of `w` whose model channels are the columns `cols`, writing each channel's
  // sustained robust z into `z` (size n_channels()). Allocates nothing; not thread-safe.
  WindowScore score(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> z) const;
  // score() of every window of `w`, the same values, with the forest scored in one batch
  // (IsolationForest::score_many). `z` is resized to windows × n_channels() and row k receives
  // window k's robust z. Allocates; for the offline pipeline.
  std::vector<WindowScore> score_all(const Windows& w, const std::vector<int>& cols, Matrix& z) const;

  const RobustZ& robust_z() const { return rz_; }
  // The Isolation Forest's input for window k (size 2·n_model_channels(): robust-standardised
  // mean and std of each pruned channel), as fit() and score() compute it; needs a fit. Public
  // for bench/pipeline/window_features.cpp, which exports the matrix the forest sees.
  void features(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<double> out) const;
  const std::vector<double>& floors() const { return floors_; }
  std::size_t n_channels() const { return floors_.size(); }
  std::size_t n_model_channels() const { return kept_.size(); }  // after Pearson pruning
  std::size_t reference_windows() const { return n_ref_; }
  // Raw reference score streams of the last fit (for the offline report).
  double z_cut() const { return z_cut_; }
  double if_cut() const { return if_cut_; }
  double pca_cut() const { return pca_cut_; }
  std::size_t pca_components() const { return pca_.components(); }

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
  std::array<SpotTail, 4> tails_{};
  std::array<bool, 4> tail_ok_{};
  std::array<Calibration, kNumSubsystems> sub_cal_{};
  std::array<bool, kNumSubsystems> sub_present_{};
  std::size_t n_ref_ = 0;
  // Scoring scratch.
  mutable std::vector<double> vlo_, vhi_, zlo_, zhi_, feat_, pfeat_;
};

// Self-reference fit with iterative reweighting (detect.h): fit on every window, drop windows
// with fused ≥ 0.5 (± one window length) and refit, up to 3 passes while at least half remain.
// Returns the final keep mask; `model` is fitted on it and `fused` holds the last pass's
// scores of every window of `w`.
std::vector<char> fit_self(WindowModel& model, const Windows& w, const std::vector<int>& cols,
                           std::vector<double>& fused);

// Attribution of one incident (detect.h): `zbar` is each model channel's mean robust z over
// the incident's anomalous windows, `mean_value` its mean over the incident's samples,
// `chans` the model channels' descriptions. Fills subsystem, confidence, subsystem_shares,
// focus, top and action of `inc`.
void attribute(Incident& inc, std::span<const double> zbar, std::span<const double> mean_value,
               const WindowModel& model, const std::vector<const ChannelInfo*>& chans, int cores,
               int top_channels);

}  // namespace reveal::pipeline
