// Recorder: everything a recording process writes to its store, in one place. `reveal record`
// and `reveal agent` both record through it.
//
// What goes into the store (reveal/store.h), and when:
//   construction  the run metadata and the channel table (a StoreWriter at `path`), then, with
//                 configuration tracking on, the configuration snapshot stamped
//                 meta.start_unix_ns (one transaction);
//   append()      one sample, then the events that came with it (in order), then one
//                 ConfigWatcher tick: each changed key as a configuration row and as a
//                 "config_change" event (reveal/host_config.h config_event);
//   append_event() one more event (the agent's incident notes);
//   finish()      end time and exit code; the store is left one self-contained file.
//
// Cost: append() allocates nothing between chunk commits, unless the configuration is due to
// be re-read (every `config_every_samples` samples) or an event is passed; then it costs what
// StoreWriter::append_event and ConfigWatcher::tick cost.
// Errors: StoreError (one line naming the file) from the store, as StoreWriter throws them. A
// failed append() may have written part of its sample's data (the sample, some events); the
// caller decides whether to go on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "reveal/recording.h"
#include "reveal/store.h"

namespace reveal {

class ConfigWatcher;

class Recorder {
 public:
  // No configuration tracking: samples and events only.
  Recorder(const std::filesystem::path& path, const RunMetadata& meta, const std::vector<ChannelInfo>& channels);
  // Configuration tracking: reads the configuration under `config_root` ("/" or a fixture tree)
  // now, stores it as the snapshot, and re-reads it every `config_every_samples` appends (0 counts
  // as 1).
  Recorder(const std::filesystem::path& path, const RunMetadata& meta, const std::vector<ChannelInfo>& channels,
           const std::filesystem::path& config_root, std::size_t config_every_samples);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // One sample (row.size() = the channel count), stamped t_unix_ns, with the events that came
  // with it; then the configuration tick.
  void append(std::int64_t t_unix_ns, std::span<const double> row, std::span<const Event> events = {});
  void append_event(const Event& e);
  // Records the end time and exit code (StoreWriter::finish).
  void finish(std::int64_t end_unix_ns, int exit_code);

  std::size_t samples_written() const { return store_.samples_written(); }
  // The store itself, for what only some recorders use (the agent's retention bound).
  StoreWriter& store() { return store_; }

 private:
  StoreWriter store_;
  std::unique_ptr<ConfigWatcher> config_;  // null: no configuration tracking
};

}  // namespace reveal
