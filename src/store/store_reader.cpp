// Reading untrusted stores piece by piece (include/reveal/store_reader.h), and
// load_recording() collecting everything (include/reveal/store.h; the bounds are documented
// there).
#include <sqlite3.h>
#include <zstd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "reveal/store.h"
#include "reveal/store_reader.h"
#include "store/chunk_codec.h"
#include "store/head_log.h"
#include "store/sqlite_util.h"
#include "store/tenant_codec.h"
#include "util/memory_headroom.h"

namespace reveal {
using store::fail;
using store::Stmt;
namespace {
// --- reading untrusted stores (the bounds are documented in reveal/store.h) ---

// The tables the reader reads; each, where present, must be an ordinary table.
constexpr const char* kReadTables[] = {"meta",   "probes", "channels",     "chunks",      "samples",
                                       "events", "config", "tenant_paths", "tenant_scans"};
constexpr std::size_t kMaxSchemaObjects = 4096;
constexpr std::size_t kMaxMetaRows = 1024;
constexpr std::size_t kMaxProbes = 4096;
constexpr std::size_t kMaxNameBytes = 4096;           // a channel's name, unit, kind, subsystem; a probe's name
constexpr std::size_t kMaxHelpBytes = 64 << 10;       // a channel's help, a probe's reason
constexpr std::size_t kMaxTenantPathBytes = 4096;     // PATH_MAX
constexpr std::size_t kTenantIdSlack = 4096;          // ids past the path rows' count + this are ignored
// Every VM step SQLite runs for one load is counted (a callback every kProgressOps steps):
// kBaseOps plus kOpsPerByte per byte of the store and its WAL. A load of a real store runs
// far fewer (0.04 a byte for tests/fixtures/recordings/h200-clean.db: its bytes are chunk
// blobs; tables of rows of a few bytes each would cost some 5 a byte); a query that runs on
// without reading the file (none should be possible once views, triggers and generated
// columns are refused) is interrupted.
constexpr int kProgressOps = 1000;
constexpr std::uint64_t kBaseOps = std::uint64_t{64} << 20;
constexpr std::uint64_t kOpsPerByte = 256;
// Samples' values reserved up front, at most (bytes): beyond it the matrix grows as it fills.
constexpr std::uint64_t kMinReserveBytes = std::uint64_t{64} << 20;
constexpr std::uint64_t kReservePerFileByte = 32;

struct ProgressBudget {
  std::uint64_t ticks = 0, max_ticks = 0;
};
int on_progress(void* p) {
  auto* b = static_cast<ProgressBudget*>(p);
  return ++b->ticks > b->max_ticks ? 1 : 0;
}

// Opens `path` read-only with SQLite's hardening: defensive mode, no trusted schema (no
// functions or virtual tables of the file's schema beyond innocuous ones), no triggers, no
// views, no extensions, small limits, and the VM step budget above.
sqlite3* open_untrusted(const std::filesystem::path& path, std::uint64_t file_bytes, ProgressBudget& budget) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "cannot open";
    sqlite3_close(db);
    fail(path, msg);
  }
  int on = 0;
  bool ok = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &on) == SQLITE_OK && on == 1;
  ok = ok && sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &on) == SQLITE_OK && on == 0;
  ok = ok && sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, &on) == SQLITE_OK && on == 0;
  ok = ok && sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, &on) == SQLITE_OK && on == 0;
  ok = ok && sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, &on) == SQLITE_OK && on == 0;
  if (!ok) {
    sqlite3_close(db);
    fail(path, "cannot open the store: SQLite refused a hardening option");
  }
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, static_cast<int>(kStoreMaxValueBytes));
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
  sqlite3_limit(db, SQLITE_LIMIT_COLUMN, 64);
  sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 64);
  sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 4);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, 8);
  sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 1);
  sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 64);
  budget.max_ticks = (kBaseOps + kOpsPerByte * file_bytes) / kProgressOps;
  sqlite3_progress_handler(db, kProgressOps, on_progress, &budget);
  char* err = nullptr;
  if (sqlite3_exec(db, "PRAGMA trusted_schema=OFF; PRAGMA query_only=ON; PRAGMA cell_size_check=ON;", nullptr,
                   nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    sqlite3_close(db);
    fail(path, "not a Reveal store: " + msg);
  }
  return db;
}

// The message of a failed step: an interrupted query says which bound stopped it.
std::string step_error(sqlite3* db, const ProgressBudget& budget) {
  if (budget.ticks > budget.max_ticks)
    return "a query ran past " + std::to_string(budget.max_ticks * std::uint64_t{kProgressOps}) +
           " SQLite steps, more than a store of this size needs; interrupted";
  return sqlite3_errmsg(db);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Checks that each of kReadTables present is an ordinary table: not a view (whose query would
// run, recursive or not, at every read), not a virtual table, without generated columns (whose
// expressions would run at every read). Returns the lower-case names of those present.
std::set<std::string> check_schema(sqlite3* db, const std::filesystem::path& path, const ProgressBudget& budget) {
  std::set<std::string> present;
  Stmt st(db, path, "SELECT type, name, sql FROM sqlite_master");
  std::size_t objects = 0;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    if (++objects > kMaxSchemaObjects)
      fail(path, "corrupt store: more than " + std::to_string(kMaxSchemaObjects) + " schema objects");
    const std::string name = lower(st.text(1));
    if (std::find(std::begin(kReadTables), std::end(kReadTables), name) == std::end(kReadTables)) continue;
    const std::string type = st.text(0);
    if (type != "table") fail(path, "corrupt store: '" + name + "' is a " + type + ", not a table");
    if (lower(st.text(2)).rfind("create table", 0) != 0)
      fail(path, "corrupt store: '" + name + "' is not an ordinary table");
    present.insert(name);
  }
  if (rc != SQLITE_DONE) fail(path, "not a Reveal store: " + step_error(db, budget));
  for (const std::string& name : present) {
    Stmt cols(db, path, ("PRAGMA table_xinfo(\"" + name + "\")").c_str());
    while ((rc = sqlite3_step(cols.s)) == SQLITE_ROW)
      if (sqlite3_column_int(cols.s, 6) != 0)
        fail(path, "corrupt store: table '" + name + "' has generated or hidden columns");
    if (rc != SQLITE_DONE) fail(path, "corrupt store: " + step_error(db, budget));
  }
  for (const char* need : {"meta", "probes", "channels"})
    if (!present.count(need)) fail(path, std::string("not a Reveal store (no table '") + need + "')");
  return present;
}

// Column `col` of the current row as text of at most `max` bytes, else fails naming `what`.
std::string bounded_text(const Stmt& st, int col, std::size_t max, const std::filesystem::path& path,
                         const std::string& what) {
  const auto bytes = static_cast<std::size_t>(sqlite3_column_bytes(st.s, col));
  if (bytes > max)
    fail(path, "corrupt store: " + what + " is " + std::to_string(bytes) + " bytes, over the " +
                   std::to_string(max) + " a store holds");
  return st.text(col);
}
}  // namespace

struct StoreReader::Impl {
  std::filesystem::path path;
  std::uint64_t file_bytes = 0;
  ProgressBudget budget;
  sqlite3* db = nullptr;
  std::set<std::string> tables;
  std::map<std::string, std::string> meta_rows;
  int version = 0;
  RunMetadata meta;
  std::vector<ChannelInfo> channels;  // kept
  std::size_t nc = 0;                 // the store's channels
  std::vector<std::uint8_t> keep;     // per store channel, 1 = kept
  std::vector<std::size_t> kept;      // store indices of the kept channels
  std::size_t max_n = kStoreMaxChunkSamples;  // samples per chunk, at most

  // Samples (begin_samples / next_samples).
  std::unique_ptr<Stmt> samples;
  bool in_read = false;        // a read transaction is open (begin_samples .. the last chunk)
  store::HeadSamples head;     // the head log's samples, read by begin_samples()
  std::int64_t start = 0, end = 0;
  std::int64_t expect_seq = -1;
  std::uint64_t next_seq = 0;  // the first sample not in a chunk (the head log's first)
  bool head_done = false;
  store::ChunkCodec codec;
  std::vector<double> block;   // one chunk, all store channels
  std::vector<std::int64_t> times;
  std::vector<double> out_row;  // a row of the kept channels
  std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> dctx{nullptr, ZSTD_freeDCtx};

  // Tenant scans.
  bool paths_read = false;
  std::vector<std::string> tenant_paths;
  std::vector<std::uint8_t> known;  // 1 = id has a path row
  std::unique_ptr<Stmt> scans;
  std::int64_t scan_start = 0, scan_end = 0;
  store::TenantCodec tenant_codec;

  ~Impl() {
    samples.reset();
    scans.reset();
    if (in_read) sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  // Ends the read transaction of begin_samples() (the chunk statement is done or reset).
  void end_read() {
    samples.reset();
    if (in_read) sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    in_read = false;
  }
  [[noreturn]] void corrupt() { fail(path, "corrupt store: " + step_error(db, budget)); }
  bool in_range(std::int64_t t) const { return t >= start && t <= end; }
  // Appends store row `row` (all nc channels) stamped t to `out`, if in range.
  void take(SampleBlock& out, std::int64_t t, const double* row) {
    if (!in_range(t)) return;
    out.t_unix_ns.push_back(t);
    if (kept.empty()) return;
    if (kept.size() == nc) {
      out.values.append_row(std::span<const double>(row, nc));
      return;
    }
    out_row.resize(kept.size());
    for (std::size_t k = 0; k < kept.size(); ++k) out_row[k] = row[kept[k]];
    out.values.append_row(out_row);
  }
  void open();
  void read_channels(const std::function<bool(const ChannelInfo&)>& keep_channel);
  bool next_v1(SampleBlock& out);
  bool next_chunk(SampleBlock& out);
};

void StoreReader::Impl::open() {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(path, "no such file");
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, not a store");
  auto size = std::filesystem::file_size(path, ec);
  if (ec || size == 0) fail(path, "empty file, not a Reveal store");
  {
    char magic[16] = {};
    std::ifstream f(path, std::ios::binary);
    f.read(magic, sizeof magic);
    if (std::memcmp(magic, "REVEALMD", 8) == 0)
      fail(path, "is a baseline model (from reveal train), not a recording");
    if (std::memcmp(magic, "SQLite format 3", 16) != 0) fail(path, "not a Reveal store (not an SQLite file)");
  }
  file_bytes = size;
  if (const auto wal = std::filesystem::file_size(path.string() + "-wal", ec); !ec) file_bytes += wal;
  db = open_untrusted(path, file_bytes, budget);
  tables = check_schema(db, path, budget);
  {
    Stmt st(db, path, "SELECT key, value FROM meta");
    int rc;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
      if (meta_rows.size() >= kMaxMetaRows)
        fail(path, "corrupt store: more than " + std::to_string(kMaxMetaRows) + " metadata rows");
      std::string key = bounded_text(st, 0, kMaxNameBytes, path, "a metadata key");
      meta_rows[key] = bounded_text(st, 1, kStoreMaxMetaValueBytes, path, "metadata value '" + key + "'");
    }
    if (rc != SQLITE_DONE) corrupt();
  }
  auto get = [&](const char* k) -> std::string {
    auto it = meta_rows.find(k);
    if (it == meta_rows.end()) fail(path, std::string("corrupt store: metadata key '") + k + "' missing");
    return it->second;
  };
  version = std::atoi(get("schema_version").c_str());
  if (version > kStoreSchemaContinued)
    fail(path, "store schema version " + std::to_string(version) + " is newer than this reveal (" +
                   std::to_string(kStoreSchemaContinued) + "); upgrade reveal");
  if (version < 1) fail(path, "corrupt store: bad schema_version");
  auto& m = meta;
  m.hostname = get("hostname");
  m.kernel = get("kernel");
  m.cpu_model = get("cpu_model");
  m.cores = std::atoi(get("cores").c_str());
  m.interval_s = std::atof(get("interval_s").c_str());
  m.start_unix_ns = std::atoll(get("start_unix_ns").c_str());
  m.end_unix_ns = std::atoll(get("end_unix_ns").c_str());
  m.complete = m.end_unix_ns != 0;
  m.command = get("command");
  m.exit_code = std::atoi(get("exit_code").c_str());
  m.root = get("root");
  m.reveal_version = get("reveal_version");
  {
    Stmt st(db, path, "SELECT name, available, reason, n_channels FROM probes ORDER BY rowid");
    int rc;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
      if (m.probes.size() >= kMaxProbes) fail(path, "corrupt store: more than " + std::to_string(kMaxProbes) + " probes");
      m.probes.push_back({bounded_text(st, 0, kMaxNameBytes, path, "a probe name"), sqlite3_column_int(st.s, 1) != 0,
                          bounded_text(st, 2, kMaxHelpBytes, path, "a probe reason"),
                          static_cast<std::size_t>(sqlite3_column_int64(st.s, 3))});
    }
    if (rc != SQLITE_DONE) corrupt();
  }
  if (version >= 2) {
    if (!tables.count("chunks")) fail(path, "not a Reveal store (no table 'chunks')");
    // No chunk holds more samples than the writer's chunk length (a chunk may close early,
    // never late), itself bounded; nor more values than kStoreMaxChunkValues.
    if (auto it = meta_rows.find("chunk_samples"); it != meta_rows.end()) {
      const long long cs = std::atoll(it->second.c_str());
      if (cs < 1 || cs > static_cast<long long>(kStoreMaxChunkSamples))
        fail(path, "corrupt store: chunk_samples " + it->second + " is not in 1.." + std::to_string(kStoreMaxChunkSamples));
      max_n = static_cast<std::size_t>(cs);
    }
  } else if (!tables.count("samples")) {
    fail(path, "not a Reveal store (no table 'samples')");
  }
}

void StoreReader::Impl::read_channels(const std::function<bool(const ChannelInfo&)>& keep_channel) {
  // wrap_range came after the first pre-release stores: read 0 where the column is absent.
  bool has_wrap = false;
  {
    Stmt cols(db, path, "PRAGMA table_info(channels)");
    while (sqlite3_step(cols.s) == SQLITE_ROW) has_wrap = has_wrap || cols.text(1) == "wrap_range";
  }
  Stmt st(db, path, has_wrap ? "SELECT id, name, unit, kind, subsystem, counter_bits, help, wrap_range FROM channels ORDER BY id"
                             : "SELECT id, name, unit, kind, subsystem, counter_bits, help, 0 FROM channels ORDER BY id");
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    if (sqlite3_column_int64(st.s, 0) != static_cast<sqlite3_int64>(channels.size()))
      fail(path, "corrupt store: channel ids are not contiguous");
    if (channels.size() >= kStoreMaxChannels)
      fail(path, "corrupt store: more than " + std::to_string(kStoreMaxChannels) + " channels");
    ChannelInfo c;
    c.name = bounded_text(st, 1, kMaxNameBytes, path, "a channel name");
    c.unit = bounded_text(st, 2, kMaxNameBytes, path, "channel '" + c.name + "''s unit");
    auto k = parse_kind(bounded_text(st, 3, kMaxNameBytes, path, "channel '" + c.name + "''s kind"));
    auto s = parse_subsystem(bounded_text(st, 4, kMaxNameBytes, path, "channel '" + c.name + "''s subsystem"));
    if (!k || !s) fail(path, "corrupt store: channel '" + c.name + "' has unknown kind or subsystem");
    c.kind = *k;
    c.subsystem = *s;
    c.counter_bits = static_cast<std::uint8_t>(sqlite3_column_int(st.s, 5));
    c.help = bounded_text(st, 6, kMaxHelpBytes, path, "channel '" + c.name + "''s help");
    c.wrap_range = sqlite3_column_double(st.s, 7);
    channels.push_back(std::move(c));
  }
  if (rc != SQLITE_DONE) corrupt();
  nc = channels.size();
  keep.assign(nc, 1);
  for (std::size_t c = 0; c < nc; ++c) {
    if (keep_channel) keep[c] = keep_channel(channels[c]);
    if (keep[c]) kept.push_back(c);
  }
  if (kept.size() != nc) {
    std::vector<ChannelInfo> sub;
    for (std::size_t c : kept) sub.push_back(std::move(channels[c]));
    channels = std::move(sub);
  }
}

// Schema v1: one zstd frame per sample; all the samples in range come as one block (v1 stores
// were short pre-release recordings).
bool StoreReader::Impl::next_v1(SampleBlock& out) {
  if (!samples) return false;
  block.resize(nc);
  if (!dctx) dctx.reset(ZSTD_createDCtx());
  int rc;
  while ((rc = sqlite3_step(samples->s)) == SQLITE_ROW) {
    const std::int64_t t = sqlite3_column_int64(samples->s, 1);
    if (!in_range(t)) continue;
    const void* blob = sqlite3_column_blob(samples->s, 2);
    int len = sqlite3_column_bytes(samples->s, 2);
    const unsigned long long declared = ZSTD_getFrameContentSize(blob, static_cast<std::size_t>(len));
    std::size_t n = declared == nc * sizeof(double)
                        ? ZSTD_decompressDCtx(dctx.get(), block.data(), nc * sizeof(double), blob, len)
                        : std::size_t{0};
    if (ZSTD_isError(n) || n != nc * sizeof(double))
      fail(path, "corrupt store: sample " + std::to_string(sqlite3_column_int64(samples->s, 0)) +
                     " does not decode to " + std::to_string(nc) + " values");
    take(out, t, block.data());
  }
  if (rc != SQLITE_DONE) corrupt();
  samples.reset();
  return !out.t_unix_ns.empty();
}

bool StoreReader::Impl::next_chunk(SampleBlock& out) {
  int rc;
  while (samples && (rc = sqlite3_step(samples->s)) == SQLITE_ROW) {
    sqlite3_stmt* s = samples->s;
    const std::int64_t first = sqlite3_column_int64(s, 0);
    const std::int64_t n = sqlite3_column_int64(s, 1);
    const std::string where = "corrupt store: chunk at sample " + std::to_string(first);
    if (n < 1 || first < expect_seq) fail(path, where + " has a bad sample count or order");
    if (static_cast<std::uint64_t>(n) > max_n)
      fail(path, where + " claims " + std::to_string(n) + " samples, more than the store's chunk length " +
                     std::to_string(max_n));
    if (static_cast<std::uint64_t>(n) * nc > kStoreMaxChunkValues)
      fail(path, where + " claims " + std::to_string(n) + " samples of " + std::to_string(nc) +
                     " channels, more than the " + std::to_string(kStoreMaxChunkValues) + " values a chunk holds");
    expect_seq = first + n;
    const auto blob = [&](int col) {
      return std::span<const char>(static_cast<const char*>(sqlite3_column_blob(s, col)),
                                   static_cast<std::size_t>(sqlite3_column_bytes(s, col)));
    };
    times.clear();
    // A continued store's older chunks hold the channels its table had then (schema 3): the
    // channels added later stay NaN in them.
    std::size_t ncc = nc;
    try {
      ncc = store::ChunkCodec::columns_in(blob(3));
      if (ncc > nc || (ncc < nc && version < kStoreSchemaContinued))
        throw std::runtime_error("chunk header does not match its samples and channels");
      store::ChunkCodec::check_sizes(blob(2), blob(3), static_cast<std::size_t>(n), ncc);  // before sizing by n
    } catch (const std::runtime_error& e) {
      fail(path, where + ": " + e.what());
    }
    block.assign(static_cast<std::size_t>(n) * nc, std::nan(""));
    try {
      codec.decode_times(blob(2), static_cast<std::size_t>(n), times);
      codec.decode_columns(blob(3), static_cast<std::size_t>(n), ncc, std::span<const std::uint8_t>(keep).first(ncc),
                           block.data(), nc);
    } catch (const std::runtime_error& e) {
      fail(path, where + ": " + e.what());
    }
    for (std::size_t i = 0; i < times.size(); ++i) take(out, times[i], block.data() + i * nc);
    if (!out.t_unix_ns.empty()) return true;
  }
  if (samples) {
    if (rc != SQLITE_DONE) corrupt();
    samples.reset();
  }
  end_read();
  // Samples of a recorder still running, or killed, are in the head log after the chunks (read
  // by begin_samples()).
  if (head_done) return false;
  head_done = true;
  for (std::size_t i = 0; i < head.t_unix_ns.size(); ++i) take(out, head.t_unix_ns[i], head.values.row(i).data());
  head = {};
  return !out.t_unix_ns.empty();
}

StoreReader::StoreReader(const std::filesystem::path& path, const std::function<bool(const ChannelInfo&)>& keep_channel)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->open();
  impl_->read_channels(keep_channel);
}

StoreReader::~StoreReader() = default;

const RunMetadata& StoreReader::meta() const { return impl_->meta; }
const std::vector<ChannelInfo>& StoreReader::channels() const { return impl_->channels; }
std::size_t StoreReader::store_channels() const { return impl_->nc; }

void StoreReader::begin_samples(std::int64_t start_unix_ns, std::int64_t end_unix_ns) {
  Impl& m = *impl_;
  m.end_read();
  m.start = start_unix_ns;
  m.end = end_unix_ns;
  m.expect_seq = -1;
  m.head_done = false;
  if (m.version == 1) {
    m.samples = std::make_unique<Stmt>(m.db, m.path, "SELECT seq, t_unix_ns, data FROM samples ORDER BY seq");
    return;
  }
  // The chunks are read within one read transaction (the statement's snapshot, held until the
  // last chunk: a live writer's WAL is not checkpointed meanwhile), and the head log with it,
  // now: it holds the samples after the snapshot's last chunk (at most one chunk's), which a
  // live writer would have committed and cleared by the time the last chunk is read.
  m.samples = std::make_unique<Stmt>(m.db, m.path,
                                     "SELECT first_seq, n_samples, times, columns FROM chunks"
                                     " WHERE t_last_ns >= ? AND t_first_ns <= ? ORDER BY first_seq");
  sqlite3_bind_int64(m.samples->s, 1, start_unix_ns);
  sqlite3_bind_int64(m.samples->s, 2, end_unix_ns);
  if (sqlite3_exec(m.db, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) m.corrupt();
  m.in_read = true;
  m.next_seq = 0;
  {
    Stmt end(m.db, m.path, "SELECT COALESCE(MAX(first_seq + n_samples), 0) FROM chunks");
    if (sqlite3_step(end.s) == SQLITE_ROW) m.next_seq = static_cast<std::uint64_t>(sqlite3_column_int64(end.s, 0));
  }
  m.head = store::read_head_log(store::head_path(m.path), m.nc, m.next_seq);
}

bool StoreReader::next_samples(SampleBlock& out) {
  Impl& m = *impl_;
  out.t_unix_ns.clear();
  out.values.reset(m.kept.size());
  const bool more = m.version == 1 ? m.next_v1(out) : m.next_chunk(out);
  if (m.kept.empty()) out.values = Matrix(out.t_unix_ns.size(), 0);
  return more;
}

std::uint64_t StoreReader::claimed_samples(std::int64_t start_unix_ns, std::int64_t end_unix_ns) {
  Impl& m = *impl_;
  if (m.version == 1) return 0;
  Stmt claim(m.db, m.path,
             "SELECT COALESCE(SUM(MIN(MAX(n_samples, 0), ?)), 0) FROM chunks WHERE t_last_ns >= ? AND t_first_ns <= ?");
  sqlite3_bind_int64(claim.s, 1, static_cast<sqlite3_int64>(m.max_n));
  sqlite3_bind_int64(claim.s, 2, start_unix_ns);
  sqlite3_bind_int64(claim.s, 3, end_unix_ns);
  if (sqlite3_step(claim.s) != SQLITE_ROW) m.corrupt();
  return static_cast<std::uint64_t>(std::max<sqlite3_int64>(sqlite3_column_int64(claim.s, 0), 0));
}

std::vector<Event> StoreReader::events() {
  Impl& m = *impl_;
  std::vector<Event> out;
  const bool events = m.tables.count("events") > 0;
  Stmt ev(m.db, m.path, events ? "SELECT t_unix_ns, source, kind, value, detail FROM events ORDER BY t_unix_ns, rowid"
                               : "SELECT 0, '', '', 0, '' WHERE 0");
  int rc;
  while ((rc = sqlite3_step(ev.s)) == SQLITE_ROW)
    out.push_back({sqlite3_column_int64(ev.s, 0), ev.text(1), ev.text(2), sqlite3_column_double(ev.s, 3), ev.text(4)});
  if (rc != SQLITE_DONE) m.corrupt();
  return out;
}

void StoreReader::config(ConfigSnapshot& at_start, std::vector<ConfigChange>& changes) {
  Impl& m = *impl_;
  at_start.clear();
  changes.clear();
  if (!m.tables.count("config")) return;
  // The snapshot's rows are stamped <= start; the changes' old values come from replaying them.
  Stmt cf(m.db, m.path, "SELECT t_unix_ns, key, value FROM config ORDER BY t_unix_ns, rowid");
  ConfigSnapshot now;
  bool in_snapshot = true;
  int rc;
  while ((rc = sqlite3_step(cf.s)) == SQLITE_ROW) {
    const std::int64_t t = sqlite3_column_int64(cf.s, 0);
    std::string key = cf.text(1), value = cf.text(2);
    if (t <= m.meta.start_unix_ns) {
      if (!value.empty()) at_start[key] = value;
      continue;
    }
    if (in_snapshot) {
      now = at_start;
      in_snapshot = false;
    }
    auto it = now.find(key);
    std::string old = it == now.end() ? "" : it->second;
    if (value.empty()) {
      if (it != now.end()) now.erase(it);
    } else {
      now[key] = value;
    }
    changes.push_back({t, std::move(key), std::move(old), std::move(value)});
  }
  if (rc != SQLITE_DONE) m.corrupt();
}

const std::vector<std::string>& StoreReader::tenant_paths() {
  Impl& m = *impl_;
  if (m.paths_read) return m.tenant_paths;
  if (!m.tables.count("tenant_paths") || !m.tables.count("tenant_scans")) {
    m.paths_read = true;
    return m.tenant_paths;
  }
  // The writer numbers paths 0, 1, ... and never deletes one: ids past the rows' count (and a
  // slack) would only size the list by the file's claim, and are ignored.
  std::int64_t id_end = 0;
  {
    Stmt count(m.db, m.path, "SELECT COUNT(*) FROM tenant_paths");
    if (sqlite3_step(count.s) != SQLITE_ROW) m.corrupt();
    id_end = std::min<std::int64_t>(std::int64_t{store::kTenantMaxIds},
                                    sqlite3_column_int64(count.s, 0) + std::int64_t{kTenantIdSlack});
  }
  Stmt st(m.db, m.path, "SELECT id, path FROM tenant_paths ORDER BY id");
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    const std::int64_t id = sqlite3_column_int64(st.s, 0);
    if (id < 0 || id >= id_end) continue;
    if (static_cast<std::size_t>(sqlite3_column_bytes(st.s, 1)) > kMaxTenantPathBytes) continue;
    const auto i = static_cast<std::size_t>(id);
    if (i >= m.tenant_paths.size()) {
      m.tenant_paths.resize(i + 1);
      m.known.resize(i + 1, 0);
    }
    m.tenant_paths[i] = st.text(1);
    m.known[i] = 1;
  }
  if (rc != SQLITE_DONE) {
    m.tenant_paths.clear();
    m.known.clear();
    m.corrupt();
  }
  m.paths_read = true;
  return m.tenant_paths;
}

bool StoreReader::has_tenant_scans() {
  Impl& m = *impl_;
  if (!m.tables.count("tenant_paths") || !m.tables.count("tenant_scans")) return false;
  Stmt st(m.db, m.path, "SELECT EXISTS(SELECT 1 FROM tenant_scans)");
  if (sqlite3_step(st.s) != SQLITE_ROW) m.corrupt();
  return sqlite3_column_int(st.s, 0) != 0;
}

void StoreReader::begin_tenant_scans(std::int64_t start_unix_ns, std::int64_t end_unix_ns) {
  Impl& m = *impl_;
  tenant_paths();
  m.scans.reset();
  m.scan_start = start_unix_ns;
  m.scan_end = end_unix_ns;
  if (!m.tables.count("tenant_paths") || !m.tables.count("tenant_scans")) return;
  // Rows overlapping the range (stores with version 1 rows only have no t_last_ns: one scan a
  // row), expanded and clipped per scan, in the order they were written (rowid: the writer's
  // time order; ordering by time would sort every row of the store, blobs and all, before the
  // first came back).
  bool has_last = false;
  {
    Stmt cols(m.db, m.path, "PRAGMA table_info(tenant_scans)");
    while (sqlite3_step(cols.s) == SQLITE_ROW) has_last = has_last || cols.text(1) == "t_last_ns";
  }
  m.scans = std::make_unique<Stmt>(m.db, m.path,
                                   has_last ? "SELECT t_unix_ns, data FROM tenant_scans WHERE t_last_ns >= ? AND t_unix_ns <= ?"
                                              " ORDER BY rowid"
                                            : "SELECT t_unix_ns, data FROM tenant_scans WHERE t_unix_ns >= ? AND t_unix_ns <= ?"
                                              " ORDER BY rowid");
  sqlite3_bind_int64(m.scans->s, 1, start_unix_ns);
  sqlite3_bind_int64(m.scans->s, 2, end_unix_ns);
}

bool StoreReader::next_tenant_scans(std::vector<TenantScan>& out) {
  Impl& m = *impl_;
  out.clear();
  if (!m.scans) return false;
  int rc;
  while ((rc = sqlite3_step(m.scans->s)) == SQLITE_ROW) {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(m.scans->s, 1));
    const auto bytes = static_cast<std::size_t>(sqlite3_column_bytes(m.scans->s, 1));
    out.clear();
    try {
      m.tenant_codec.decode_row(std::span<const char>(data, data ? bytes : 0), sqlite3_column_int64(m.scans->s, 0), out);
    } catch (const std::runtime_error&) {
      continue;  // corrupt: the row's scans are skipped (documented in reveal/store.h)
    }
    // Keep the row's scans in range whose ids all have paths.
    std::size_t keep_n = 0;
    for (std::size_t k = 0; k < out.size(); ++k) {
      bool ok = out[k].t_unix_ns >= m.scan_start && out[k].t_unix_ns <= m.scan_end;
      for (const std::uint32_t id : out[k].ids) ok = ok && id < m.known.size() && m.known[id];
      if (!ok) continue;
      if (keep_n != k) std::swap(out[keep_n], out[k]);
      ++keep_n;
    }
    out.resize(keep_n);
    if (!out.empty()) return true;
  }
  if (rc != SQLITE_DONE) m.corrupt();
  m.scans.reset();
  return false;
}

std::uint64_t default_load_budget() { return std::max<std::uint64_t>(memory_headroom() / 2, std::uint64_t{1} << 20); }

Recording load_recording(const std::filesystem::path& path, const LoadOptions& options) {
  StoreReader reader(path, options.keep_channel);
  Recording rec;
  rec.meta = reader.meta();
  rec.channels = reader.channels();
  const std::size_t kept = rec.channels.size();
  rec.values = Matrix(0, kept);
  const std::uint64_t budget = options.max_bytes ? options.max_bytes : default_load_budget();
  const std::uint64_t row_bytes = (kept + 1) * sizeof(double);  // a sample's values and time
  const auto over_budget = [&] {
    return StoreError(path.string() + ": its samples decode to more than " + std::to_string(budget >> 20) + " MiB, " +
                      (options.max_bytes ? "the budget given" : "half the memory this process can use") +
                      ": read it in pieces (reveal detect without --html and reveal export stream it; export "
                      "--start/--end takes a time range)");
  };
  {
    // The chunks' claims, their counts clipped to the chunk length: over the budget, refused
    // before anything is decoded; within it, reserved (so the matrix never grows by copying),
    // up to a multiple of the file's size (a claim is not data: beyond it the matrix grows).
    std::error_code ec;
    std::uint64_t file_bytes = std::filesystem::file_size(path, ec);
    if (const auto wal = std::filesystem::file_size(path.string() + "-wal", ec); !ec) file_bytes += wal;
    const std::uint64_t claimed = reader.claimed_samples(options.start_unix_ns, options.end_unix_ns);
    if (claimed > budget / row_bytes) throw over_budget();
    const std::uint64_t max_values = std::max(kMinReserveBytes, kReservePerFileByte * file_bytes) / sizeof(double);
    const std::uint64_t rows = std::min(claimed, max_values / (kept + 1));
    rec.t_unix_ns.reserve(rows);
    if (kept) rec.values.data().reserve(rows * kept);
  }
  std::uint64_t used = 0;
  const auto spend = [&](std::uint64_t bytes) {
    used += bytes;
    if (used > budget) throw over_budget();
  };
  SampleBlock block;
  reader.begin_samples(options.start_unix_ns, options.end_unix_ns);
  while (reader.next_samples(block)) {
    spend(std::uint64_t(block.t_unix_ns.size()) * row_bytes);
    rec.t_unix_ns.insert(rec.t_unix_ns.end(), block.t_unix_ns.begin(), block.t_unix_ns.end());
    for (std::size_t i = 0; i < block.values.rows() && kept; ++i) rec.values.append_row(block.values.row(i));
  }
  if (!kept) rec.values = Matrix(rec.t_unix_ns.size(), 0);
  rec.events = reader.events();
  reader.config(rec.config, rec.config_changes);
  rec.tenants.paths = reader.tenant_paths();
  std::vector<TenantScan> row;
  reader.begin_tenant_scans(options.start_unix_ns, options.end_unix_ns);
  while (reader.next_tenant_scans(row))
    for (auto& s : row) {
      spend(sizeof(TenantScan) + s.ids.size() * (sizeof(std::uint32_t) + sizeof(TenantCounters)));
      rec.tenants.scans.push_back(std::move(s));
    }
  // Rows are in order of their first scans; a clock stepped back makes rows overlap.
  const auto by_time = [](const TenantScan& a, const TenantScan& b) { return a.t_unix_ns < b.t_unix_ns; };
  auto& scans = rec.tenants.scans;
  if (!std::is_sorted(scans.begin(), scans.end(), by_time)) std::stable_sort(scans.begin(), scans.end(), by_time);
  // A recorder that was killed never wrote its end: take it from the last sample.
  if (!rec.meta.complete && !rec.t_unix_ns.empty()) rec.meta.end_unix_ns = rec.t_unix_ns.back();
  return rec;
}

}  // namespace reveal
