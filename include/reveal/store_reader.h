// Reading a store piece by piece, in memory that does not grow with its length (issue #19):
// the samples one committed chunk at a time (at most the writer's chunk length, 128 samples by
// default, then the head log's), the tenant scans one stored row (up to a minute) at a time.
// load_recording() (reveal/store.h) is this reader collecting everything; `reveal detect
// --streaming` and `reveal export` read through it instead, so a week of one host is analysed
// in the memory of a few chunks.
//
// Untrusted files: every check and bound load_recording() documents (reveal/store.h) holds
// here too — the schema objects must be ordinary tables, lengths and counts are bounded before
// anything is sized by them, a chunk's claims are checked on its headers before it is decoded,
// and every SQLite VM step of the reader's life counts against one budget (64 Mi + 256 per
// byte of the store and its WAL). Each failure throws StoreError, one line naming the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "reveal/matrix.h"
#include "reveal/recording.h"
#include "reveal/recording_feed.h"

namespace reveal {

// SampleBlock: reveal/recording_feed.h.

class StoreReader {
 public:
  // Opens `path` read-only and reads what every reader needs: the schema check, metadata, the
  // probe table and the channel table, keeping the channels for which `keep_channel` is true
  // (null = all). Throws StoreError for a missing, empty, truncated, corrupt or foreign file,
  // or a newer schema version.
  explicit StoreReader(const std::filesystem::path& path,
                       const std::function<bool(const ChannelInfo&)>& keep_channel = {});
  ~StoreReader();
  StoreReader(const StoreReader&) = delete;
  StoreReader& operator=(const StoreReader&) = delete;

  // Metadata as stored: a store whose writer never finished has end_unix_ns 0 and complete
  // false (load_recording() then dates its end at the last sample).
  const RunMetadata& meta() const;
  // The kept channels, in store order (SampleBlock's columns).
  const std::vector<ChannelInfo>& channels() const;
  std::size_t store_channels() const;  // all the store's channels, kept or not

  // Samples stamped within [start_unix_ns, end_unix_ns], in store order: begin_samples() starts
  // (again) at the first; each next_samples() overwrites `out` with the next committed chunk's
  // samples in range (reusing its capacity), then once with those of the head log (a store being
  // written, or whose writer was killed); false, `out` empty, when there are no more. A chunk
  // with no sample in range is skipped, so a call never returns an empty block with true.
  // The chunks are those of one snapshot, taken at begin_samples() together with the head log
  // (read then: at most one chunk's samples), so a store being written reads without a gap or
  // an overlap; the snapshot is held until the last chunk is read (a live writer's WAL grows
  // meanwhile). A schema-1 store (pre-release, one frame per sample) comes as one block: its
  // memory grows with its length, and claimed_samples() is 0 for it.
  void begin_samples(std::int64_t start_unix_ns = std::numeric_limits<std::int64_t>::min(),
                     std::int64_t end_unix_ns = std::numeric_limits<std::int64_t>::max());
  bool next_samples(SampleBlock& out);
  // Samples the chunks overlapping [start, end] claim, each chunk's claim clipped to the
  // store's chunk length: an upper bound for reserving, not a count (the head log's not included).
  std::uint64_t claimed_samples(std::int64_t start_unix_ns, std::int64_t end_unix_ns);

  // Discrete events, in time order (all of them: a store holds few).
  std::vector<Event> events();
  // Host configuration: the snapshot at the start, and the changes after it in time order.
  void config(ConfigSnapshot& at_start, std::vector<ConfigChange>& changes);

  // Tenant scans (reveal/tenants.h). tenant_paths(): paths[id] ("" where the store lacks an id;
  // the bounds of load_recording() apply); empty for a store without tenant tables. Scans are
  // read like samples: begin_tenant_scans() then next_tenant_scans(), which replaces `out` with
  // the next stored row's scans stamped within the range whose ids all have paths (a row that
  // does not decode, or leaves none, is skipped; false at the end). Rows come in the order of
  // their first scans: a clock stepped back makes them overlap, and the caller sorts.
  const std::vector<std::string>& tenant_paths();
  bool has_tenant_scans();  // any stored row (it may not decode)
  void begin_tenant_scans(std::int64_t start_unix_ns = std::numeric_limits<std::int64_t>::min(),
                          std::int64_t end_unix_ns = std::numeric_limits<std::int64_t>::max());
  bool next_tenant_scans(std::vector<TenantScan>& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// --- References in bounded memory (issue #19) ---------------------------------------------
//
// Rows to keep of a recording of `rows` samples so that about `budget` are kept: {{0, rows}}
// when rows <= budget, else S = max(1, budget / len) runs of min(len, rows) consecutive rows,
// the j-th centred at (j + phase)/S of the recording (clamped inside it), in order; `phase` in
// [0, 1), else 1/2. Used by `reveal train`, `detect --baseline STORE` and peers
// (reveal/peers.h), so that a reference spans a long recording evenly, every phase of it, in the
// memory of `budget` samples (peers give each host its own phase: hosts of one slice each
// then cover different times of the span).
std::vector<std::pair<std::size_t, std::size_t>> spread_slices(std::size_t rows, std::size_t budget, std::size_t len,
                                                               double phase = 0.5);

// A store's samples as spread_slices(its samples, budget, len) picks them: one Recording per
// slice (the whole store, as load_recording() gives it, when it has at most `budget` samples),
// each with the store's metadata (start and end set to the slice's first and last sample),
// channels and configuration snapshot; events, configuration changes and tenant scans are not
// read for slices. The store is read twice, a chunk at a time: memory is that of the slices.
// Throws StoreError as load_recording().
std::vector<Recording> load_recording_slices(const std::filesystem::path& path, std::size_t budget, std::size_t len);

}  // namespace reveal
