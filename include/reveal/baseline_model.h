// Baseline models: the reference of baseline mode (offline.h) fitted once on known-good runs,
// kept in a versioned file and used to score other runs without the training stores.
//   reveal train GOOD.db [GOOD.db ...] -o MODEL     BaselineModel::train, then save
//   reveal detect RUN --baseline MODEL              BaselineModel::load, then detect(run, model)
//   reveal detect RUN --baseline GOOD.db ...        the same, trained in memory
//
// Training (BaselineModel::train) turns each known-good recording into rates, derived channels
// and windows exactly as detect() does for a run, then:
//   * channels: those present in every training store (by name) with a finite value in at least
//     half of the pooled samples, in the first usable store's channel order. A channel constant
//     in training is kept: any change from its value beyond the channel's floor is evidence
//     (a retransmit counter idle at 0 in every good run).
//   * floors (src/pipeline/reference.h, channel_floors): per channel the smallest over the training
//     stores (memory-sized floors depend on each host's RAM).
//   * the window model (pipeline::WindowModel::fit) on every window of every training store:
//     robust z, Pearson pruning, Isolation Forest, PCA residual, stream calibrations, SPOT tails.
//   Stores too short for one window of rates are skipped (notes()); none left is a DetectError.
//
// Scoring a run against a model (detect(run, model, opts)): channels are matched by name. A model
// channel absent from the run is scored as missing (robust z 0, the Isolation Forest's NaN fill,
// PCA's mean) and a note says how many; run channels not in the model are not scored (note). The
// window length, stride and trail, cuts, prune_r, PCA use and variance, and seed are the model's; only
// the incident rule, settle, top_channels and window_z of `opts` apply.
//
// File format, version 2 (every integer little-endian; version 1 had no trailing-mean stream):
//   offset 0   8 bytes  magic "REVEALMD"
//   offset 8   u32      format version (2)
//   offset 12  …        one zstd frame (with content size and checksum) holding the payload
// Payload: a sequence of sections, each a 4-byte ASCII tag, a u64 length and that many bytes:
//   "META"  JSON metadata (UTF-8), below.
//   "WMOD"  the fitted window model in the binary encoding of binary_io.h, written by
//           pipeline::WindowModel::save (layout in src/pipeline/window_model_io.cpp): channel
//           floors and subsystems; cuts, prune_r, seed, PCA use; RobustZ (per channel median and
//           scale); the same for the trailing means; the Pearson-kept channel indices; the
//           Isolation Forest (options, NaN fill values, every tree's nodes); the PCA residual
//           (mean, axes, 1/λ); the median/scale calibrations of the five score streams; their SPOT tails (t, γ, σ, n, peaks and the
//           sorted reference stream); per-subsystem calibrations; the reference window count.
// Both sections are required, in that order; a reader skips sections it does not know. A
// change that older readers cannot read raises the format version; a reader refuses any
// version but its own.
// META: {"format": "reveal.model", "format_version": 2, "reveal_version", "created" (ISO 8601
//   UTC), "created_unix_ns", "training": [{"path", "hostname", "samples", "windows", "start",
//   "end", "start_unix_ns", "end_unix_ns", "interval_s"}], "window": {"length", "stride", "trail"},
//   "detect": {"z_cut", "if_cut", "pca_cut", "pca" ("off"|"report"|"fuse"), "pca_variance",
//   "prune_r", "seed"}, "model": {"channels", "model_channels" (after Pearson pruning),
//   "reference_windows", "pca_components"}, "channels": [{"name", "unit",
//   "subsystem", "floor"}]}. The channel list here is authoritative for names and units; the
//   floors and subsystems scored are WMOD's (and must agree).
// Untrusted files: a reader allocates at most what the file's payload bound allows. The payload
// may be at most kModelMaxPayload (256 MiB; a model is ~1 MB, ~0.7 kB per channel plus the
// forest's ~1.4 MB, so 100k channels fit) and at most 1 MiB + 64 x its compressed frame (models
// are mostly doubles, which compress well under 2x), checked against the frame's declared
// content size before anything is allocated, or while decompressing in steps (the window
// limited to 32 MiB) for a frame without one; a larger file is refused before it is read.
// Sections of unknown tags are skipped up to kModelMaxUnknownSections of together
// kModelMaxUnknownBytes; more is an error.
// Errors: a missing or unreadable file, wrong magic, an unsupported version, a truncated or
// corrupt payload, one past the bounds above throw ModelError with one line naming the file;
// never undefined behaviour.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/offline.h"

namespace reveal {

namespace pipeline {
class WindowModel;
}

inline constexpr std::uint64_t kModelMaxPayload = std::uint64_t(256) << 20;
inline constexpr std::size_t kModelMaxUnknownSections = 16;
inline constexpr std::uint64_t kModelMaxUnknownBytes = std::uint64_t(1) << 20;

// A model file that cannot be used (see the file comment). A DetectError, so callers that
// handle detection errors handle it too.
class ModelError : public DetectError {
 public:
  using DetectError::DetectError;
};

inline constexpr std::string_view kModelMagic = "REVEALMD";
inline constexpr std::uint32_t kModelFormatVersion = 2;

// One known-good recording a model was trained on.
struct TrainingStore {
  std::string path;  // as given to train(); "" when unknown
  std::string hostname;
  std::size_t samples = 0, windows = 0;
  std::int64_t start_unix_ns = 0, end_unix_ns = 0;
  double interval_s = 1.0;
};

// Known-good stores read for training in memory that does not grow with their length (issue
// #19): when the stores together hold more than kTrainingMaxValues samples × channels, each
// contributes max(2 × S, kTrainingMaxValues / channels / stores) samples in slices of S =
// max(kTrainingSliceSamples, 4 × (window length + 1)) samples spread evenly over it
// (reveal/store_reader.h load_recording_slices), else each is read whole. `paths` names every
// recording (a store's path once per slice), as train() takes them.
inline constexpr std::size_t kTrainingMaxValues = std::size_t{1} << 22;
inline constexpr std::size_t kTrainingSliceSamples = 60;
struct TrainingInput {
  std::vector<Recording> recordings;
  std::vector<std::string> paths;
};
// Throws StoreError (a store that cannot be read). `progress`: "load", stores read.
TrainingInput load_training_stores(const std::vector<std::string>& stores, std::size_t window_length,
                                   Progress* progress = nullptr);

class BaselineModel {
 public:
  // Fits a model on `good` (see the file comment); `paths[i]` names good[i] in the metadata
  // (empty, or one per recording). Consecutive recordings of one non-empty path (the slices of
  // one long store: load_training_stores) are one training store in the metadata, with a
  // note. Options used: window, z/if/pca cuts, pca, pca_variance,
  // prune_r, seed. Throws DetectError when no store is long enough or they share no channel.
  static BaselineModel train(const std::vector<Recording>& good, const DetectOptions& opts,
                             const std::vector<std::string>& paths = {});

  // The model file's bytes, and back; `name` (a path) prefixes decode's error messages.
  std::string encode() const;
  static BaselineModel decode(std::string_view bytes, const std::string& name);
  // Writes `path` (through a temporary file renamed over it) / reads it. ModelError on failure.
  void save(const std::string& path) const;
  static BaselineModel load(const std::string& path);

  std::uint32_t format_version() const { return format_version_; }
  const std::string& reveal_version() const { return reveal_version_; }
  std::int64_t created_unix_ns() const { return created_unix_ns_; }
  const std::vector<TrainingStore>& training() const { return training_; }
  std::vector<std::string> training_hosts() const;
  // The model channels (name, unit, subsystem) in the model's column order, and their floors.
  const std::vector<ChannelInfo>& channels() const { return channels_; }
  const std::vector<double>& floors() const;
  // The options the model was fitted with (window, cuts, pca, pca_variance, prune_r, seed).
  const DetectOptions& options() const { return opts_; }
  // The options a run is scored against this model with: options(), with the call's incident
  // rule, settle_s, top_channels, window_z, false_per_day and progress (detect(run, model,
  // call) and StreamingOptions::baseline).
  DetectOptions scoring_options(const DetectOptions& call) const;
  std::size_t model_channels() const;  // after Pearson pruning (the Isolation Forest's input)
  std::size_t reference_windows() const;
  std::size_t pca_components() const;
  // The META block (JSON text).
  std::string metadata_json() const;
  // The file it was loaded from ("" when trained in memory or decoded from bytes).
  const std::string& source() const { return source_; }
  // What train() skipped (stores too short), one line each; not saved.
  const std::vector<std::string>& notes() const { return notes_; }
  const pipeline::WindowModel& window_model() const { return *wm_; }

 private:
  // No default constructor: `detect(run, {}, opts)` must stay self mode, not a model.
  struct Fields {};
  explicit BaselineModel(Fields) {}
  std::uint32_t format_version_ = kModelFormatVersion;
  std::string reveal_version_;
  std::int64_t created_unix_ns_ = 0;
  std::vector<TrainingStore> training_;
  std::vector<ChannelInfo> channels_;
  DetectOptions opts_;
  std::string source_;
  std::vector<std::string> notes_;
  std::shared_ptr<const pipeline::WindowModel> wm_;
};

// True when `path` is a readable file that starts with the model magic (a model file, perhaps
// damaged past its first bytes), false otherwise (a store, a missing file).
bool is_model_file(const std::string& path);

// Scores `run` against a baseline model (see the file comment). DetectResult: mode "baseline",
// baseline_hosts = the training hosts, baseline_model = model.source(). Throws DetectError when
// the run is too short for one window of rates or shares no channel with the model.
DetectResult detect(const Recording& run, const BaselineModel& model, const DetectOptions& opts);

}  // namespace reveal
