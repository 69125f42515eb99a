// SQLite-backed store; format documented in include/reveal/store.h.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "reveal/store.h"
#include "store/chunk_codec.h"
#include "store/head_log.h"
#include "store/sqlite_util.h"
#include "store/tenant_codec.h"

namespace reveal {
namespace {
using store::fail;
using store::head_path;
using store::Stmt;
// zstd level of the chunk frames: written once per chunk (every ~2 minutes at 1 Hz), so a
// stronger level than the per-sample head log's costs little.
constexpr int kChunkZstdLevel = 3;
// A chunk is committed after this much time even when not full (slow intervals).
constexpr std::int64_t kChunkMaxSpanNs = 600'000'000'000;
// zstd level of tenant scan rows: some 10 KB a minute, so a strong level costs little.
constexpr int kTenantZstdLevel = 9;

// The side files (store_side_files); the head log is written and read here.
constexpr StoreSideFile kSideFiles[] = {{"-wal", true}, {"-shm", false}, {"-head", true}, {"-journal", true}};

static_assert(std::endian::native == std::endian::little, "store format assumes little-endian");

void exec(sqlite3* db, const std::filesystem::path& p, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    fail(p, msg);
  }
}

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

void check_replaceable_store(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.empty()) fail(path, "empty output path");
  // Overwrite only a previous store: never a device, a directory or someone's other file.
  const auto st = std::filesystem::symlink_status(path, ec);
  if (ec || !std::filesystem::exists(st)) return;
  if (!std::filesystem::is_regular_file(st)) fail(path, "exists and is not a regular file; refusing to overwrite it");
  char magic[16] = {};
  std::ifstream f(path, std::ios::binary);
  f.read(magic, sizeof magic);
  if (f.gcount() > 0 && std::memcmp(magic, "SQLite format 3", 16) != 0)
    fail(path, "exists and is not a Reveal store; refusing to overwrite it (remove it first)");
  // A store another recorder is still writing (it holds the flock below) is never replaced.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);
    if (busy) fail(path, "is being recorded by another reveal process; refusing to overwrite it");
  }
}

std::span<const StoreSideFile> store_side_files() { return kSideFiles; }

void remove_store_files(const std::filesystem::path& path) {
  std::error_code ignore;
  std::filesystem::remove(path, ignore);
  for (const auto& side : store_side_files()) std::filesystem::remove(path.string() + side.suffix, ignore);
}

StoreWriter::StoreWriter(const std::filesystem::path& path, const RunMetadata& meta,
                         const std::vector<ChannelInfo>& channels, std::size_t chunk_samples)
    : StoreWriter(path, meta, channels, StoreOpen::replace, chunk_samples) {}

StoreWriter::StoreWriter(const std::filesystem::path& path, const RunMetadata& meta,
                         const std::vector<ChannelInfo>& channels, StoreOpen mode, std::size_t chunk_samples)
    : path_(path), n_channels_(channels.size()), in_channels_(channels.size()),
      chunk_samples_(std::max<std::size_t>(1, chunk_samples)) {
  // What readers accept (kStoreMax*, above) is what is written.
  if (channels.size() > kStoreMaxChannels)
    fail(path, std::to_string(channels.size()) + " channels, more than a store holds (" + std::to_string(kStoreMaxChannels) + ")");
  check_replaceable_store(path);
  std::error_code ec;
  const bool existing = std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > 0 && !ec;
  try {
    if (mode == StoreOpen::append && existing) {
      if (const std::string why = store_continuation_blocker(path, meta, channels); !why.empty())
        fail(path, "cannot be continued: " + why);
      continue_store(meta, channels);
    } else {
      create(meta, channels);
    }
  } catch (...) {
    sqlite3_finalize(insert_);
    insert_ = nullptr;
    sqlite3_close(db_);
    db_ = nullptr;
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
    throw;
  }
  start_writing();
}

void StoreWriter::open_db(const char* what) {
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "cannot open";
    sqlite3_close(db_);
    db_ = nullptr;
    fail(path_, std::string(what) + ": " + msg);
  }
  // Held until this writer is destroyed: marks the store as being recorded (see above).
  // Readers (detect, info) do not look at it; SQLite's own locks are fcntl locks, independent.
  lock_fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (lock_fd_ >= 0 && ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    fail(path_, "is being recorded by another reveal process; refusing to overwrite it");
  }
  // A small page cache: the writer only appends a chunk now and then (keeps RSS low).
  exec(db_, path_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-512;");
}

void StoreWriter::create(const RunMetadata& meta, const std::vector<ChannelInfo>& channels) {
  remove_store_files(path_);
  open_db("cannot create store");
  exec(db_, path_,
       "BEGIN;"
       "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
       "CREATE TABLE probes(name TEXT PRIMARY KEY, available INTEGER NOT NULL, reason TEXT NOT NULL,"
       " n_channels INTEGER NOT NULL);"
       "CREATE TABLE channels(id INTEGER PRIMARY KEY, name TEXT NOT NULL, unit TEXT NOT NULL,"
       " kind TEXT NOT NULL, subsystem TEXT NOT NULL, counter_bits INTEGER NOT NULL, help TEXT NOT NULL,"
       " wrap_range REAL NOT NULL DEFAULT 0);"
       "CREATE TABLE chunks(first_seq INTEGER PRIMARY KEY, n_samples INTEGER NOT NULL,"
       " t_first_ns INTEGER NOT NULL, t_last_ns INTEGER NOT NULL, times BLOB NOT NULL, columns BLOB NOT NULL);"
       "CREATE TABLE events(t_unix_ns INTEGER NOT NULL, source TEXT NOT NULL, kind TEXT NOT NULL,"
       " value REAL NOT NULL, detail TEXT NOT NULL);"
       "CREATE TABLE config(t_unix_ns INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL);"
       "CREATE TABLE tenant_paths(id INTEGER PRIMARY KEY, path TEXT NOT NULL);"
       "CREATE TABLE tenant_scans(t_unix_ns INTEGER NOT NULL, data BLOB NOT NULL, t_last_ns INTEGER NOT NULL);");
  set_meta("schema_version", std::to_string(kStoreSchemaVersion));
  set_meta("start_unix_ns", str(meta.start_unix_ns));
  start_unix_ns_ = meta.start_unix_ns;
  write_run_meta(meta);
  insert_channels(channels, 0);
  exec(db_, path_, "COMMIT;");
}

void StoreWriter::write_run_meta(const RunMetadata& meta) {
  set_meta("hostname", meta.hostname);
  set_meta("kernel", meta.kernel);
  set_meta("cpu_model", meta.cpu_model);
  set_meta("cores", std::to_string(meta.cores));
  set_meta("interval_s", fmt_double(meta.interval_s));
  set_meta("end_unix_ns", "0");
  set_meta("command", meta.command);
  set_meta("exit_code", "0");
  set_meta("root", meta.root);
  set_meta("reveal_version", meta.reveal_version);
  exec(db_, path_, "DELETE FROM probes;");
  Stmt st(db_, path_, "INSERT INTO probes VALUES(?,?,?,?)");
  for (const auto& p : meta.probes) {
    sqlite3_bind_text(st.s, 1, p.name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st.s, 2, p.available ? 1 : 0);
    sqlite3_bind_text(st.s, 3, p.reason.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st.s, 4, static_cast<sqlite3_int64>(p.n_channels));
    if (sqlite3_step(st.s) != SQLITE_DONE) fail(path_, sqlite3_errmsg(db_));
    sqlite3_reset(st.s);
  }
}

void StoreWriter::insert_channels(const std::vector<ChannelInfo>& channels, std::size_t first_id) {
  Stmt st(db_, path_, "INSERT INTO channels VALUES(?,?,?,?,?,?,?,?)");
  for (std::size_t i = 0; i < channels.size(); ++i) {
    const auto& c = channels[i];
    sqlite3_bind_int64(st.s, 1, static_cast<sqlite3_int64>(first_id + i));
    sqlite3_bind_text(st.s, 2, c.name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 3, c.unit.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 4, std::string(to_string(c.kind)).c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.s, 5, std::string(to_string(c.subsystem)).c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st.s, 6, c.counter_bits);
    sqlite3_bind_text(st.s, 7, c.help.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st.s, 8, c.wrap_range);
    if (sqlite3_step(st.s) != SQLITE_DONE) fail(path_, sqlite3_errmsg(db_));
    sqlite3_reset(st.s);
  }
}

void StoreWriter::continue_store(const RunMetadata& meta, const std::vector<ChannelInfo>& channels) {
  open_db("cannot open store");
  // The store's channels (names, in id order) and where its samples end.
  std::vector<std::string> names;
  {
    Stmt st(db_, path_, "SELECT name FROM channels ORDER BY id");
    while (sqlite3_step(st.s) == SQLITE_ROW) names.push_back(st.text(0));
  }
  const std::size_t old_nc = names.size();
  {
    Stmt st(db_, path_, "SELECT COALESCE(MAX(first_seq + n_samples), 0), COALESCE(MAX(t_last_ns), 0) FROM chunks");
    if (sqlite3_step(st.s) == SQLITE_ROW) {
      seq_ = static_cast<std::size_t>(sqlite3_column_int64(st.s, 0));
      continuation_.last_t_unix_ns = sqlite3_column_int64(st.s, 1);
    }
  }
  std::size_t stored_chunk_samples = 0;
  {
    Stmt st(db_, path_, "SELECT key, value FROM meta WHERE key IN ('start_unix_ns', 'chunk_samples')");
    while (sqlite3_step(st.s) == SQLITE_ROW) {
      if (st.text(0) == "start_unix_ns") start_unix_ns_ = std::atoll(st.text(1).c_str());
      else stored_chunk_samples = static_cast<std::size_t>(std::max(0LL, std::atoll(st.text(1).c_str())));
    }
  }
  // A writer killed mid-chunk left its samples in the head log: they become a chunk now, at the
  // store's width then (before any channel is added).
  codec_ = std::make_unique<store::ChunkCodec>();
  {
    store::HeadSamples head = store::read_head_log(head_path(path_), old_nc, seq_);
    const std::size_t n = head.t_unix_ns.size();
    if (n > 0) {
      codec_->encode_columns(std::span<const double>(head.values.data()).first(n * old_nc), n, old_nc,
                             kChunkZstdLevel, columns_);
      codec_->encode_times(head.t_unix_ns, kChunkZstdLevel, times_);
      Stmt ins(db_, path_, "INSERT INTO chunks VALUES(?,?,?,?,?,?)");
      sqlite3_bind_int64(ins.s, 1, static_cast<sqlite3_int64>(seq_));
      sqlite3_bind_int64(ins.s, 2, static_cast<sqlite3_int64>(n));
      sqlite3_bind_int64(ins.s, 3, head.t_unix_ns.front());
      sqlite3_bind_int64(ins.s, 4, head.t_unix_ns.back());
      sqlite3_bind_blob(ins.s, 5, times_.data(), static_cast<int>(times_.size()), SQLITE_STATIC);
      sqlite3_bind_blob(ins.s, 6, columns_.data(), static_cast<int>(columns_.size()), SQLITE_STATIC);
      if (sqlite3_step(ins.s) != SQLITE_DONE) fail(path_, std::string("cannot recover the head log: ") + sqlite3_errmsg(db_));
      seq_ += n;
      continuation_.recovered = n;
      continuation_.last_t_unix_ns = std::max(continuation_.last_t_unix_ns, head.t_unix_ns.back());
    }
  }
  // The 32-bit counters a store made 64 bits wide (store_continuation_blocker lets them by):
  // declared with their width now, for the samples before as after (the kernel's values were
  // 32-bit all along).
  {
    Stmt up(db_, path_, "UPDATE channels SET counter_bits = ? WHERE name = ? AND counter_bits = 64");
    for (const auto& c : channels) {
      if (c.counter_bits != 32) continue;
      sqlite3_bind_int(up.s, 1, c.counter_bits);
      sqlite3_bind_text(up.s, 2, c.name.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(up.s) != SQLITE_DONE) fail(path_, sqlite3_errmsg(db_));
      sqlite3_reset(up.s);
    }
  }
  continuation_.continued = true;
  continuation_.samples_before = seq_;
  seq_at_open_ = seq_;
  // Each writer channel's store column: its namesake's, or a new one at the end.
  std::vector<std::pair<std::string_view, std::size_t>> by_name(old_nc);
  for (std::size_t i = 0; i < old_nc; ++i) by_name[i] = {names[i], i};
  std::sort(by_name.begin(), by_name.end());
  std::vector<ChannelInfo> added;
  std::vector<char> written(old_nc, 0);
  store_col_.resize(channels.size());
  for (std::size_t i = 0; i < channels.size(); ++i) {
    const auto it = std::lower_bound(by_name.begin(), by_name.end(), std::pair<std::string_view, std::size_t>{channels[i].name, 0});
    if (it != by_name.end() && it->first == channels[i].name) {
      store_col_[i] = it->second;
      written[it->second] = 1;
    } else {
      store_col_[i] = old_nc + added.size();
      added.push_back(channels[i]);
    }
  }
  n_channels_ = old_nc + added.size();
  continuation_.channels_added = added.size();
  continuation_.channels_absent = static_cast<std::size_t>(std::count(written.begin(), written.end(), 0));
  bool identity = n_channels_ == channels.size();
  for (std::size_t i = 0; identity && i < channels.size(); ++i) identity = store_col_[i] == i;
  if (identity) store_col_.clear();
  else store_row_.assign(n_channels_, 0.0);
  exec(db_, path_, "BEGIN;");
  if (!added.empty()) {
    insert_channels(added, old_nc);
    set_meta("schema_version", std::to_string(kStoreSchemaContinued));
  }
  write_run_meta(meta);
  // Readers bound a chunk's samples by chunk_samples: the stored chunks' bound stays valid.
  meta_chunk_samples_ = stored_chunk_samples;
  exec(db_, path_, "COMMIT;");
  // Tenant paths already stored keep their ids.
  {
    Stmt st(db_, path_, "SELECT id, path FROM tenant_paths");
    while (sqlite3_step(st.s) == SQLITE_ROW) {
      const std::int64_t id = sqlite3_column_int64(st.s, 0);
      if (id < 0 || id >= static_cast<std::int64_t>(store::kTenantMaxIds)) continue;
      stored_paths_.emplace_back(st.text(1), static_cast<std::uint32_t>(id));
      tenant_next_id_ = std::max<std::uint32_t>(tenant_next_id_, static_cast<std::uint32_t>(id) + 1);
    }
    std::sort(stored_paths_.begin(), stored_paths_.end());
  }
}

void StoreWriter::start_writing() {
  chunk_samples_ = std::min<std::size_t>(
      {chunk_samples_, kStoreMaxChunkSamples, std::max<std::size_t>(1, kStoreMaxChunkValues / std::max<std::size_t>(1, n_channels_))});
  set_meta("chunk_samples", std::to_string(std::max(chunk_samples_, meta_chunk_samples_)));
  if (sqlite3_prepare_v2(db_, "INSERT INTO chunks VALUES(?,?,?,?,?,?)", -1, &insert_, nullptr) != SQLITE_OK)
    fail(path_, sqlite3_errmsg(db_));
  chunk_rows_.assign(chunk_samples_ * n_channels_, 0.0);
  chunk_t_.assign(chunk_samples_, 0);
  if (!codec_) codec_ = std::make_unique<store::ChunkCodec>();
  head_ = std::make_unique<store::HeadLogWriter>();
  head_->open(head_path(path_), n_channels_);
}

ConfigSnapshot StoreWriter::stored_config() {
  ConfigSnapshot now;
  Stmt st(db_, path_, "SELECT key, value FROM config ORDER BY t_unix_ns, rowid");
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    std::string key = st.text(0), value = st.text(1);
    if (value.empty()) now.erase(key);
    else now[std::move(key)] = std::move(value);
  }
  if (rc != SQLITE_DONE) fail(path_, std::string("cannot read the stored configuration: ") + sqlite3_errmsg(db_));
  return now;
}

std::size_t max_continued_channels(std::size_t writer_channels) { return 2 * writer_channels + 256; }

std::string store_continuation_blocker(const std::filesystem::path& path, const RunMetadata& meta,
                                       const std::vector<ChannelInfo>& channels) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0) return "";
  try {
    check_replaceable_store(path);
  } catch (const StoreError& e) {
    return e.what();
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "cannot open";
    sqlite3_close(db);
    return msg;
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> guard(db, sqlite3_close);
  try {
    std::map<std::string, std::string> m;
    {
      Stmt st(db, path, "SELECT key, value FROM meta WHERE key IN ('schema_version', 'hostname', 'interval_s')");
      while (sqlite3_step(st.s) == SQLITE_ROW) m[st.text(0)] = st.text(1);
    }
    const int version = std::atoi(m["schema_version"].c_str());
    if (version != kStoreSchemaVersion && version != kStoreSchemaContinued)
      return "store schema version '" + m["schema_version"] + "' (2 or 3 continue)";
    if (m["hostname"] != meta.hostname) return "recorded on host '" + m["hostname"] + "'";
    const double interval = std::atof(m["interval_s"].c_str());
    if (!(std::fabs(interval - meta.interval_s) <= 1e-9 * std::max(1.0, meta.interval_s)))
      return "recorded every " + m["interval_s"] + " s, not every " + std::to_string(meta.interval_s) + " s";
    std::vector<std::pair<std::string_view, const ChannelInfo*>> mine(channels.size());
    for (std::size_t i = 0; i < channels.size(); ++i) mine[i] = {channels[i].name, &channels[i]};
    std::sort(mine.begin(), mine.end());
    std::size_t stored = 0, shared = 0;
    Stmt st(db, path, "SELECT name, kind, counter_bits, wrap_range FROM channels ORDER BY id");
    int rc;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
      ++stored;
      const std::string name = st.text(0);
      const auto it = std::lower_bound(mine.begin(), mine.end(), std::pair<std::string_view, const ChannelInfo*>{name, nullptr});
      if (it == mine.end() || it->first != name) continue;
      ++shared;
      const ChannelInfo& c = *it->second;
      // A counter now declared 32 bits wide that a store made it 64 continues (the width it
      // always had in the kernel: diskstats' times): the store takes the new width
      // (continue_store); any other change of kind, width or wrap range does not.
      const int stored_bits = sqlite3_column_int(st.s, 2);
      const bool width_ok = stored_bits == c.counter_bits || (stored_bits == 64 && c.counter_bits == 32);
      if (st.text(1) != to_string(c.kind) || !width_ok || sqlite3_column_double(st.s, 3) != c.wrap_range)
        return "channel " + name + " changed kind, counter width or wrap range";
    }
    if (rc != SQLITE_DONE) return std::string("corrupt store: ") + sqlite3_errmsg(db);
    const std::size_t width = stored + channels.size() - shared;
    if (width > std::min(max_continued_channels(channels.size()), kStoreMaxChannels))
      return "its channel table would grow to " + std::to_string(width) + " channels (at most " +
             std::to_string(max_continued_channels(channels.size())) + ")";
  } catch (const StoreError& e) {
    return e.what();
  }
  return "";
}

// Without finish() (an error mid-run) the head log stays: readers still find its samples. The
// pending tenant scans are written if SQLite still can.
StoreWriter::~StoreWriter() {
  if (tenant_row_n_ > 0 && db_) {
    try {
      exec(db_, path_, "BEGIN;");
      write_tenant_row();
      exec(db_, path_, "COMMIT;");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    }
  }
  sqlite3_finalize(insert_tenant_);
  sqlite3_finalize(insert_);
  sqlite3_close(db_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::string StoreWriter::fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void StoreWriter::set_meta(const std::string& key, const std::string& value) {
  Stmt st(db_, path_, "INSERT OR REPLACE INTO meta VALUES(?,?)");
  sqlite3_bind_text(st.s, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 2, value.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(st.s) != SQLITE_DONE) fail(path_, sqlite3_errmsg(db_));
}

void StoreWriter::append(std::int64_t t_unix_ns, std::span<const double> row) {
  if (row.size() != in_channels_) fail(path_, "sample width does not match channel count");
  if (!store_col_.empty()) {  // a continued store: the row at its channels' store positions
    std::fill(store_row_.begin(), store_row_.end(), std::numeric_limits<double>::quiet_NaN());
    for (std::size_t i = 0; i < row.size(); ++i) store_row_[store_col_[i]] = row[i];
    row = store_row_;
  }
  head_->append(seq_, t_unix_ns, row);  // durable first: the sample survives a kill from here on
  std::copy(row.begin(), row.end(), chunk_rows_.begin() + static_cast<std::ptrdiff_t>(chunk_n_ * n_channels_));
  chunk_t_[chunk_n_] = t_unix_ns;
  ++chunk_n_;
  ++seq_;
  if (chunk_n_ == chunk_samples_ || t_unix_ns - chunk_t_[0] >= kChunkMaxSpanNs) commit_chunk();
}

void StoreWriter::commit_chunk() {
  if (chunk_n_ == 0) return;
  const std::size_t n = chunk_n_;
  codec_->encode_columns(std::span<const double>(chunk_rows_).first(n * n_channels_), n, n_channels_,
                         kChunkZstdLevel, columns_);
  codec_->encode_times(std::span<const std::int64_t>(chunk_t_).first(n), kChunkZstdLevel, times_);
  sqlite3_bind_int64(insert_, 1, static_cast<sqlite3_int64>(seq_ - n));
  sqlite3_bind_int64(insert_, 2, static_cast<sqlite3_int64>(n));
  sqlite3_bind_int64(insert_, 3, chunk_t_[0]);
  sqlite3_bind_int64(insert_, 4, chunk_t_[n - 1]);
  sqlite3_bind_blob(insert_, 5, times_.data(), static_cast<int>(times_.size()), SQLITE_STATIC);
  sqlite3_bind_blob(insert_, 6, columns_.data(), static_cast<int>(columns_.size()), SQLITE_STATIC);
  const int rc = sqlite3_step(insert_);
  sqlite3_reset(insert_);
  if (rc != SQLITE_DONE) fail(path_, std::string("append failed: ") + sqlite3_errmsg(db_));
  chunk_n_ = 0;
  head_->clear();  // a crash before this leaves samples in both: readers skip the committed ones
  prune();
}

void StoreWriter::set_retention(std::int64_t max_age_ns, std::uint64_t max_bytes) {
  max_age_ns_ = std::max<std::int64_t>(max_age_ns, 0);
  max_bytes_ = max_bytes;
}

std::uint64_t StoreWriter::committed_sample_bytes() {
  Stmt st(db_, path_, "SELECT COALESCE(SUM(length(times) + length(columns)), 0) FROM chunks");
  return sqlite3_step(st.s) == SQLITE_ROW ? static_cast<std::uint64_t>(sqlite3_column_int64(st.s, 0)) : 0;
}

void StoreWriter::prune() {
  if (max_age_ns_ == 0 && max_bytes_ == 0) return;
  exec(db_, path_, "BEGIN;");
  try {
    if (max_age_ns_ > 0) {
      std::int64_t newest = 0;
      {
        Stmt st(db_, path_, "SELECT COALESCE(MAX(t_last_ns), 0) FROM chunks");
        if (sqlite3_step(st.s) == SQLITE_ROW) newest = sqlite3_column_int64(st.s, 0);
      }
      const std::int64_t cutoff = newest - max_age_ns_;
      for (const char* sql : {"DELETE FROM chunks WHERE t_last_ns < ?1", "DELETE FROM events WHERE t_unix_ns < ?1",
                              "DELETE FROM config WHERE t_unix_ns < ?1 AND t_unix_ns > ?2",
                              "DELETE FROM tenant_scans WHERE t_last_ns < ?1"}) {
        Stmt st(db_, path_, sql);
        sqlite3_bind_int64(st.s, 1, cutoff);
        sqlite3_bind_int64(st.s, 2, start_unix_ns_);  // the start snapshot stays
        if (sqlite3_step(st.s) != SQLITE_DONE) fail(path_, std::string("prune failed: ") + sqlite3_errmsg(db_));
      }
    }
    if (max_bytes_ > 0) {
      std::uint64_t total = committed_sample_bytes();
      if (total > max_bytes_) {
        std::int64_t drop_below = -1;  // delete chunks with first_seq <= this
        {
          Stmt st(db_, path_, "SELECT first_seq, length(times) + length(columns) FROM chunks ORDER BY first_seq");
          while (total > max_bytes_ && sqlite3_step(st.s) == SQLITE_ROW) {
            drop_below = sqlite3_column_int64(st.s, 0);
            total -= std::min<std::uint64_t>(total, static_cast<std::uint64_t>(sqlite3_column_int64(st.s, 1)));
          }
        }
        Stmt del(db_, path_, "DELETE FROM chunks WHERE first_seq <= ?");
        sqlite3_bind_int64(del.s, 1, drop_below);
        if (sqlite3_step(del.s) != SQLITE_DONE) fail(path_, std::string("prune failed: ") + sqlite3_errmsg(db_));
        // Tenant scans older than the oldest sample left explain nothing (none when no chunk is).
        Stmt scans(db_, path_,
                   "DELETE FROM tenant_scans WHERE t_last_ns < (SELECT MIN(t_first_ns) FROM chunks)");
        if (sqlite3_step(scans.s) != SQLITE_DONE) fail(path_, std::string("prune failed: ") + sqlite3_errmsg(db_));
      }
    }
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    throw;
  }
  exec(db_, path_, "COMMIT;");
}

void StoreWriter::append_event(const Event& e) {
  Stmt st(db_, path_, "INSERT INTO events VALUES(?,?,?,?,?)");
  sqlite3_bind_int64(st.s, 1, e.t_unix_ns);
  sqlite3_bind_text(st.s, 2, e.source.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 3, e.kind.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(st.s, 4, e.value);
  sqlite3_bind_text(st.s, 5, e.detail.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(st.s) != SQLITE_DONE) fail(path_, std::string("event append failed: ") + sqlite3_errmsg(db_));
}

// --- configuration snapshot and changes (table config) ---
void StoreWriter::append_config(std::int64_t t_unix_ns, const ConfigSnapshot& snapshot) {
  std::vector<ConfigChange> rows;
  rows.reserve(snapshot.size());
  for (const auto& [k, v] : snapshot) rows.push_back({t_unix_ns, k, "", v});
  append_config_changes(rows);
}

void StoreWriter::append_config_changes(const std::vector<ConfigChange>& changes) {
  if (changes.empty()) return;
  exec(db_, path_, "BEGIN;");
  try {
    Stmt st(db_, path_, "INSERT INTO config VALUES(?,?,?)");
    for (const auto& c : changes) {
      sqlite3_bind_int64(st.s, 1, c.t_unix_ns);
      sqlite3_bind_text(st.s, 2, c.key.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(st.s, 3, c.value.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(st.s) != SQLITE_DONE) fail(path_, std::string("config append failed: ") + sqlite3_errmsg(db_));
      sqlite3_reset(st.s);
    }
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    throw;
  }
  exec(db_, path_, "COMMIT;");
}

// --- tenant scans (tables tenant_paths, tenant_scans) ---
void StoreWriter::append_tenant_scan(const TenantScan& scan, const std::vector<std::string>& paths) {
  if (scan.counters.size() != scan.ids.size()) fail(path_, "tenant scan: ids and counters differ in length");
  if (paths.size() < tenant_paths_written_)
    fail(path_, "tenant scan: " + std::to_string(paths.size()) + " paths, fewer than the " +
                    std::to_string(tenant_paths_written_) + " already written");
  for (const std::uint32_t id : scan.ids)
    if (id >= paths.size()) fail(path_, "tenant scan: id " + std::to_string(id) + " has no path");
  // Store ids of the scanner's new paths: a continued store's id for a path it already holds,
  // else the next free one (the same number as the scanner's when the store is new).
  const bool new_paths = paths.size() > tenant_paths_written_;
  std::vector<std::uint32_t> new_ids;
  std::vector<char> new_row;  // 1: the path needs a tenant_paths row
  std::uint32_t next_id = tenant_next_id_;
  for (std::size_t k = tenant_paths_written_; k < paths.size(); ++k) {
    const auto it = std::lower_bound(stored_paths_.begin(), stored_paths_.end(), std::pair<std::string, std::uint32_t>{paths[k], 0});
    const bool known = it != stored_paths_.end() && it->first == paths[k];
    new_ids.push_back(known ? it->second : next_id++);
    new_row.push_back(known ? 0 : 1);
  }
  const auto store_id = [&](std::uint32_t id) {
    return id < tenant_ids_.size() ? tenant_ids_[id] : new_ids[id - tenant_ids_.size()];
  };
  for (const std::uint32_t id : scan.ids)
    if (store_id(id) >= store::kTenantMaxIds) fail(path_, "tenant scan: id " + std::to_string(store_id(id)) + " is too large");
  if (!tenant_codec_) {
    tenant_codec_ = std::make_unique<store::TenantCodec>();
    tenant_row_.resize(kTenantScansPerRow);
  }
  // The scan as stored: the row's copy, its ids the store's.
  const auto add_scan = [&] {
    TenantScan& copy = tenant_row_[tenant_row_n_];
    copy = scan;
    for (std::uint32_t& id : copy.ids) id = store_id(id);
    ++tenant_row_n_;  // after the copy, which may throw
  };
  // The pending row is written first when this scan cannot join it: a row spans less than
  // kTenantRowMaxSpanNs and its scans are in time order (a clock stepped back starts a new row).
  // (The span is taken unsigned: it is >= 0 there and may not fit in an int64.)
  const bool close_first =
      tenant_row_n_ > 0 &&
      (scan.t_unix_ns < tenant_row_[tenant_row_n_ - 1].t_unix_ns ||
       static_cast<std::uint64_t>(scan.t_unix_ns) - static_cast<std::uint64_t>(tenant_row_[0].t_unix_ns) >=
           static_cast<std::uint64_t>(kTenantRowMaxSpanNs));
  const bool fills = (close_first ? 0 : tenant_row_n_) + 1 == kTenantScansPerRow;
  if (!new_paths && !close_first && !fills) {  // the common case: buffered, nothing written
    add_scan();
    return;
  }
  exec(db_, path_, "BEGIN;");
  try {
    if (new_paths) {
      Stmt st(db_, path_, "INSERT INTO tenant_paths VALUES(?,?)");
      for (std::size_t k = 0; k < new_ids.size(); ++k) {
        if (!new_row[k]) continue;
        const std::string& p = paths[tenant_paths_written_ + k];
        sqlite3_bind_int64(st.s, 1, static_cast<sqlite3_int64>(new_ids[k]));
        sqlite3_bind_text(st.s, 2, p.c_str(), static_cast<int>(p.size()), SQLITE_STATIC);
        if (sqlite3_step(st.s) != SQLITE_DONE)
          fail(path_, std::string("tenant path append failed: ") + sqlite3_errmsg(db_));
        sqlite3_reset(st.s);
      }
    }
    if (close_first) write_tenant_row();
    add_scan();
    if (tenant_row_n_ == kTenantScansPerRow) write_tenant_row();
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    tenant_row_n_ = 0;  // documented: the row being written is lost
    throw;
  }
  exec(db_, path_, "COMMIT;");
  tenant_ids_.insert(tenant_ids_.end(), new_ids.begin(), new_ids.end());
  tenant_next_id_ = next_id;
  tenant_paths_written_ = paths.size();
}

void StoreWriter::write_tenant_row() {
  if (tenant_row_n_ == 0) return;
  const std::span<const TenantScan> row(tenant_row_.data(), tenant_row_n_);
  try {
    tenant_codec_->encode_row(row, kTenantZstdLevel, tenant_blob_);
  } catch (const std::exception& e) {
    fail(path_, e.what());
  }
  if (!insert_tenant_ &&
      sqlite3_prepare_v2(db_, "INSERT INTO tenant_scans(t_unix_ns, data, t_last_ns) VALUES(?,?,?)", -1,
                         &insert_tenant_, nullptr) != SQLITE_OK)
    fail(path_, sqlite3_errmsg(db_));
  sqlite3_bind_int64(insert_tenant_, 1, row.front().t_unix_ns);
  sqlite3_bind_blob(insert_tenant_, 2, tenant_blob_.data(), static_cast<int>(tenant_blob_.size()), SQLITE_STATIC);
  sqlite3_bind_int64(insert_tenant_, 3, row.back().t_unix_ns);
  const int rc = sqlite3_step(insert_tenant_);
  sqlite3_reset(insert_tenant_);
  if (rc != SQLITE_DONE) fail(path_, std::string("tenant scan append failed: ") + sqlite3_errmsg(db_));
  tenant_row_n_ = 0;
}

void StoreWriter::set_interval(double interval_s) { set_meta("interval_s", fmt_double(interval_s)); }

void StoreWriter::finish(std::int64_t end_unix_ns, int exit_code) {
  commit_chunk();
  exec(db_, path_, "BEGIN;");
  try {
    write_tenant_row();  // the partial row of tenant scans
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    tenant_row_n_ = 0;
    throw;
  }
  set_meta("end_unix_ns", str(end_unix_ns));
  set_meta("exit_code", std::to_string(exit_code));
  exec(db_, path_, "COMMIT;");
  // Back to a single self-contained file now that nothing more is appended.
  exec(db_, path_, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  head_->remove();
}

}  // namespace reveal
