// Untrusted stores (issue #18): crafted SQLite files, made here with the sqlite3 C API from a
// store the writer made, must give one StoreError line naming the file, quickly and without
// gigabytes of memory: views (a recursive meta, a channels view of many rows), generated
// columns, too many channels, chunks claiming more samples than the store's chunk length or
// than their frames hold, tenant path ids far past the rows, tenant rows that are zstd bombs.
#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zstd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reveal/store.h"
#include "store_test_util.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;
using testing::StoreDirTest;

class UntrustedStoreTest : public StoreDirTest {
 protected:
  // A finished store of `n_channels` gauges and `n` samples (chunks of `chunk` samples), with
  // one tenant path and scan.
  fs::path make_store(const std::string& name, std::size_t n_channels = 1, std::size_t n = 4,
                      std::size_t chunk = kDefaultChunkSamples) {
    const fs::path p = dir_ / name;
    std::vector<ChannelInfo> chans;
    for (std::size_t c = 0; c < n_channels; ++c)
      chans.push_back({"g" + std::to_string(c), "%", Kind::gauge, Subsystem::cpu, 0, ""});
    StoreWriter w(p, testing::minimal_meta(), chans, chunk);
    std::vector<double> row(n_channels, 1.5);
    for (std::size_t i = 0; i < n; ++i) w.append(2'000 + std::int64_t(i), row);
    TenantScan s;
    s.t_unix_ns = 2'000;
    s.ids = {0};
    s.counters = {TenantCounters{1.0, 2.0, 3.0, 4.0}};
    w.append_tenant_scan(s, {"a.slice"});
    w.finish(2'000 + std::int64_t(n), 0);
    return p;
  }
  // Runs `sql` on the store (read-write, as an attacker would).
  static void exec(const fs::path& p, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    const std::string msg = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << msg << " in " << sql;
  }
  // Loads `p` and expects one StoreError line naming the file and holding `needle`.
  static std::string expect_error(const fs::path& p, const std::string& needle) {
    try {
      (void)load_recording(p);
      ADD_FAILURE() << "loaded " << p << " (expected: " << needle << ")";
    } catch (const StoreError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(p.string() + ": ", 0), 0u) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      return msg;
    }
    return "";
  }
};

// Loads `p` with the address space limited to `limit` bytes and exits: 0 for a StoreError
// holding `needle`, 1 if it loaded, 2 for another StoreError, 4 for bad_alloc or another error.
[[noreturn]] void load_and_exit(const fs::path& p, rlim_t limit, const std::string& needle) {
  const rlimit rl{limit, limit};
  setrlimit(RLIMIT_AS, &rl);
  int code = 3;
  try {
    (void)load_recording(p);
    code = 1;
  } catch (const StoreError& e) {
    code = std::string(e.what()).find(needle) != std::string::npos ? 0 : 2;
  } catch (...) {
    code = 4;  // bad_alloc: it tried to allocate past the limit
  }
  std::_Exit(code);
}

// In a child process with its address space limited to what it uses now plus `mib`: the load
// must end in a StoreError holding `needle`, not in bad_alloc or a crash.
void load_within(const fs::path& p, std::size_t mib, const std::string& needle) {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  const rlim_t limit = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(mib) << 20);
  EXPECT_EXIT(load_and_exit(p, limit, needle), ::testing::ExitedWithCode(0), "");
}

TEST_F(UntrustedStoreTest, TheWritersStoresStillLoad) {
  const fs::path p = make_store("good.db", 3, 300, 16);
  const Recording r = load_recording(p);
  EXPECT_EQ(r.t_unix_ns.size(), 300u);
  EXPECT_EQ(r.channels.size(), 3u);
  ASSERT_EQ(r.tenants.scans.size(), 1u);
  EXPECT_EQ(r.tenants.paths, std::vector<std::string>{"a.slice"});
}

TEST_F(UntrustedStoreTest, RecursiveMetaViewFailsFastWithOneLine) {
  const fs::path p = make_store("view.db");
  // Reading this view runs a billion steps of a recursive query (minutes) before its one row.
  exec(p,
       "DROP TABLE meta; CREATE VIEW meta(key, value) AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL"
       " SELECT i + 1 FROM r WHERE i < 1000000000) SELECT 'schema_version', max(i) FROM r;");
  const auto t0 = std::chrono::steady_clock::now();
  expect_error(p, "'meta' is a view, not a table");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
}

TEST_F(UntrustedStoreTest, ChannelsViewIsRefusedBeforeItsRowsAreRead) {
  const fs::path p = make_store("chanview.db");
  // 300k channel rows out of nothing (the review's 3M cost 3.25 GB).
  exec(p,
       "DROP TABLE channels; CREATE VIEW channels(id, name, unit, kind, subsystem, counter_bits, help, wrap_range)"
       " AS WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 299999)"
       " SELECT i, 'c' || i, 'u', 'gauge', 'cpu', 0, '', 0 FROM r;");
  const auto t0 = std::chrono::steady_clock::now();
  expect_error(p, "'channels' is a view, not a table");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
}

TEST_F(UntrustedStoreTest, TriggersAndOtherViewsAreNotRun) {
  const fs::path p = make_store("trig.db");
  // Objects the reader does not read are left alone, and nothing of theirs runs.
  exec(p,
       "CREATE VIEW spin AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT i FROM r;"
       "CREATE TABLE log(x); CREATE TRIGGER t AFTER INSERT ON log BEGIN SELECT * FROM spin; END;");
  const Recording r = load_recording(p);
  EXPECT_EQ(r.t_unix_ns.size(), 4u);
}

TEST_F(UntrustedStoreTest, GeneratedColumnsAreRefused) {
  const fs::path p = make_store("gen.db");
  // A generated column's expression would run at every read of the row.
  exec(p,
       "CREATE TABLE m2(key TEXT PRIMARY KEY, value TEXT NOT NULL, big BLOB AS (zeroblob(100000000)));"
       "INSERT INTO m2(key, value) SELECT key, value FROM meta; DROP TABLE meta; ALTER TABLE m2 RENAME TO meta;");
  expect_error(p, "table 'meta' has generated or hidden columns");
}

TEST_F(UntrustedStoreTest, MissingTablesAndForeignSchemasAreNotStores) {
  const fs::path p = make_store("noprobes.db");
  exec(p, "DROP TABLE probes;");
  expect_error(p, "no table 'probes'");
  const fs::path q = make_store("nochunks.db");
  exec(q, "DROP TABLE chunks;");
  expect_error(q, "no table 'chunks'");
}

TEST_F(UntrustedStoreTest, TooManyChannelsIsAnError) {
  const fs::path p = make_store("manychan.db");
  exec(p, "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < " +
              std::to_string(kStoreMaxChannels) +
              ") INSERT INTO channels SELECT i, 'c' || i, '', 'gauge', 'cpu', 0, '', 0 FROM r;");
  expect_error(p, "more than " + std::to_string(kStoreMaxChannels) + " channels");
}

TEST_F(UntrustedStoreTest, OverlongMetadataAndNamesAreErrors) {
  const fs::path p = make_store("longmeta.db");
  exec(p, "UPDATE meta SET value = hex(zeroblob(" + std::to_string(kStoreMaxMetaValueBytes) + ")) WHERE key = 'command';");
  expect_error(p, "metadata value 'command' is " + std::to_string(2 * kStoreMaxMetaValueBytes) + " bytes");
  const fs::path q = make_store("longname.db");
  exec(q, "UPDATE channels SET name = hex(zeroblob(5000));");
  expect_error(q, "a channel name is 10000 bytes");
  const fs::path r = make_store("manymeta.db");
  exec(r, "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 2000) INSERT INTO meta SELECT 'k' || i, '' FROM s;");
  expect_error(r, "more than 1024 metadata rows");
}

TEST_F(UntrustedStoreTest, ChunkClaiming2To24SamplesIsRefusedBeforeAllocating) {
  // 20 channels: 2^24 samples of them would be 2.7 GB of doubles.
  const fs::path p = make_store("bigchunk.db", 20);
  exec(p, "UPDATE chunks SET n_samples = 16777216;");
  expect_error(p, "claims 16777216 samples, more than the store's chunk length 128");
  load_within(p, 256, "claims 16777216 samples");
  // A chunk length claimed as large is itself out of bounds.
  exec(p, "UPDATE meta SET value = '16777216' WHERE key = 'chunk_samples';");
  expect_error(p, "chunk_samples 16777216 is not in 1..65536");
  load_within(p, 256, "chunk_samples 16777216");
  // Within the chunk length, the frames must declare the samples' bytes (4 samples' here).
  exec(p, "UPDATE meta SET value = '65536' WHERE key = 'chunk_samples'; UPDATE chunks SET n_samples = 65536;");
  expect_error(p, "chunk times holds 32 bytes, not the 524288 of its samples");
}

TEST_F(UntrustedStoreTest, ChunksThatDecodeToMoreThanTheBudgetAreRefused) {
  // 2000 channels of a constant in one 128-sample chunk (2 MB decoded, a few KB stored), its
  // row repeated 5000 times: 10 GB of doubles from a file of about 30 MB.
  const fs::path p = make_store("repeated.db", 2000, 128);
  exec(p, "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 4999) "
          "INSERT INTO chunks SELECT c.first_seq + 128 * k.i, c.n_samples, c.t_first_ns + 1000 * k.i, "
          "c.t_last_ns + 1000 * k.i, c.times, c.columns FROM chunks c, k;");
  EXPECT_LT(fs::file_size(p), std::uintmax_t{64} << 20);
  // The default budget: half of what this process may allocate, here its address space now plus 512 MiB.
  load_within(p, 512, "decode to more than");
  // An explicit budget: 40 chunks fit in 100 MB, not 5000.
  LoadOptions o;
  o.max_bytes = 100u << 20;
  try {
    (void)load_recording(p, o);
    ADD_FAILURE() << "loaded";
  } catch (const StoreError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg, p.string() + ": its samples decode to more than 100 MiB, the budget given: read it in pieces "
                                "(reveal detect without --html and reveal export stream it; export --start/--end "
                                "takes a time range)");
  }
  // A time range of it loads.
  o.start_unix_ns = 2'000;
  o.end_unix_ns = 2'000 + 1000 * 9;
  EXPECT_EQ(load_recording(p, o).t_unix_ns.size(), 10u * 128u);
}

TEST_F(UntrustedStoreTest, TheBudgetCountsDecodedSamplesAndTenantScansToo) {
  // What no claim announces is counted as it is decoded: a schema-1 store (no chunk claims) and
  // the tenant scans. A store just within its budget loads.
  const fs::path v1 = fs::path(REVEAL_FIXTURES_DIR) / "recordings/h200-clean.db";
  const Recording whole = load_recording(v1);
  const std::uint64_t v1_bytes = whole.t_unix_ns.size() * (whole.channels.size() + 1) * sizeof(double);
  LoadOptions o;
  o.max_bytes = v1_bytes;
  EXPECT_EQ(load_recording(v1, o).t_unix_ns.size(), whole.t_unix_ns.size());
  o.max_bytes = v1_bytes - 1;
  EXPECT_THROW((void)load_recording(v1, o), StoreError);

  const fs::path p = make_store("scans.db", 3, 300, 16);  // and one tenant scan of one entry
  const std::uint64_t samples = 300 * 4 * sizeof(double);
  o.max_bytes = samples + sizeof(TenantScan) + sizeof(std::uint32_t) + sizeof(TenantCounters);
  EXPECT_EQ(load_recording(p, o).tenants.scans.size(), 1u);
  o.max_bytes = samples + 8;
  try {
    (void)load_recording(p, o);
    ADD_FAILURE() << "loaded";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("decode to more than"), std::string::npos) << e.what();
  }
}

TEST_F(UntrustedStoreTest, TenantPathIdsFarPastTheRowsAreIgnored) {
  const fs::path p = make_store("tenantid.db");
  // Without the bound this one row sized the path list to 16 M entries (512 MB).
  exec(p, "INSERT INTO tenant_paths VALUES(16777215, 'far'), (3, 'near');"
          "INSERT INTO tenant_paths VALUES(7, hex(zeroblob(3000)));");
  const Recording r = load_recording(p);
  ASSERT_EQ(r.tenants.paths.size(), 4u);  // ids 0 and 3; 7's path is over 4096 bytes
  EXPECT_EQ(r.tenants.paths[0], "a.slice");
  EXPECT_EQ(r.tenants.paths[3], "near");
  EXPECT_EQ(r.tenants.scans.size(), 1u);
}

TEST_F(UntrustedStoreTest, TenantRowThatIsAZstdBombLosesItsScans) {
  const fs::path p = make_store("tenantbomb.db");
  // A version 2 row of one scan of 3 M entries of id 0, every counter NaN: 15 MB of payload,
  // mostly zeros, in a frame of a few hundred bytes (decoded: 3 M entries, 100 MB).
  const std::size_t n = 3'000'000;
  std::string payload;
  payload += char(2);  // version
  payload += char(1);  // one scan
  std::uint64_t v = n;  // LEB128
  for (; v >= 0x80; v >>= 7) payload += char((v & 0x7f) | 0x80);
  payload += char(v);
  payload.append(5 * n, '\0');
  std::string frame(ZSTD_compressBound(payload.size()), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), payload.data(), payload.size(), 3));
  ASSERT_LT(frame.size(), 4096u);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO tenant_scans VALUES(3000, ?, 3000)", -1, &st, nullptr), SQLITE_OK);
  sqlite3_bind_blob(st, 1, frame.data(), int(frame.size()), SQLITE_TRANSIENT);
  ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
  const Recording r = load_recording(p);
  ASSERT_EQ(r.tenants.scans.size(), 1u);  // the writer's; the bomb row is skipped
  EXPECT_EQ(r.tenants.scans[0].ids.size(), 1u);
}

}  // namespace
}  // namespace reveal
