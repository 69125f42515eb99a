// Embedded store: one SQLite file (WAL journal) per recording, plus while it is being written a
// head log "<store>-head" beside it.
//
// Schema v2 (written since issue #3's overhead work; v1 stores still load):
//   meta(key TEXT PRIMARY KEY, value TEXT)   -- RunMetadata fields, "schema_version" = "2",
//                                               "chunk_samples" = the writer's chunk length
//   probes(name, available, reason, n_channels)
//   channels(id INTEGER PRIMARY KEY, name, unit, kind, subsystem, counter_bits, help, wrap_range)
//   chunks(first_seq INTEGER PRIMARY KEY, n_samples, t_first_ns, t_last_ns, times BLOB, columns BLOB)
//     samples first_seq .. first_seq+n_samples-1, time-ordered; `columns` holds one zstd frame
//     per group of 64 channels of XOR-delta, byte-shuffled float64 columns and `times` the
//     delta-coded timestamps (src/store/chunk_codec.h). NaN = gap. A reader decodes only the
//     chunks overlapping its time range and the channel groups it asks for.
//   events(t_unix_ns INTEGER, source, kind, value REAL, detail)  -- discrete events
//   config(t_unix_ns INTEGER, key, value)  -- host configuration (reveal/host_config.h): the snapshot
//     at start (rows stamped <= meta start_unix_ns), then one row per changed key at the time of
//     the change (value "" = key removed). Stores written before this table load an empty one.
//   tenant_paths(id INTEGER PRIMARY KEY, path TEXT NOT NULL)  -- cgroup paths of the tenant scans
//     (reveal/tenants.h), id = index into TenantTimeline::paths; written as they first appear.
//   tenant_scans(t_unix_ns INTEGER NOT NULL, data BLOB NOT NULL)  -- one row per walk of the
//     cgroup tree: data = zstd(u8 version 1, varint n, n zigzag-varint id deltas, then per
//     counter (cpu usage, cpu/memory/io "some" stall totals) n varints of whole microseconds + 1,
//     0 = NaN) (src/store/tenant_codec.h). Each row decodes alone. Measured for 200 cgroups
//     (tests/store/tenant_store_test.cpp), usage log-uniform in 1e9..1e12 us: 3666 bytes per
//     scan with stall totals uniform in 0..1e9 us (22 bytes an entry before zstd; random
//     digits do not compress), 2020 bytes when half the stall totals are 0 (idle tenants) and
//     the rest log-uniform up to 1e9 us: 63 and 35 MB a day at one scan per 5 s. Stores
//     written before these tables load an empty Recording::tenants.
// Schema v1 had samples(seq INTEGER PRIMARY KEY, t_unix_ns, data BLOB = zstd(float64[n_channels]))
// instead of chunks: one SQLite transaction per sample, which cost about 0.1-0.2 ms of CPU each.
//
// Durability: samples are buffered into a chunk of `chunk_samples` (default 128, or 10 minutes,
// whichever comes first) and each chunk is one SQLite transaction. Every sample is also appended
// to the head log with one write(2) before append() returns (src/store/head_log.h), so a recorder
// killed at any moment loses at most the sample being written: readers take the committed
// chunks, then the head log's samples. finish() commits the last chunk, checkpoints the WAL
// and deletes the head log, leaving one self-contained file. Copy a store while it is recorded,
// or after its recorder crashed, together with its -head (and -wal) files.
//
// Errors: every failure throws StoreError whose what() is one line naming the file.
#pragma once

#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "reveal/recording.h"

struct sqlite3;
struct sqlite3_stmt;

namespace reveal {

inline constexpr int kStoreSchemaVersion = 2;
inline constexpr std::size_t kDefaultChunkSamples = 128;

namespace store {
class ChunkCodec;
class HeadLogWriter;
class TenantCodec;
}  // namespace store

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class StoreWriter {
 public:
  // Creates (replacing a previous store at `path`) and writes metadata and channels. Throws
  // StoreError, touching nothing, when `path` is not a regular file, is a file that is not a
  // store, or is a store another StoreWriter (any process) still holds: a writer holds an
  // flock(2) on its store until destroyed, so two recorders never write one file.
  // `chunk_samples` (>= 1) sets how many samples each committed chunk holds (tests use small ones).
  StoreWriter(const std::filesystem::path& path, const RunMetadata& meta,
              const std::vector<ChannelInfo>& channels,
              std::size_t chunk_samples = kDefaultChunkSamples);
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Appends one sample; row.size() must equal the channel count. Durable (head log) on return;
  // commits a chunk every chunk_samples samples. Allocates nothing between chunk commits.
  void append(std::int64_t t_unix_ns, std::span<const double> row);
  // Appends one discrete event (committed immediately).
  void append_event(const Event& e);
  // Configuration: the snapshot stamped `t_unix_ns` (<= meta.start_unix_ns), then changes as
  // they happen (stamped later). Each call is one transaction.
  void append_config(std::int64_t t_unix_ns, const ConfigSnapshot& snapshot);
  void append_config_changes(const std::vector<ConfigChange>& changes);
  // Appends one tenant scan (reveal/tenants.h). `paths` is the scanner's whole id -> path list,
  // which only grows: the paths not written by an earlier call (ids from the count already
  // written up to paths.size() - 1) are inserted, then the scan, in one transaction. Costs
  // encoding and compressing the scan (about 50 µs for 200 cgroups) and one commit; the scan is
  // committed on return. Throws StoreError, writing nothing, when ids and counters differ in
  // length, an id has no path (>= paths.size()), `paths` is shorter than at the previous call,
  // or SQLite fails.
  void append_tenant_scan(const TenantScan& scan, const std::vector<std::string>& paths);
  // Commits the last chunk, records end time and exit code, checkpoints the WAL into the main
  // file and deletes the head log.
  void finish(std::int64_t end_unix_ns, int exit_code);
  std::size_t samples_written() const { return seq_; }
  // Rolling store (`reveal agent`): after each chunk commit, chunks whose last sample is older
  // than `max_age_ns` before the newest sample are deleted (with events, configuration
  // changes and tenant scans as old; tenant paths stay), then the oldest chunks until the
  // encoded sample data is at most `max_bytes`, and with them the tenant scans older than the
  // oldest sample left. 0 = no bound. SQLite reuses the freed pages, so the file stops growing
  // once the bound is reached (it stays about max_bytes plus the channel table, one chunk and
  // the tenant scans of the samples kept, which the bound does not count).
  void set_retention(std::int64_t max_age_ns, std::uint64_t max_bytes);
  // Encoded sample data currently committed (bytes), as the size bound counts it.
  std::uint64_t committed_sample_bytes();

 private:
  void set_meta(const std::string& key, const std::string& value);
  void commit_chunk();
  void prune();
  static std::string fmt_double(double v);
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;  // INSERT INTO chunks
  std::size_t n_channels_ = 0;
  std::size_t seq_ = 0;              // samples appended so far
  std::size_t chunk_samples_ = kDefaultChunkSamples;
  std::size_t chunk_n_ = 0;          // samples in the chunk being filled
  std::vector<double> chunk_rows_;   // chunk_samples × n_channels, row-major
  std::vector<std::int64_t> chunk_t_;
  std::vector<char> columns_, times_;  // encoded chunk, reused
  std::unique_ptr<store::ChunkCodec> codec_;
  std::unique_ptr<store::HeadLogWriter> head_;
  std::unique_ptr<store::TenantCodec> tenant_codec_;  // created at the first tenant scan
  std::vector<char> tenant_blob_;                     // encoded scan, reused
  std::size_t tenant_paths_written_ = 0;              // rows in tenant_paths
  int lock_fd_ = -1;                 // holds flock(LOCK_EX) on the store while writing
  std::int64_t start_unix_ns_ = 0;
  std::int64_t max_age_ns_ = 0;      // set_retention
  std::uint64_t max_bytes_ = 0;
};

// Throws StoreError unless `path` is absent or a store that may be replaced: a regular file
// that is empty or an SQLite database, not held by a running writer. (StoreWriter's check;
// `reveal agent` runs it on its store and on <store>.prev before rotating them, `reveal import`
// on its output before renaming the new store over it.)
void check_replaceable_store(const std::filesystem::path& path);

// A file a store at <path> may have beside it, named <path><suffix>.
struct StoreSideFile {
  const char* suffix;
  // False for "-shm", SQLite's shared-memory index of the WAL: rebuilt from the WAL, it holds
  // none of the recording (sizes "on disk" of a store leave it out or not, as they document).
  bool holds_data;
};

// Every side file a store may have, the only list of them:
//   "-wal"      SQLite's write-ahead log: committed chunks not yet checkpointed into <path>
//   "-shm"      SQLite's shared-memory index of the WAL
//   "-head"     the head log: samples of the chunk being filled (src/store/head_log.h)
//   "-journal"  SQLite's rollback journal (a store in WAL mode writes none; other SQLite tools may)
// While a store is written, or after its writer crashed, its data is <path> with its side files:
// they are moved, copied and removed together. StoreWriter::finish() leaves none.
std::span<const StoreSideFile> store_side_files();

// Removes `path` and its side files, each if present; errors are ignored (a file that cannot
// be removed stays).
void remove_store_files(const std::filesystem::path& path);

// What to read of a store: channels for which `keep_channel` is true (null = all) and samples
// stamped within [start_unix_ns, end_unix_ns]. Only the chunks and channel groups that overlap
// are decoded (schema v2).
struct LoadOptions {
  std::function<bool(const ChannelInfo&)> keep_channel;
  std::int64_t start_unix_ns = std::numeric_limits<std::int64_t>::min();
  std::int64_t end_unix_ns = std::numeric_limits<std::int64_t>::max();
};

// Reads a recording (all of it by default). Throws StoreError for a missing, empty, truncated,
// corrupt or foreign file, or a newer schema version. Recording::channels and the columns of
// Recording::values are the kept channels, in store order; metadata, events and configuration
// are always whole.
// Recording::tenants: paths[id] from tenant_paths, sized to the largest id + 1 ("" where a
// store lacks an id; path rows with an id outside [0, 2^24) are ignored), and the scans stamped
// within [start_unix_ns, end_unix_ns], in time order. A scan whose blob does not decode (bad
// zstd, frame over 64 MiB, other version, truncated, more entries than bytes, id >= 2^24) or
// names an id without a path row is skipped, silently, and loading goes on: the samples are
// the valuable part.
Recording load_recording(const std::filesystem::path& path, const LoadOptions& options = {});

}  // namespace reveal
