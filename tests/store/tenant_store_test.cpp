// Tenant scans in the store (tables tenant_paths, tenant_scans; src/store/tenant_codec.h): round
// trip (within a row and across rows of kTenantScansPerRow scans), the writer's buffering (rows
// closed when full, a minute apart, on a clock step back, at finish()), version 1 rows of older
// stores, stores without the tables, retention, corrupt rows skipped, time-range clipping, the
// writer's refusals and the encoded size of 200-cgroup scans.
#include <sqlite3.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <span>

#include <gtest/gtest.h>

#include "reveal/store.h"
#include "store_test_util.h"
#include "store/tenant_codec.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class TenantStoreTest : public testing::StoreDirTest {};

RunMetadata meta() { return testing::minimal_meta(); }
std::vector<ChannelInfo> channels() { return testing::one_channel(); }

TenantCounters tc(double usage, double cpu, double mem, double io) { return {usage, cpu, mem, io}; }

TenantScan scan(std::int64_t t, std::vector<std::uint32_t> ids, std::vector<TenantCounters> counters) {
  return {t, std::move(ids), std::move(counters)};
}

// NaN-aware equality of a whole scan.
void expect_same(const TenantScan& got, const TenantScan& want) {
  EXPECT_EQ(got.t_unix_ns, want.t_unix_ns);
  ASSERT_EQ(got.ids, want.ids);
  ASSERT_EQ(got.counters.size(), want.counters.size());
  const auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  for (std::size_t i = 0; i < want.counters.size(); ++i) {
    const auto &g = got.counters[i], &w = want.counters[i];
    EXPECT_TRUE(same(g.cpu_usage_us, w.cpu_usage_us)) << "entry " << i << ": " << g.cpu_usage_us;
    EXPECT_TRUE(same(g.cpu_some_us, w.cpu_some_us)) << "entry " << i << ": " << g.cpu_some_us;
    EXPECT_TRUE(same(g.memory_some_us, w.memory_some_us)) << "entry " << i << ": " << g.memory_some_us;
    EXPECT_TRUE(same(g.io_some_us, w.io_some_us)) << "entry " << i << ": " << g.io_some_us;
  }
}

std::int64_t count_rows(const fs::path& p, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
  const std::int64_t n = st && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

void exec_sql(const fs::path& p, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "") << " in " << sql;
  sqlite3_free(err);
  sqlite3_close(db);
}

// Replaces the blob of the scan stamped t.
void set_blob(const fs::path& p, std::int64_t t, const std::vector<char>& blob) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE tenant_scans SET data = ? WHERE t_unix_ns = ?", -1, &st, nullptr), SQLITE_OK);
  sqlite3_bind_blob(st, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 2, t);
  EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  EXPECT_EQ(sqlite3_changes(db), 1);
  sqlite3_close(db);
}

std::vector<char> blob_of(const fs::path& p, std::int64_t t) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT data FROM tenant_scans WHERE t_unix_ns = ?", -1, &st, nullptr);
  sqlite3_bind_int64(st, 1, t);
  std::vector<char> out;
  if (sqlite3_step(st) == SQLITE_ROW) {
    const auto* d = static_cast<const char*>(sqlite3_column_blob(st, 0));
    out.assign(d, d + sqlite3_column_bytes(st, 0));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// zstd frame (with its content size) of raw payload bytes, for crafted blobs.
std::vector<char> zframe(const std::vector<std::uint8_t>& payload) {
  std::vector<char> out(ZSTD_compressBound(payload.size()));
  const std::size_t n = ZSTD_compress(out.data(), out.size(), payload.data(), payload.size(), 1);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

void varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<std::uint8_t>(v | 0x80));
  out.push_back(static_cast<std::uint8_t>(v));
}

// A payload of version 1 with the given id deltas (zigzag-coded) and all counters = 5 µs.
std::vector<std::uint8_t> payload_deltas(const std::vector<std::int64_t>& deltas) {
  std::vector<std::uint8_t> p{store::kTenantBlobVersion1};
  varint(p, deltas.size());
  for (const std::int64_t d : deltas) varint(p, (static_cast<std::uint64_t>(d) << 1) ^ static_cast<std::uint64_t>(d >> 63));
  for (std::size_t k = 0; k < 4 * deltas.size(); ++k) varint(p, 6);
  return p;
}

// The same with the given ids.
std::vector<std::uint8_t> payload(const std::vector<std::uint32_t>& ids) {
  std::vector<std::int64_t> deltas;
  std::int64_t prev = 0;
  for (const std::uint32_t id : ids) {
    deltas.push_back(std::int64_t{id} - prev);
    prev = id;
  }
  return payload_deltas(deltas);
}


std::uint64_t zz(std::int64_t d) { return (static_cast<std::uint64_t>(d) << 1) ^ static_cast<std::uint64_t>(d >> 63); }

// A payload of version 2: one scan per id list, 5 ns apart; every counter 5 µs (the first
// scan's and a new id's code 6, the others delta 0 against the previous scan's).
std::vector<std::uint8_t> payload_v2(const std::vector<std::vector<std::uint32_t>>& scans) {
  std::vector<std::uint8_t> p{store::kTenantBlobVersion};
  varint(p, scans.size());
  for (std::size_t k = 0; k < scans.size(); ++k) {
    if (k > 0) varint(p, 5);
    varint(p, scans[k].size());
    std::int64_t prev = 0;
    for (const std::uint32_t id : scans[k]) {
      varint(p, zz(std::int64_t{id} - prev));
      prev = id;
    }
    for (int c = 0; c < 4; ++c)
      for (const std::uint32_t id : scans[k]) {
        const bool had = k > 0 && std::find(scans[k - 1].begin(), scans[k - 1].end(), id) != scans[k - 1].end();
        varint(p, had ? 0 : 6);
      }
  }
  return p;
}

// Rows of the store, as (t_unix_ns, t_last_ns), in rowid order.
std::vector<std::pair<std::int64_t, std::int64_t>> rows_of(const fs::path& p) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT t_unix_ns, t_last_ns FROM tenant_scans ORDER BY rowid", -1, &st, nullptr);
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  while (st && sqlite3_step(st) == SQLITE_ROW) out.emplace_back(sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST_F(TenantStoreTest, ScansRoundTripWithPathsAppearingBetweenScans) {
  const fs::path p = dir_ / "run.db";
  std::vector<std::string> paths{"system.slice/sshd.service", "user.slice/user-1000.slice/session-1.scope"};
  const TenantScan s0 = scan(2'000, {0, 1}, {tc(1e12, 0, 0, 0), tc(5, kNaN, 7, kNaN)});
  // a path appears; ids out of order; a NaN in every column; large and small counters
  const TenantScan s1 = scan(7'000, {2, 0, 1},
                             {tc(kNaN, 1e9, 3, 123456789), tc(1e12 + 17, 1, kNaN, 0), tc(6, 2, 8, kNaN)});
  const TenantScan s2 = scan(12'000, {4, 3, 1}, {tc(0, 0, 0, 0), tc(kNaN, kNaN, kNaN, kNaN), tc(9e15, 4, 9, 1)});
  const TenantScan s3 = scan(17'000, {}, {});  // a walk that found nothing
  {
    StoreWriter w(p, meta(), channels());
    const double row[] = {1.0};
    w.append(1'000, row);
    w.append_tenant_scan(s0, paths);
    paths.push_back("kubepods.slice/kubepods-burstable.slice/pod1/cri-containerd-ab12.scope");
    w.append_tenant_scan(s1, paths);
    paths.push_back("machine.slice/a.scope");
    paths.push_back("machine.slice/b.scope");
    w.append_tenant_scan(s2, paths);
    w.append_tenant_scan(s3, paths);  // no new path
    w.finish(17'000, 0);
  }
  EXPECT_EQ(count_rows(p, "SELECT COUNT(*) FROM tenant_paths"), 5);
  EXPECT_EQ(rows_of(p), (std::vector<std::pair<std::int64_t, std::int64_t>>{{2'000, 17'000}}));  // one row
  const Recording r = load_recording(p);
  EXPECT_EQ(r.tenants.paths, paths);
  ASSERT_EQ(r.tenants.scans.size(), 4u);
  expect_same(r.tenants.scans[0], s0);
  expect_same(r.tenants.scans[1], s1);
  expect_same(r.tenants.scans[2], s2);
  expect_same(r.tenants.scans[3], s3);
  EXPECT_EQ(r.t_unix_ns.size(), 1u);
}

// 30 scans 5 s apart: rows of 12, 12 and 6 (the last written by finish()), with cgroups coming
// and going mid-row and at a row's start, NaN turning up and going away, a counter going down
// (a cgroup created again: a negative delta) and counters near the largest code.
TEST_F(TenantStoreTest, ScansRoundTripAcrossRows) {
  const fs::path p = dir_ / "rows.db";
  const std::int64_t t0 = 1'700'000'000'000'000'000;
  const std::int64_t step = 5'000'000'000;
  std::vector<std::string> paths{"a", "b", "c"};
  std::vector<std::vector<std::string>> paths_at;  // the list given with each scan
  std::vector<TenantScan> want;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<TenantCounters> state{tc(1e9, 0, 0, 0), tc(5e11, 1e6, 2e6, 3e6), tc(0, 0, 0, 0), tc(0, 0, 0, 0),
                                    tc(0, 0, 0, 0)};
  for (int k = 0; k < 30; ++k) {
    if (k == 5) paths.push_back("d");   // id 3 appears mid-row
    if (k == 12) paths.push_back("e");  // id 4 appears at a row's first scan
    TenantScan s;
    s.t_unix_ns = t0 + k * step + (k % 3) * 1'000;  // not exactly periodic
    for (std::uint32_t id = 0; id < paths.size(); ++id) {
      if (id == 2 && k >= 7 && k < 20) continue;  // id 2 leaves mid-row and comes back in another
      auto& c = state[id];
      c.cpu_usage_us += std::floor(u(rng) * 2e7);
      c.cpu_some_us += id == 0 ? 0 : std::floor(u(rng) * 2e5);  // id 0: idle stalls
      c.memory_some_us += std::floor(u(rng) * 1e3);
      c.io_some_us = k == 9 && id == 1 ? 17 : c.io_some_us + std::floor(u(rng) * 2e5);  // went down
      if (id == 1 && k == 10) c.cpu_usage_us = 0;  // restarted
      if (id == 3 && k == 15) c.cpu_usage_us = 9e18;  // near the largest code
      TenantCounters v = c;
      if (id == 1 && k >= 3 && k < 6) v.memory_some_us = kNaN;  // unreadable for a while
      if (id == 0 && k % 4 == 1) v.io_some_us = kNaN;            // NaN between values
      if (id == 3) v.cpu_some_us = kNaN;                          // NaN throughout
      s.ids.push_back(id);
      s.counters.push_back(v);
    }
    if (k == 20) std::reverse(s.ids.begin(), s.ids.end()), std::reverse(s.counters.begin(), s.counters.end());
    want.push_back(s);
    paths_at.push_back(paths);
  }
  {
    StoreWriter w(p, meta(), channels());
    for (int k = 0; k < 30; ++k) w.append_tenant_scan(want[k], paths_at[k]);
    EXPECT_EQ(count_rows(p, "SELECT COUNT(*) FROM tenant_paths"), 5);  // paths are written at once
    w.finish(want.back().t_unix_ns, 0);
  }
  EXPECT_EQ(rows_of(p), (std::vector<std::pair<std::int64_t, std::int64_t>>{{want[0].t_unix_ns, want[11].t_unix_ns},
                                                                            {want[12].t_unix_ns, want[23].t_unix_ns},
                                                                            {want[24].t_unix_ns, want[29].t_unix_ns}}));
  const Recording r = load_recording(p);
  EXPECT_EQ(r.tenants.paths, paths);
  ASSERT_EQ(r.tenants.scans.size(), 30u);
  for (int k = 0; k < 30; ++k) {
    SCOPED_TRACE("scan " + std::to_string(k));
    expect_same(r.tenants.scans[k], want[k]);
  }
  // A range cutting rows: scans 10..25 of rows 0, 1 and 2, bounds included.
  LoadOptions o;
  o.start_unix_ns = want[10].t_unix_ns;
  o.end_unix_ns = want[25].t_unix_ns;
  const Recording part = load_recording(p, o);
  ASSERT_EQ(part.tenants.scans.size(), 16u);
  for (int k = 10; k <= 25; ++k) expect_same(part.tenants.scans[k - 10], want[k]);
  o.start_unix_ns = want[12].t_unix_ns + 1;  // within row 1, past its first scan
  o.end_unix_ns = want[13].t_unix_ns;
  const Recording one = load_recording(p, o);
  ASSERT_EQ(one.tenants.scans.size(), 1u);
  expect_same(one.tenants.scans[0], want[13]);
}

// Scans are buffered: a store being written holds the full rows only; finish() writes the rest,
// and so (best effort) does a writer destroyed without finish().
TEST_F(TenantStoreTest, PendingScansAreWrittenByFinishOrTheDestructor) {
  const std::vector<std::string> paths{"a"};
  for (const bool finish : {true, false}) {
    const fs::path p = dir_ / (finish ? "finish.db" : "dtor.db");
    {
      StoreWriter w(p, meta(), channels());
      const double row[] = {1.0};
      w.append(1'000, row);
      for (int k = 0; k < 14; ++k) w.append_tenant_scan(scan(1'000 + k, {0}, {tc(k, 0, 0, 0)}), paths);
      const Recording live = load_recording(p);  // while it is written: one row of 12
      EXPECT_EQ(live.tenants.paths, paths);
      ASSERT_EQ(live.tenants.scans.size(), kTenantScansPerRow);
      EXPECT_EQ(live.tenants.scans.back().counters[0].cpu_usage_us, 11.0);
      EXPECT_EQ(live.t_unix_ns.size(), 1u);
      if (finish) w.finish(2'000, 0);
    }
    const Recording r = load_recording(p);
    ASSERT_EQ(r.tenants.scans.size(), 14u) << (finish ? "finish" : "destructor");
    EXPECT_EQ(r.tenants.scans.back().counters[0].cpu_usage_us, 13.0);
    EXPECT_EQ(count_rows(p, "SELECT COUNT(*) FROM tenant_scans"), 2);
  }
}

// A row spans less than kTenantRowMaxSpanNs: scans 20 s apart make rows of 3; a clock stepped
// back closes the row too (the loader still returns time order).
TEST_F(TenantStoreTest, RowsCloseAfterAMinuteOrAClockStepBack) {
  const fs::path p = dir_ / "span.db";
  const std::int64_t s = 1'000'000'000;
  {
    StoreWriter w(p, meta(), channels());
    for (int k = 0; k < 7; ++k) w.append_tenant_scan(scan(k * 20 * s, {0}, {tc(k, 0, 0, 0)}), {"a"});
    w.append_tenant_scan(scan(130 * s, {0}, {tc(7, 0, 0, 0)}), {"a"});  // joins the row of 120 s
    w.append_tenant_scan(scan(125 * s, {0}, {tc(8, 0, 0, 0)}), {"a"});  // stepped back: a new row
    w.finish(130 * s, 0);
  }
  EXPECT_EQ(rows_of(p), (std::vector<std::pair<std::int64_t, std::int64_t>>{
                            {0, 40 * s}, {60 * s, 100 * s}, {120 * s, 130 * s}, {125 * s, 125 * s}}));
  const Recording r = load_recording(p);
  ASSERT_EQ(r.tenants.scans.size(), 9u);
  for (std::size_t k = 1; k < r.tenants.scans.size(); ++k)
    EXPECT_LE(r.tenants.scans[k - 1].t_unix_ns, r.tenants.scans[k].t_unix_ns);
  EXPECT_EQ(r.tenants.scans[7].counters[0].cpu_usage_us, 8.0);  // 125 s
  EXPECT_EQ(r.tenants.scans[8].counters[0].cpu_usage_us, 7.0);  // 130 s
}

// Stores written before batching: tenant_scans without t_last_ns, a version 1 blob per scan.
// They load as before; a version 1 row in a store of today loads too.
TEST_F(TenantStoreTest, Version1RowsStillLoad) {
  const fs::path p = dir_ / "v1.db";
  const std::vector<std::string> paths{"a", "b"};
  const std::vector<TenantScan> v1{scan(1'000, {0, 1}, {tc(1, 2, kNaN, 4), tc(5e11, 0, 0, 0)}),
                                   scan(6'000, {1}, {tc(5e11 + 9, 1, 1, 1)}), scan(11'000, {}, {})};
  {
    StoreWriter w(p, meta(), channels());
    const double row[] = {1.0};
    w.append(1'000, row);
    w.append_tenant_scan(scan(500, {0}, {tc(1, 1, 1, 1)}), paths);  // writes the paths
    w.finish(11'000, 0);
  }
  store::TenantCodec codec;
  std::vector<char> blob;
  {  // the old table, rows of version 1
    std::string sql = "DROP TABLE tenant_scans; CREATE TABLE tenant_scans(t_unix_ns INTEGER NOT NULL, data BLOB NOT NULL);";
    for (const auto& s : v1) {
      codec.encode_v1(s, 9, blob);
      std::string hex;
      for (const char c : blob) {
        char b[3];
        std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(c));
        hex += b;
      }
      sql += "INSERT INTO tenant_scans VALUES(" + std::to_string(s.t_unix_ns) + ", x'" + hex + "');";
    }
    exec_sql(p, sql);
  }
  Recording r = load_recording(p);
  EXPECT_EQ(r.tenants.paths, paths);
  ASSERT_EQ(r.tenants.scans.size(), 3u);
  for (int k = 0; k < 3; ++k) expect_same(r.tenants.scans[k], v1[k]);
  LoadOptions o;
  o.start_unix_ns = 2'000;
  o.end_unix_ns = 6'000;
  r = load_recording(p, o);
  ASSERT_EQ(r.tenants.scans.size(), 1u);
  expect_same(r.tenants.scans[0], v1[1]);

  // A version 1 blob in a row of today's table, between version 2 rows.
  const fs::path q = dir_ / "mixed.db";
  {
    StoreWriter w(q, meta(), channels());
    for (int k = 0; k < 3 * static_cast<int>(kTenantScansPerRow); ++k)
      w.append_tenant_scan(scan(1'000 + k * 5'000, {0}, {tc(k, 0, 0, 0)}), paths);
    w.finish(200'000, 0);
  }
  const std::int64_t t1 = 1'000 + std::int64_t{kTenantScansPerRow} * 5'000;
  codec.encode_v1(scan(0, {1, 0}, {tc(7, 7, 7, 7), tc(8, 8, 8, kNaN)}), 9, blob);
  set_blob(q, t1, blob);
  r = load_recording(q);
  ASSERT_EQ(r.tenants.scans.size(), 2 * kTenantScansPerRow + 1);
  expect_same(r.tenants.scans[kTenantScansPerRow], scan(t1, {1, 0}, {tc(7, 7, 7, 7), tc(8, 8, 8, kNaN)}));
  EXPECT_EQ(r.tenants.scans.back().counters[0].cpu_usage_us, 3.0 * kTenantScansPerRow - 1);
}

TEST_F(TenantStoreTest, ScansLoadInTimeOrderAndSparsePathIdsLeaveEmptyPaths) {
  const fs::path p = dir_ / "run.db";
  const std::vector<std::string> paths{"a", "b"};
  {
    StoreWriter w(p, meta(), channels());
    w.append_tenant_scan(scan(9'000, {1}, {tc(2, 0, 0, 0)}), paths);
    w.append_tenant_scan(scan(3'000, {0}, {tc(1, 0, 0, 0)}), paths);  // stamped earlier, written later
    w.finish(9'000, 0);
  }
  exec_sql(p, "INSERT INTO tenant_paths VALUES(5, 'f');");  // a crafted store that skips ids 2..4
  const Recording r = load_recording(p);
  ASSERT_EQ(r.tenants.scans.size(), 2u);
  EXPECT_EQ(r.tenants.scans[0].t_unix_ns, 3'000);
  EXPECT_EQ(r.tenants.scans[1].t_unix_ns, 9'000);
  EXPECT_EQ(r.tenants.paths, (std::vector<std::string>{"a", "b", "", "", "", "f"}));
}

TEST_F(TenantStoreTest, StoreWithoutTenantTablesLoadsEmptyTenants) {
  const fs::path p = dir_ / "old.db";
  {
    StoreWriter w(p, meta(), channels());
    const double row[] = {4.0};
    w.append(1'000, row);
    w.append_tenant_scan(scan(1'000, {0}, {tc(1, 2, 3, 4)}), {"a"});
    w.finish(1'000, 0);
  }
  ASSERT_EQ(load_recording(p).tenants.scans.size(), 1u);  // the tables are read when present
  exec_sql(p, "DROP TABLE tenant_scans; DROP TABLE tenant_paths;");
  const Recording r = load_recording(p);
  EXPECT_TRUE(r.tenants.paths.empty());
  EXPECT_TRUE(r.tenants.scans.empty());
  ASSERT_EQ(r.t_unix_ns.size(), 1u);
  EXPECT_EQ(r.values(0, 0), 4.0);
}

TEST_F(TenantStoreTest, AgeRetentionDeletesRowsWhoseLastScanIsOldAndKeepsPaths) {
  const fs::path p = dir_ / "roll.db";
  std::vector<std::string> paths;
  {
    StoreWriter w(p, meta(), channels(), /*chunk_samples=*/10);
    w.set_retention(/*max_age_ns=*/50'000, 0);
    for (int i = 0; i < 200; ++i) {
      const double row[] = {double(i)};
      const std::int64_t t = 1'000 + i * 1'000;
      w.append(t, row);
      if (i % 5 == 0) {  // a new tenant at every scan
        paths.push_back("t" + std::to_string(i));
        w.append_tenant_scan(scan(t, {static_cast<std::uint32_t>(paths.size() - 1)}, {tc(i, 0, 0, 0)}), paths);
      }
    }
    w.finish(1'000 + 199 * 1'000, 0);
  }
  const Recording r = load_recording(p);
  // The last prune ran at the commit of the chunk ending at sample 199: cutoff = t(199) - 50 µs
  // = t(149). Rows of 12 scans (60 samples): samples 0-55, 60-115, 120-175, then 180-195
  // (written by finish()). The row 60-115 ended before the cutoff, the row 120-175 did not: it
  // stays whole.
  const std::int64_t cutoff = 1'000 + 199 * 1'000 - 50'000;
  ASSERT_EQ(r.tenants.scans.size(), 16u);
  EXPECT_EQ(r.tenants.scans.front().t_unix_ns, 1'000 + 120 * 1'000);
  EXPECT_LT(r.tenants.scans.front().t_unix_ns, cutoff);
  EXPECT_EQ(r.tenants.scans.back().t_unix_ns, 1'000 + 195 * 1'000);
  EXPECT_EQ(r.tenants.paths, paths);  // paths are never pruned
  EXPECT_EQ(r.tenants.scans.back().ids[0], 39u);
  EXPECT_EQ(count_rows(p, "SELECT COUNT(*) FROM tenant_scans"), 2);
}

TEST_F(TenantStoreTest, SizeRetentionDeletesRowsOlderThanTheOldestSampleLeft) {
  const fs::path p = dir_ / "size.db";
  std::vector<ChannelInfo> chans;
  for (int c = 0; c < 64; ++c) chans.push_back({"t:noise." + std::to_string(c), "count", Kind::gauge, Subsystem::system});
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> row(chans.size());
  {
    StoreWriter w(p, meta(), chans, 32);
    w.set_retention(0, 64 * 1024);
    for (int i = 0; i < 2000; ++i) {
      for (double& v : row) v = u(rng);
      w.append(i, row);
      if (i % 10 == 0) w.append_tenant_scan(scan(i, {0}, {tc(i, 0, 0, 0)}), {"a"});
    }
    w.finish(1999, 0);
  }
  const Recording r = load_recording(p);
  ASSERT_FALSE(r.t_unix_ns.empty());
  ASSERT_GT(r.t_unix_ns.front(), 1000);
  ASSERT_FALSE(r.tenants.scans.empty());
  // Scan j is stamped 10 j, row j / 12 holds scans 12 (j / 12) .. +11. The first row left is
  // the first whose last scan is not older than the oldest sample left.
  const std::int64_t oldest = r.t_unix_ns.front();
  const std::int64_t first = r.tenants.scans.front().t_unix_ns / 10;
  EXPECT_EQ(first % 12, 0);
  EXPECT_GE(10 * (first + 11), oldest);  // its row ends at or after the oldest sample
  EXPECT_LT(10 * (first - 1), oldest);   // the row before ended before it
  EXPECT_EQ(r.tenants.scans.back().t_unix_ns, 1990);
  EXPECT_EQ(r.tenants.scans.size(), std::size_t(200 - first));  // nothing newer deleted
}

class CorruptScanTest : public TenantStoreTest, public ::testing::WithParamInterface<const char*> {};

// The middle of three rows (of 12 scans each) gets a bad blob: the store still loads, with its
// samples and the scans of the two good rows.
TEST_P(CorruptScanTest, BadRowIsSkippedAndTheRestLoads) {
  const std::string kind = GetParam();
  const fs::path p = dir_ / "bad.db";
  std::vector<std::string> paths{"a", "b", "c"};
  const int per_row = static_cast<int>(kTenantScansPerRow);
  const auto t_of = [](int k) { return std::int64_t{1'000} + k * 1'000; };
  {
    StoreWriter w(p, meta(), channels());
    for (int i = 0; i < 3; ++i) {
      const double row[] = {double(i)};
      w.append(1'000 + i * 1'000, row);
    }
    for (int k = 0; k < 3 * per_row; ++k)
      w.append_tenant_scan(scan(t_of(k), {0, 1, 2}, {tc(k, 1, 2, 3), tc(4, 5, 6, 7), tc(8, 9, 10, 11)}), paths);
    w.finish(t_of(3 * per_row), 0);
  }
  const std::int64_t middle = t_of(per_row);
  std::vector<char> blob = blob_of(p, middle);
  ASSERT_FALSE(blob.empty());
  std::size_t middle_kept = 0;  // scans of the middle row that still load
  if (kind == "garbage") {
    blob = std::vector<char>(blob.size(), '\x5a');
  } else if (kind == "empty") {
    blob.clear();
  } else if (kind == "truncated_frame") {
    blob.resize(blob.size() / 2);
  } else if (kind == "truncated_payload") {
    auto pl = payload({0, 1, 2});
    pl.pop_back();
    blob = zframe(pl);
  } else if (kind == "trailing_bytes") {
    auto pl = payload({0, 1, 2});
    pl.push_back(1);
    blob = zframe(pl);
  } else if (kind == "huge_count") {
    std::vector<std::uint8_t> pl{store::kTenantBlobVersion1};
    varint(pl, std::uint64_t{1} << 40);  // 2^40 entries in a few bytes
    for (int k = 0; k < 20; ++k) pl.push_back(1);
    blob = zframe(pl);
  } else if (kind == "long_varint") {
    std::vector<std::uint8_t> pl{store::kTenantBlobVersion1};
    for (int k = 0; k < 11; ++k) pl.push_back(0xff);
    pl.push_back(0);
    blob = zframe(pl);
  } else if (kind == "varint_overflow") {  // a counter of 9 × 0xff then 0x02: bits past 64
    std::vector<std::uint8_t> pl{store::kTenantBlobVersion1, 1, 0};
    for (int k = 0; k < 9; ++k) pl.push_back(0xff);
    pl.push_back(0x02);
    for (int k = 0; k < 3; ++k) pl.push_back(6);
    blob = zframe(pl);
  } else if (kind == "huge_frame") {
    // A well-formed payload of 14 M entries (id 0, counters 0): 70 MB that compress to a few
    // KB. Only the 64 MiB bound on the frame's content size refuses it.
    const std::size_t n = 14'000'000;
    std::vector<std::uint8_t> pl{store::kTenantBlobVersion1};
    varint(pl, n);
    pl.resize(pl.size() + n, 0);      // id deltas 0
    pl.resize(pl.size() + 4 * n, 1);  // counter codes 1 = 0 µs
    ASSERT_GT(pl.size(), store::kTenantMaxPayload);
    blob = zframe(pl);
  } else if (kind == "wrong_version") {
    auto pl = payload({0, 1, 2});
    pl[0] = 3;
    blob = zframe(pl);
  } else if (kind == "id_beyond_2_24") {
    blob = zframe(payload({0, 1u << 24}));
  } else if (kind == "id_beyond_paths") {
    blob = zframe(payload({0, 7}));
  } else if (kind == "id_without_path") {  // id 3 falls in a gap of a sparse path table
    exec_sql(p, "INSERT INTO tenant_paths VALUES(5, 'f');");
    paths = {"a", "b", "c", "", "", "f"};
    blob = zframe(payload({0, 3}));
  } else if (kind == "v2_no_scans") {
    blob = zframe({store::kTenantBlobVersion, 0});
  } else if (kind == "v2_too_many_scans") {  // 4097 empty scans, each well-formed (dt 0, n 0)
    std::vector<std::uint8_t> pl{store::kTenantBlobVersion};
    varint(pl, store::kTenantMaxScansPerRow + 1);
    pl.push_back(0);
    for (std::size_t k = 1; k <= store::kTenantMaxScansPerRow; ++k) pl.insert(pl.end(), {0, 0});
    blob = zframe(pl);
  } else if (kind == "v2_more_scans_than_bytes") {
    auto pl = payload_v2({{0}, {0}});
    pl[1] = 100;
    blob = zframe(pl);
  } else if (kind == "v2_truncated") {
    auto pl = payload_v2({{0, 1}, {0, 1, 2}, {2}});
    pl.pop_back();
    blob = zframe(pl);
  } else if (kind == "v2_trailing_bytes") {
    auto pl = payload_v2({{0, 1}, {0, 1, 2}, {2}});
    pl.push_back(0);
    blob = zframe(pl);
  } else if (kind == "v2_time_overflow") {  // a second scan 2^63 - 1 ns after the first
    auto pl = payload_v2({{0}});
    pl[1] = 2;
    varint(pl, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    pl.push_back(0);  // n = 0
    blob = zframe(pl);
  } else if (kind == "v2_id_beyond_2_24_in_a_later_scan") {
    blob = zframe(payload_v2({{0, 1}, {0, 1u << 24}}));
  } else if (kind == "v2_long_varint") {  // an 11-byte counter delta in the second scan
    auto pl = payload_v2({{0}});
    pl[1] = 2;
    pl.insert(pl.end(), {5, 1, 0});
    for (int k = 0; k < 10; ++k) pl.push_back(0xff);
    pl.push_back(0);
    pl.insert(pl.end(), {0, 0, 0});
    blob = zframe(pl);
  } else if (kind == "v2_id_without_path_in_one_scan") {  // only that scan is lost
    exec_sql(p, "INSERT INTO tenant_paths VALUES(5, 'f');");
    paths = {"a", "b", "c", "", "", "f"};
    blob = zframe(payload_v2({{0, 1}, {0, 3}, {2, 5}}));
    middle_kept = 2;
  } else {
    FAIL() << "unknown kind " << kind;
  }
  set_blob(p, middle, blob);
  const Recording r = load_recording(p);
  ASSERT_EQ(r.t_unix_ns.size(), 3u);
  EXPECT_EQ(r.values(2, 0), 2.0);
  EXPECT_EQ(r.tenants.paths, paths);
  ASSERT_EQ(r.tenants.scans.size(), 2 * kTenantScansPerRow + middle_kept);
  EXPECT_EQ(r.tenants.scans[0].t_unix_ns, t_of(0));
  EXPECT_EQ(r.tenants.scans[per_row - 1].t_unix_ns, t_of(per_row - 1));
  if (middle_kept == 2) {  // the crafted row's scans 0 and 2, 5 ns apart each
    EXPECT_EQ(r.tenants.scans[per_row].t_unix_ns, middle);
    EXPECT_EQ(r.tenants.scans[per_row + 1].t_unix_ns, middle + 10);
    EXPECT_EQ(r.tenants.scans[per_row + 1].ids, (std::vector<std::uint32_t>{2, 5}));
    EXPECT_EQ(r.tenants.scans[per_row + 1].counters[1].io_some_us, 5.0);
  }
  EXPECT_EQ(r.tenants.scans.back().t_unix_ns, t_of(3 * per_row - 1));
  EXPECT_EQ(r.tenants.scans.back().counters[0].cpu_usage_us, 3.0 * per_row - 1);
}

INSTANTIATE_TEST_SUITE_P(Kinds, CorruptScanTest,
                         ::testing::Values("garbage", "empty", "truncated_frame", "truncated_payload",
                                           "trailing_bytes", "huge_count", "long_varint", "varint_overflow", "huge_frame",
                                           "wrong_version", "id_beyond_2_24", "id_beyond_paths",
                                           "id_without_path", "v2_no_scans", "v2_too_many_scans",
                                           "v2_more_scans_than_bytes", "v2_truncated", "v2_trailing_bytes",
                                           "v2_time_overflow", "v2_id_beyond_2_24_in_a_later_scan",
                                           "v2_long_varint", "v2_id_without_path_in_one_scan"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

// The crafting helpers above make blobs the loader accepts when nothing is wrong with them (so
// the corrupt cases fail for the reason they name).
TEST_F(TenantStoreTest, CraftedWellFormedBlobsLoad) {
  const fs::path p = dir_ / "ok.db";
  {
    StoreWriter w(p, meta(), channels());
    w.append_tenant_scan(scan(1'000, {0}, {tc(1, 1, 1, 1)}), {"a", "b", "c"});
    w.append_tenant_scan(scan(100'000'000'000, {0}, {tc(1, 1, 1, 1)}), {"a", "b", "c"});  // a second row
    w.finish(1'000, 0);
  }
  set_blob(p, 1'000, zframe(payload({2, 0, 1})));
  // 3 scans 5 ns apart; id 1 leaves and comes back, id 2 comes; every counter 5 µs
  set_blob(p, 100'000'000'000, zframe(payload_v2({{0, 1}, {0}, {1, 0, 2}})));
  const Recording r = load_recording(p);
  ASSERT_EQ(r.tenants.scans.size(), 4u);
  EXPECT_EQ(r.tenants.scans[0].ids, (std::vector<std::uint32_t>{2, 0, 1}));
  EXPECT_EQ(r.tenants.scans[0].counters[2].io_some_us, 5.0);
  for (int k = 1; k < 4; ++k) EXPECT_EQ(r.tenants.scans[k].t_unix_ns, 100'000'000'000 + (k - 1) * 5);
  expect_same(r.tenants.scans[3], scan(100'000'000'010, {1, 0, 2}, {tc(5, 5, 5, 5), tc(5, 5, 5, 5), tc(5, 5, 5, 5)}));
  // the v2 crafting with an 11-byte varint in the right place loads when the varint is short
  auto pl = payload_v2({{0}});
  pl[1] = 2;
  pl.insert(pl.end(), {5, 1, 0, 0x80, 0x00, 0, 0, 0});  // delta 0 as a 2-byte varint
  set_blob(p, 100'000'000'000, zframe(pl));
  ASSERT_EQ(load_recording(p).tenants.scans.size(), 3u);
}
TEST_F(TenantStoreTest, BadPathRowsAreIgnored) {
  const fs::path p = dir_ / "paths.db";
  {
    StoreWriter w(p, meta(), channels());
    w.append_tenant_scan(scan(1'000, {0}, {tc(1, 1, 1, 1)}), {"a"});
    w.finish(1'000, 0);
  }
  // ids beyond 2^24 or negative would size the path list unboundedly: ignored
  exec_sql(p, "INSERT INTO tenant_paths VALUES(4611686018427387904, 'huge'); INSERT INTO tenant_paths VALUES(-3, 'neg');");
  const Recording r = load_recording(p);
  EXPECT_EQ(r.tenants.paths, std::vector<std::string>{"a"});
  EXPECT_EQ(r.tenants.scans.size(), 1u);
}

TEST_F(TenantStoreTest, ScansAreClippedToTheLoadTimeRange) {
  const fs::path p = dir_ / "range.db";
  {
    StoreWriter w(p, meta(), channels());
    for (int i = 0; i < 10; ++i) {
      const double row[] = {double(i)};
      w.append(1'000 * (i + 1), row);
      w.append_tenant_scan(scan(1'000 * (i + 1), {0}, {tc(i, 0, 0, 0)}), {"a"});
    }
    w.finish(10'000, 0);
  }
  LoadOptions o;
  o.start_unix_ns = 3'000;
  o.end_unix_ns = 6'000;
  const Recording r = load_recording(p, o);
  ASSERT_EQ(r.tenants.scans.size(), 4u);  // bounds included, as for samples
  EXPECT_EQ(r.tenants.scans.front().t_unix_ns, 3'000);
  EXPECT_EQ(r.tenants.scans.back().t_unix_ns, 6'000);
  EXPECT_EQ(r.tenants.scans.front().counters[0].cpu_usage_us, 2.0);
  EXPECT_EQ(r.tenants.paths, std::vector<std::string>{"a"});  // paths whole
  EXPECT_EQ(r.t_unix_ns.size(), 4u);
}

TEST_F(TenantStoreTest, WriterRefusesBadScansAndWritesNothing) {
  const fs::path p = dir_ / "refuse.db";
  {
    StoreWriter w(p, meta(), channels());
    EXPECT_THROW(w.append_tenant_scan(scan(1'000, {0, 1}, {tc(1, 1, 1, 1)}), {"a", "b"}), StoreError);  // lengths
    EXPECT_THROW(w.append_tenant_scan(scan(1'000, {2}, {tc(1, 1, 1, 1)}), {"a", "b"}), StoreError);     // no path
    try {
      w.append_tenant_scan(scan(1'000, {2}, {tc(1, 1, 1, 1)}), {"a", "b"});
    } catch (const StoreError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos);
      EXPECT_NE(what.find(p.string()), std::string::npos) << what;
    }
    w.append_tenant_scan(scan(2'000, {1}, {tc(1, 1, 1, 1)}), {"a", "b"});  // paths a and b written here
    EXPECT_THROW(w.append_tenant_scan(scan(3'000, {0}, {tc(1, 1, 1, 1)}), {"a"}), StoreError);  // list shrank
    w.append_tenant_scan(scan(4'000, {2}, {tc(2, 2, 2, 2)}), {"a", "b", "c"});
    w.finish(4'000, 0);
  }
  const Recording r = load_recording(p);
  EXPECT_EQ(r.tenants.paths, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(r.tenants.scans.size(), 2u);
  EXPECT_EQ(r.tenants.scans[0].t_unix_ns, 2'000);
  EXPECT_EQ(r.tenants.scans[1].t_unix_ns, 4'000);
}

// Decodes one row (either version) stamped t_first; expects it to decode.
std::vector<TenantScan> decode(store::TenantCodec& codec, const std::vector<char>& blob, std::int64_t t_first = 0) {
  std::vector<TenantScan> out;
  codec.decode_row(blob, t_first, out);
  return out;
}

TEST(TenantCodecTest, CountersRoundToWholeMicrosecondsAndUnrepresentableOnesBecomeNaN) {
  store::TenantCodec codec;
  std::vector<char> blob;
  const TenantScan in = scan(0, {0, 1}, {tc(2.4, 2.6, -0.2, 0), tc(-1, std::numeric_limits<double>::infinity(), 1e19, 9e18)});
  const TenantScan want = scan(0, {0, 1}, {tc(2, 3, 0, 0), tc(kNaN, kNaN, kNaN, 9e18)});
  codec.encode_v1(in, 3, blob);
  auto out = decode(codec, blob);
  ASSERT_EQ(out.size(), 1u);
  expect_same(out[0], want);
  // the same as the second scan of a version 2 row (deltas against the first)
  const TenantScan first = scan(0, {0, 1}, {tc(7, 7, 7, 7), tc(7, kNaN, 7, 7)});
  TenantScan second = in;
  second.t_unix_ns = 5;
  const TenantScan row[] = {first, second};
  codec.encode_row(row, 3, blob);
  out = decode(codec, blob);
  ASSERT_EQ(out.size(), 2u);
  expect_same(out[0], first);
  TenantScan want2 = want;
  want2.t_unix_ns = 5;
  expect_same(out[1], want2);
  EXPECT_THROW(codec.encode_v1(scan(0, {1u << 24}, {tc(1, 1, 1, 1)}), 3, blob), std::invalid_argument);
  const TenantScan big[] = {first, scan(5, {1u << 24}, {tc(1, 1, 1, 1)})};
  EXPECT_THROW(codec.encode_row(big, 3, blob), std::invalid_argument);
}

// Deltas of whole codes (mod 2^64) round-trip whatever the two values: down, up, from and to
// NaN, across the whole range.
TEST(TenantCodecTest, DeltasRoundTripAnyPairOfCounters) {
  const double values[] = {kNaN, 0, 1, 2, 1e6, 123456789, 4.5e15, 9007199254740992.0, 9.1e18, 9.19e18};
  std::vector<TenantScan> scans;
  std::int64_t t = -1'000'000'000;  // before 1970 works too
  for (const double a : values)
    for (const double b : values) {
      // id 0 goes a -> b, id 1 b -> a, id 2 stays a (delta 0), id 3 appears with b (absolute)
      scans.push_back(scan(t, {0, 1, 2}, {tc(a, b, a, b), tc(b, a, b, a), tc(a, a, a, a)}));
      scans.push_back(scan(t + 7, {0, 1, 2, 3}, {tc(b, a, b, a), tc(a, b, a, b), tc(a, a, a, a), tc(b, b, b, b)}));
      t += 5'000'000'000;
    }
  store::TenantCodec codec;
  std::vector<char> blob;
  for (std::size_t at = 0; at < scans.size(); at += kTenantScansPerRow) {
    const std::span<const TenantScan> row(scans.data() + at, std::min(kTenantScansPerRow, scans.size() - at));
    codec.encode_row(row, 9, blob);
    const auto out = decode(codec, blob, row[0].t_unix_ns);
    ASSERT_EQ(out.size(), row.size());
    for (std::size_t k = 0; k < row.size(); ++k) expect_same(out[k], row[k]);
  }
  // a row of 2 scans, the second with every counter going down to 0 (restarted cgroups)
  const TenantScan down[] = {scan(0, {0, 1}, {tc(9e18, 1e12, 5e6, 5), tc(3, 2, 1, 0)}),
                             scan(5, {1, 0}, {tc(0, 0, 0, 0), tc(0, 0, 0, 0)})};
  codec.encode_row(down, 9, blob);
  const auto out = decode(codec, blob);
  ASSERT_EQ(out.size(), 2u);
  expect_same(out[1], down[1]);
}

TEST(TenantCodecTest, EncoderRefusesBadRows) {
  store::TenantCodec codec;
  std::vector<char> blob;
  EXPECT_THROW(codec.encode_row({}, 3, blob), std::invalid_argument);  // no scan
  const TenantScan backwards[] = {scan(10, {}, {}), scan(9, {}, {})};
  EXPECT_THROW(codec.encode_row(backwards, 3, blob), std::invalid_argument);
  const TenantScan ragged[] = {scan(10, {0}, {})};
  EXPECT_THROW(codec.encode_row(ragged, 3, blob), std::invalid_argument);
  const std::vector<TenantScan> many(store::kTenantMaxScansPerRow + 1);
  EXPECT_THROW(codec.encode_row(many, 3, blob), std::invalid_argument);
  codec.encode_row(std::span(many).first(store::kTenantMaxScansPerRow), 3, blob);  // the most a row holds
  EXPECT_EQ(decode(codec, blob).size(), store::kTenantMaxScansPerRow);
}

TEST(TenantCodecTest, AFailedDecodeLeavesTheOutputAsItWas) {
  store::TenantCodec codec;
  std::vector<char> blob;
  const TenantScan row[] = {scan(0, {0}, {tc(1, 1, 1, 1)}), scan(5, {0}, {tc(2, 2, 2, 2)})};
  codec.encode_row(row, 3, blob);
  std::vector<TenantScan> out;
  codec.decode_row(blob, 100, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].t_unix_ns, 105);
  // the same scans, a byte short: decoding appends nothing
  auto pl = payload_v2({{0}, {0}, {0}});
  pl.pop_back();
  EXPECT_THROW(codec.decode_row(zframe(pl), 0, out), std::runtime_error);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].counters[0].cpu_usage_us, 2.0);
  // a scan time one past the largest: refused; the largest itself is fine
  pl = payload_v2({{}, {}});
  EXPECT_NO_THROW(codec.decode_row(zframe(pl), std::numeric_limits<std::int64_t>::max() - 5, out));
  EXPECT_EQ(out.back().t_unix_ns, std::numeric_limits<std::int64_t>::max());
  EXPECT_THROW(codec.decode_row(zframe(pl), std::numeric_limits<std::int64_t>::max() - 4, out), std::runtime_error);
  EXPECT_EQ(out.size(), 4u);
}

TEST(TenantCodecTest, IdsOutsideZeroTo2Pow24AreRefused) {
  store::TenantCodec codec;
  auto out = decode(codec, zframe(payload({(1u << 24) - 1, 0})));  // the largest id, then back to 0
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ids, (std::vector<std::uint32_t>{(1u << 24) - 1, 0}));
  EXPECT_THROW(decode(codec, zframe(payload_deltas({-1}))), std::runtime_error);
  EXPECT_THROW(decode(codec, zframe(payload_deltas({(1 << 24) - 1, (1 << 24) - 1}))), std::runtime_error);
  EXPECT_THROW(decode(codec, zframe(payload_deltas({1 << 24}))), std::runtime_error);
  EXPECT_THROW(decode(codec, zframe(payload_deltas({std::numeric_limits<std::int64_t>::min()}))), std::runtime_error);
  // a delta that would overflow prev + delta (UndefinedBehaviorSanitizer sees it if unchecked)
  EXPECT_THROW(decode(codec, zframe(payload_deltas({1, std::numeric_limits<std::int64_t>::max()}))), std::runtime_error);
  out = decode(codec, zframe(payload_v2({{5}, {(1u << 24) - 1, 0}})));
  EXPECT_EQ(out[1].ids, (std::vector<std::uint32_t>{(1u << 24) - 1, 0}));
  EXPECT_THROW(decode(codec, zframe(payload_v2({{5}, {1u << 24}}))), std::runtime_error);
}

// Issue brief: the encoded size of 200-cgroup scans, for store.h's comment. The first scan of
// each row: usage log-uniform in 1e9..1e12 µs; stall totals uniform in 0..1e9 µs, or (idle
// tenants) half of them 0 and the others log-uniform up to 1e9 µs. Then, per 5 s, a busy
// cgroup's usage grows by up to 2e7 µs (4 cores) and each stall total by up to 2e5 µs (4 %);
// an idle cgroup's do not change.
TEST(TenantCodecTest, ScansOf200CgroupsStaySmall) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  // idle_share: the share of cgroups idle (counters unchanged, half their stall totals 0)
  const auto measure = [&](double idle_share, bool batched) {
    store::TenantCodec codec;
    std::vector<char> blob;
    std::size_t bytes = 0;
    const int n_rows = 5;
    const std::size_t per_row = batched ? kTenantScansPerRow : 1;
    double encode_us = 0;
    for (int r = 0; r < n_rows; ++r) {
      std::vector<TenantScan> row(kTenantScansPerRow);
      std::vector<bool> idle(200);
      TenantScan& sc = row[0];
      sc.t_unix_ns = r * 60'000'000'000LL;
      for (std::uint32_t i = 0; i < 200; ++i) {
        idle[i] = u(rng) < idle_share;
        const auto stall = [&] {
          if (!idle[i] || idle_share == 0) return std::floor(u(rng) * 1e9);
          return u(rng) < 0.5 ? 0.0 : std::floor(std::pow(10.0, 9 * u(rng)));
        };
        sc.ids.push_back(i);
        sc.counters.push_back(tc(std::floor(std::pow(10.0, 9 + 3 * u(rng))), stall(), stall(), stall()));
      }
      for (std::size_t k = 1; k < kTenantScansPerRow; ++k) {
        row[k] = row[k - 1];
        row[k].t_unix_ns += 5'000'000'000;
        for (std::uint32_t i = 0; i < 200; ++i) {
          if (idle[i]) continue;
          auto& c = row[k].counters[i];
          c.cpu_usage_us += std::floor(u(rng) * 2e7);
          for (double* s : {&c.cpu_some_us, &c.memory_some_us, &c.io_some_us}) *s += std::floor(u(rng) * 2e5);
        }
      }
      for (std::size_t at = 0; at < row.size(); at += per_row) {
        const std::span<const TenantScan> part(row.data() + at, per_row);
        const auto t0 = std::chrono::steady_clock::now();
        if (batched)
          codec.encode_row(part, 9, blob);
        else
          codec.encode_v1(part[0], 9, blob);
        encode_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        bytes += blob.size();
        const auto back = decode(codec, blob, part[0].t_unix_ns);
        EXPECT_EQ(back.size(), part.size());
        for (std::size_t k = 0; k < std::min(part.size(), back.size()); ++k) expect_same(back[k], part[k]);
      }
    }
    const std::size_t n_scans = n_rows * kTenantScansPerRow;
    std::printf("[ size ] 200 cgroups, %3.0f %% idle, %s: %zu bytes per scan, %.0f us to encode a row\n",
                idle_share * 100, batched ? "rows of 12 (v2)" : "a row each (v1)", bytes / n_scans,
                encode_us / double(n_rows * kTenantScansPerRow / per_row));
    return bytes / n_scans;
  };
  std::size_t sizes[2][3];
  for (const bool batched : {false, true})
    for (int j = 0; j < 3; ++j) sizes[batched][j] = measure(0.5 * j, batched);
  // version 1: 22 bytes per entry uncompressed (1 + 6 + 3 × 5): 4.4 KB
  EXPECT_LT(sizes[0][0], 3'800u);
  // version 2, busy: the random increments alone are about 9.6 bytes of entropy per cgroup
  // (log2 of 2e7 and 3 × log2 of 2e5 bits): 1.9 KB a scan that no coding can go below
  EXPECT_LT(sizes[1][0], 2'700u);
  EXPECT_LT(sizes[1][1], 1'700u);
  EXPECT_LT(sizes[1][2], 300u);
  for (int j = 0; j < 3; ++j) EXPECT_LT(sizes[1][j], sizes[0][j]);
  EXPECT_LT(sizes[1][2] * 10, sizes[0][2]);  // idle cgroups: a tenth, and less
}

}  // namespace
}  // namespace reveal
