// Embedded store: one SQLite file (WAL journal) per recording.
//
// Schema v1:
//   meta(key TEXT PRIMARY KEY, value TEXT)   -- RunMetadata fields, "schema_version" = "1"
//   probes(name, available, reason, n_channels)
//   channels(id INTEGER PRIMARY KEY, name, unit, kind, subsystem, counter_bits, help, wrap_range)
//   samples(seq INTEGER PRIMARY KEY, t_unix_ns INTEGER, data BLOB)
//     data = zstd(little-endian float64[n_channels]) for one sample; NaN = gap.
//   events(t_unix_ns INTEGER, source, kind, value REAL, detail)  -- discrete events
//   config(t_unix_ns INTEGER, key, value)  -- host configuration (reveal/config.h): the snapshot
//     at start (rows stamped <= meta start_unix_ns), then one row per changed key at the time of
//     the change (value "" = key removed). Stores written before this table load an empty one.
// Every append commits its own transaction, so a crash loses at most the sample being written;
// the file always opens. (A chunked columnar encoding is planned to reach ≤ 2 KB/s.)
//
// Errors: every failure throws StoreError whose what() is one line naming the file.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "reveal/recording.h"

struct sqlite3;
struct sqlite3_stmt;

namespace reveal {

inline constexpr int kStoreSchemaVersion = 1;

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
  StoreWriter(const std::filesystem::path& path, const RunMetadata& meta,
              const std::vector<ChannelInfo>& channels);
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Appends one sample; row.size() must equal the channel count.
  void append(std::int64_t t_unix_ns, std::span<const double> row);
  // Appends one discrete event (committed immediately).
  void append_event(const Event& e);
  // Configuration: the snapshot stamped `t_unix_ns` (<= meta.start_unix_ns), then changes as
  // they happen (stamped later). Each call is one transaction.
  void append_config(std::int64_t t_unix_ns, const ConfigSnapshot& snapshot);
  void append_config_changes(const std::vector<ConfigChange>& changes);
  // Records end time and exit code and checkpoints the WAL into the main file.
  void finish(std::int64_t end_unix_ns, int exit_code);
  std::size_t samples_written() const { return seq_; }

 private:
  void set_meta(const std::string& key, const std::string& value);
  static std::string fmt_double(double v);
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  std::size_t n_channels_ = 0;
  std::size_t seq_ = 0;
  std::vector<char> compressed_;  // reused per append
  void* cctx_ = nullptr;          // ZSTD_CCtx*
  int lock_fd_ = -1;              // holds flock(LOCK_EX) on the store while writing
};

// Reads a whole recording. Throws StoreError for a missing, empty, truncated, corrupt or
// foreign file, or a newer schema version.
Recording load_recording(const std::filesystem::path& path);

}  // namespace reveal
