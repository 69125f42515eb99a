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
//   tenant_scans(t_unix_ns INTEGER NOT NULL, data BLOB NOT NULL, t_last_ns INTEGER NOT NULL)
//     -- a batch of consecutive walks of the cgroup tree per row (kTenantScansPerRow = 12, a
//     minute at one scan per 5 s), stamped with its first scan's time, t_last_ns its last's.
//     data = zstd(u8 version 2, varint n_scans, then per scan: varint ns since the previous scan
//     (not for the first), varint n, n zigzag-varint id deltas, then per counter (cpu usage,
//     cpu/memory/io "some" stall totals) n varints: the first scan, and a cgroup absent from the
//     previous scan, whole microseconds + 1 (0 = NaN); the others zigzag deltas of that code
//     against the same cgroup's in the previous scan of the row (src/store/tenant_codec.h).
//     Each row decodes alone. Rows of version 1 (one scan per row, no deltas; the first stores
//     with these tables, whose tenant_scans has no t_last_ns) still load. Measured for 200
//     cgroups (tests/store/tenant_store_test.cpp; a row's first scan: usage log-uniform in
//     1e9..1e12 us, stall totals up to 1e9 us), bytes per scan: 2440 when every counter grows
//     by a random amount at every scan (usage by up to 4 cores, each stall total by up to 0.2 s
//     per 5 s: 1.9 KB of it is the random increments themselves), 1483 when half the cgroups
//     are idle (counters unchanged), 170 when all are; as version 1 rows 3666, 2813 and 2012.
//     On disk (bench/tenants/scan_cost.cpp, 198-cgroup fixture, page-rounded): 375 bytes per
//     scan idle, 2492 busy, against 4130 as version 1 rows: 6.5 and 43 MB a day at one scan
//     per 5 s, against 71 MB. Stores written before these tables load an empty
//     Recording::tenants.
// Schema v3 is v2 in which a chunk may hold fewer channels than the channel table (its columns
// header says how many: the first ones): a store continued by a later writer that had more
// channels (StoreOpen::append). The channels a chunk lacks read NaN.
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
// Tenant scans have no head log: the writer keeps the scans of the row being filled in memory
// and writes the row when it holds kTenantScansPerRow scans, when the next scan comes
// kTenantRowMaxSpanNs (a minute) or more after its first or earlier than its last, at finish(),
// and, best effort, when a writer is destroyed without finish(). A recorder killed, or a
// machine that crashes, loses the tenant scans of up to the last minute (at most 11 scans),
// while its samples survive; a reader of a store being written sees the scans up to the last
// row written.
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

inline constexpr int kStoreSchemaVersion = 2;    // what a new store is written as
inline constexpr int kStoreSchemaContinued = 3;  // a continued store that gained channels; the newest read
inline constexpr std::size_t kDefaultChunkSamples = 128;
// Tenant scans per tenant_scans row (a minute at one scan per 5 s), and the most time between a
// row's first scan and its last (a slower scan period gives rows of fewer scans).
inline constexpr std::size_t kTenantScansPerRow = 12;
inline constexpr std::int64_t kTenantRowMaxSpanNs = 60'000'000'000;
// Bounds load_recording() holds an untrusted store to (see there): channels, samples per chunk
// (also the largest chunk_samples a readable store was written with), values per chunk (n_samples
// x channels: 256 MiB of doubles), a metadata value, and any one value SQLite reads (a chunk's
// columns blob is at most its values' bytes and zstd's overhead).
inline constexpr std::size_t kStoreMaxChannels = std::size_t{1} << 18;
inline constexpr std::size_t kStoreMaxChunkSamples = std::size_t{1} << 16;
inline constexpr std::uint64_t kStoreMaxChunkValues = std::uint64_t{1} << 25;
inline constexpr std::size_t kStoreMaxMetaValueBytes = std::size_t{1} << 20;
inline constexpr std::size_t kStoreMaxValueBytes = (std::size_t{1} << 28) + (std::size_t{1} << 24);

namespace store {
class ChunkCodec;
class HeadLogWriter;
class TenantCodec;
}  // namespace store

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How a writer treats a store already at its path.
enum class StoreOpen {
  replace,  // a new store replaces it (`reveal record`, `reveal import`)
  append,   // the store is continued (`reveal agent` across restarts); created when absent
};

// What a writer opened with StoreOpen::append found (StoreWriter::continuation()).
struct StoreContinuation {
  bool continued = false;           // false: there was no store; a new one was created
  std::size_t samples_before = 0;   // samples the store held when opened (recovered included)
  std::size_t recovered = 0;        // of them, samples recovered from the head log (its last
                                    // writer was killed): committed as a chunk at once
  std::int64_t last_t_unix_ns = 0;  // newest sample's time before this writer (0 = none)
  std::size_t channels_added = 0;   // channels new to the store: NaN in its older samples
  std::size_t channels_absent = 0;  // store channels this writer does not have: NaN from now on
};

// The most channels a continued store may grow to: 2 × the writer's channels + 256. A host
// whose channel set keeps changing (containers, NICs) would otherwise widen it at every restart.
std::size_t max_continued_channels(std::size_t writer_channels);

// Why a writer of `meta` and `channels` cannot continue the store at `path`; "" when it can or
// when there is no store (a missing or empty file). A store is continued when it is a store of
// schema 2 or 3 recorded on the same host (meta hostname) at the same interval, no channel of
// the same name changed kind, counter width or wrap range, and the union of its channels and
// the writer's stays within max_continued_channels(). Never throws: an unreadable or foreign
// file gives its reason.
std::string store_continuation_blocker(const std::filesystem::path& path, const RunMetadata& meta,
                                       const std::vector<ChannelInfo>& channels);

class StoreWriter {
 public:
  // Continuing a store (StoreOpen::append; store_continuation_blocker() must be "", else
  // StoreError): the writer takes the store's lock, commits the samples its head log holds
  // beyond the committed chunks (a writer killed mid-chunk: none is lost), adds the channels
  // the store lacks at the end of its channel table (schema_version becomes 3: a chunk then
  // holds the channels the table had when it was written, the later ones read NaN), and from
  // then on writes each pushed row at its channels' store positions (NaN for store channels
  // this writer lacks; allocation-free). Metadata: start_unix_ns stays the store's first
  // start, end_unix_ns becomes 0 again, the other fields and the probe table are this
  // writer's. Tenant paths already stored keep their ids (a scanner's path is matched by
  // name). Configuration is the caller's (Recorder writes only what changed meanwhile).
  StoreWriter(const std::filesystem::path& path, const RunMetadata& meta, const std::vector<ChannelInfo>& channels,
              StoreOpen mode, std::size_t chunk_samples = kDefaultChunkSamples);
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
  // written up to paths.size() - 1) are inserted at once (one transaction). The scan is copied
  // into the row being filled, which is written (encoded, compressed, one transaction, with the
  // new paths) when full or at the rules under Durability above: until then the scan is not
  // stored. Costs a copy of the scan, and once per row encoding and compressing it (about 1 ms
  // for 12 scans of 200 cgroups) and one commit; allocates nothing once the row's scans have
  // their sizes. Throws StoreError, writing nothing, when ids and counters differ in length, an
  // id has no path (>= paths.size()) or is >= 2^24, `paths` is shorter than at the previous
  // call, or SQLite fails (the scans of the row being written are then lost).
  void append_tenant_scan(const TenantScan& scan, const std::vector<std::string>& paths);
  // Writes the tenant scans not yet written (a partial row), commits the last chunk, records
  // end time and exit code, checkpoints the WAL into the main file and deletes the head log.
  void finish(std::int64_t end_unix_ns, int exit_code);
  // Replaces the sampling interval of the run's metadata: a streaming importer learns it (the
  // median spacing of the rows) only once every row is written.
  void set_interval(double interval_s);
  // Samples appended by this writer (a continued store's earlier ones not counted).
  std::size_t samples_written() const { return seq_ - seq_at_open_; }
  const StoreContinuation& continuation() const { return continuation_; }
  // The store's configuration as its rows leave it (the snapshot, then every change replayed):
  // what a continuing writer compares the host's current configuration with.
  ConfigSnapshot stored_config();
  // Rolling store (`reveal agent`): after each chunk commit, chunks whose last sample is older
  // than `max_age_ns` before the newest sample are deleted (with events, configuration
  // changes and the tenant scan rows whose last scan is as old; tenant paths stay), then the
  // oldest chunks until the encoded sample data is at most `max_bytes`, and with them the tenant
  // scan rows whose last scan is older than the oldest sample left (a row kept may hold up to
  // a minute of older scans). 0 = no bound. SQLite reuses the freed pages, so the file stops growing
  // once the bound is reached (it stays about max_bytes plus the channel table, one chunk and
  // the tenant scans of the samples kept, which the bound does not count).
  void set_retention(std::int64_t max_age_ns, std::uint64_t max_bytes);
  // Encoded sample data currently committed (bytes), as the size bound counts it.
  std::uint64_t committed_sample_bytes();

 private:
  void create(const RunMetadata& meta, const std::vector<ChannelInfo>& channels);
  void continue_store(const RunMetadata& meta, const std::vector<ChannelInfo>& channels);
  void open_db(const char* what);  // opens `path_` read-write and takes the writer's lock; `what` starts the error
  void write_run_meta(const RunMetadata& meta);  // the fields a writer owns, and the probe table
  void insert_channels(const std::vector<ChannelInfo>& channels, std::size_t first_id);
  void start_writing();  // prepared statements, buffers, the head log
  void set_meta(const std::string& key, const std::string& value);
  void commit_chunk();
  void prune();
  void write_tenant_row();  // encodes and inserts the pending scans (in the caller's transaction)
  static std::string fmt_double(double v);
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;  // INSERT INTO chunks
  std::size_t n_channels_ = 0;       // the store's channels (a row's width as stored)
  std::size_t in_channels_ = 0;      // the writer's channels (append()'s row width)
  std::vector<std::size_t> store_col_;  // writer channel -> store column; empty = the same
  std::vector<double> store_row_;       // a row at store positions (continued stores), reused
  std::size_t seq_ = 0;              // the store's next sample number
  std::size_t seq_at_open_ = 0;
  std::size_t meta_chunk_samples_ = 0;  // a continued store's chunk_samples, kept when larger
  StoreContinuation continuation_;
  std::size_t chunk_samples_ = kDefaultChunkSamples;
  std::size_t chunk_n_ = 0;          // samples in the chunk being filled
  std::vector<double> chunk_rows_;   // chunk_samples × n_channels, row-major
  std::vector<std::int64_t> chunk_t_;
  std::vector<char> columns_, times_;  // encoded chunk, reused
  std::unique_ptr<store::ChunkCodec> codec_;
  std::unique_ptr<store::HeadLogWriter> head_;
  std::unique_ptr<store::TenantCodec> tenant_codec_;  // created at the first tenant scan
  std::vector<char> tenant_blob_;                     // encoded row, reused
  std::vector<TenantScan> tenant_row_;                // scans of the row being filled, reused
  std::size_t tenant_row_n_ = 0;                      // how many of them are pending
  sqlite3_stmt* insert_tenant_ = nullptr;             // INSERT INTO tenant_scans
  std::size_t tenant_paths_written_ = 0;              // scanner paths given ids so far
  std::vector<std::uint32_t> tenant_ids_;             // scanner id -> store id
  std::vector<std::pair<std::string, std::uint32_t>> stored_paths_;  // a continued store's, sorted
  std::uint32_t tenant_next_id_ = 0;                  // next free store id
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
  // The most bytes the decoded samples (8 per value and per time) and tenant scans may take;
  // 0: default_load_budget().
  std::uint64_t max_bytes = 0;
};

// Half of what this process may still allocate (src/util/memory_headroom.h: the host's physical
// memory, the address-space limit less the process's size, its cgroups' memory limits less
// their use — a systemd MemoryMax=, a container's limit), at least 1 MiB. A store whose
// samples decode to more is refused rather than run out of memory.
std::uint64_t default_load_budget();

// Reads a recording (all of it by default). Throws StoreError for a missing, empty, truncated,
// corrupt or foreign file, or a newer schema version.
// Untrusted files: a store may be anyone's, so the reader (src/store/store_reader.cpp) opens it
// read-only with SQLite's hardening (SQLITE_DBCONFIG_DEFENSIVE, trusted_schema off, triggers,
// views and extensions disabled, query_only, cell_size_check, small limits: at most
// kStoreMaxValueBytes per value read) and checks, before it reads anything else, that each of
// its tables (meta, probes, channels, chunks or samples, events, config, tenant_paths,
// tenant_scans) that exists is an ordinary table: not a view, a virtual table or a table with
// generated columns; meta, probes and channels must exist. Every SQLite VM step is counted:
// past 64 Mi + 256 per byte of the store and its WAL (a real load runs well under 1 a byte) the query
// is interrupted. Counts and lengths are bounded before anything is sized by them: at most
// 1024 metadata rows of values up to kStoreMaxMetaValueBytes, 4096 probes, kStoreMaxChannels
// channels, names/units/kinds up to 4 KiB and help texts up to 64 KiB, chunk_samples in 1 ..
// kStoreMaxChunkSamples, a chunk's n_samples at most chunk_samples and n_samples x channels at
// most kStoreMaxChunkValues, and its zstd frames must declare exactly the bytes of its samples
// (checked on the frame headers before the chunk is decoded); the values are reserved up front
// only up to the chunks' clipped claims and 32 x the file's size; and the decoded samples and
// tenant scans together stay within LoadOptions::max_bytes (a store of chunks of constants, or
// one chunk's blobs repeated, decodes to thousands of times its size): past it, a StoreError
// that says to read a time range. Each of these is a StoreError. Recording::channels and the columns of
// Recording::values are the kept channels, in store order; metadata, events and configuration
// are always whole.
// Recording::tenants: paths[id] from tenant_paths, sized to the largest id + 1 ("" where a
// store lacks an id; path rows with an id outside [0, min(2^24, path rows + 4096)) or a path over
// 4096 bytes are ignored), and the scans stamped
// within [start_unix_ns, end_unix_ns] (rows are expanded, each scan clipped), in time order. A
// row whose blob does not decode (bad zstd, frame over 64 MiB or over 64 KiB + 256 x its blob
// (a zstd bomb), other version, a scan count of
// 0 or over 4096, truncated, more entries than bytes, id >= 2^24, trailing bytes) loses its
// scans, and a scan that names an id without a path row is skipped, silently; loading goes on:
// the samples are the valuable part.
Recording load_recording(const std::filesystem::path& path, const LoadOptions& options = {});

}  // namespace reveal
