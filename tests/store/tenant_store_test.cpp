// Tenant scans in the store (tables tenant_paths, tenant_scans; src/store/tenant_codec.h): round
// trip, stores without the tables, retention, corrupt blobs skipped, time-range clipping, the
// writer's refusals and the encoded size of a 200-cgroup scan.
#include <sqlite3.h>
#include <unistd.h>
#include <zstd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "reveal/store.h"
#include "store/tenant_codec.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class TenantStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("reveal-tenant-store-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

RunMetadata meta() {
  RunMetadata m;
  m.hostname = "h1";
  m.start_unix_ns = 1'000;
  return m;
}

std::vector<ChannelInfo> channels() { return {{"proc.stat:user", "ticks", Kind::counter, Subsystem::cpu, 64, ""}}; }

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
  std::vector<std::uint8_t> p{store::kTenantBlobVersion};
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
  EXPECT_EQ(count_rows(p, "SELECT COUNT(*) FROM tenant_scans"), 4);
  const Recording r = load_recording(p);
  EXPECT_EQ(r.tenants.paths, paths);
  ASSERT_EQ(r.tenants.scans.size(), 4u);
  expect_same(r.tenants.scans[0], s0);
  expect_same(r.tenants.scans[1], s1);
  expect_same(r.tenants.scans[2], s2);
  expect_same(r.tenants.scans[3], s3);
  EXPECT_EQ(r.t_unix_ns.size(), 1u);
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

TEST_F(TenantStoreTest, AgeRetentionDeletesOldScansAndKeepsPaths) {
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
  // The last prune ran at the commit of the chunk ending at sample 199: cutoff = t(199) - 50 µs.
  const std::int64_t cutoff = 1'000 + 199 * 1'000 - 50'000;
  ASSERT_FALSE(r.tenants.scans.empty());
  EXPECT_GE(r.tenants.scans.front().t_unix_ns, cutoff);
  EXPECT_LT(r.tenants.scans.front().t_unix_ns, cutoff + 5'000);  // the newer scans stay
  EXPECT_EQ(r.tenants.scans.back().t_unix_ns, 1'000 + 195 * 1'000);
  EXPECT_EQ(r.tenants.paths, paths);  // paths are never pruned
  EXPECT_EQ(r.tenants.scans.back().ids[0], 39u);
}

TEST_F(TenantStoreTest, SizeRetentionDeletesScansOlderThanTheOldestSampleLeft) {
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
  // none older than the oldest sample left, and no newer one deleted (a scan every 10 samples)
  EXPECT_GE(r.tenants.scans.front().t_unix_ns, r.t_unix_ns.front());
  EXPECT_LT(r.tenants.scans.front().t_unix_ns, r.t_unix_ns.front() + 10);
  EXPECT_EQ(r.tenants.scans.back().t_unix_ns, 1990);
}

class CorruptScanTest : public TenantStoreTest, public ::testing::WithParamInterface<const char*> {};

// The middle of three scans gets a bad blob: the store still loads, with its samples and the
// two good scans.
TEST_P(CorruptScanTest, BadScanIsSkippedAndTheRestLoads) {
  const std::string kind = GetParam();
  const fs::path p = dir_ / "bad.db";
  std::vector<std::string> paths{"a", "b", "c"};
  {
    StoreWriter w(p, meta(), channels());
    for (int i = 0; i < 3; ++i) {
      const double row[] = {double(i)};
      w.append(1'000 + i * 1'000, row);
      w.append_tenant_scan(scan(1'000 + i * 1'000, {0, 1, 2}, {tc(i, 1, 2, 3), tc(4, 5, 6, 7), tc(8, 9, 10, 11)}), paths);
    }
    w.finish(3'000, 0);
  }
  std::vector<char> blob = blob_of(p, 2'000);
  ASSERT_FALSE(blob.empty());
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
    std::vector<std::uint8_t> pl{store::kTenantBlobVersion};
    varint(pl, std::uint64_t{1} << 40);  // 2^40 entries in a few bytes
    for (int k = 0; k < 20; ++k) pl.push_back(1);
    blob = zframe(pl);
  } else if (kind == "long_varint") {
    std::vector<std::uint8_t> pl{store::kTenantBlobVersion};
    for (int k = 0; k < 11; ++k) pl.push_back(0xff);
    pl.push_back(0);
    blob = zframe(pl);
  } else if (kind == "varint_overflow") {  // a counter of 9 × 0xff then 0x02: bits past 64
    std::vector<std::uint8_t> pl{store::kTenantBlobVersion, 1, 0};
    for (int k = 0; k < 9; ++k) pl.push_back(0xff);
    pl.push_back(0x02);
    for (int k = 0; k < 3; ++k) pl.push_back(6);
    blob = zframe(pl);
  } else if (kind == "huge_frame") {
    // A well-formed payload of 14 M entries (id 0, counters 0): 70 MB that compress to a few
    // KB. Only the 64 MiB bound on the frame's content size refuses it.
    const std::size_t n = 14'000'000;
    std::vector<std::uint8_t> pl{store::kTenantBlobVersion};
    varint(pl, n);
    pl.resize(pl.size() + n, 0);      // id deltas 0
    pl.resize(pl.size() + 4 * n, 1);  // counter codes 1 = 0 µs
    ASSERT_GT(pl.size(), store::kTenantMaxPayload);
    blob = zframe(pl);
  } else if (kind == "wrong_version") {
    auto pl = payload({0, 1, 2});
    pl[0] = 2;
    blob = zframe(pl);
  } else if (kind == "id_beyond_2_24") {
    blob = zframe(payload({0, 1u << 24}));
  } else if (kind == "id_beyond_paths") {
    blob = zframe(payload({0, 7}));
  } else if (kind == "id_without_path") {  // id 3 falls in a gap of a sparse path table
    exec_sql(p, "INSERT INTO tenant_paths VALUES(5, 'f');");
    paths = {"a", "b", "c", "", "", "f"};
    blob = zframe(payload({0, 3}));
  } else {
    FAIL() << "unknown kind " << kind;
  }
  set_blob(p, 2'000, blob);
  const Recording r = load_recording(p);
  ASSERT_EQ(r.t_unix_ns.size(), 3u);
  EXPECT_EQ(r.values(2, 0), 2.0);
  EXPECT_EQ(r.tenants.paths, paths);
  ASSERT_EQ(r.tenants.scans.size(), 2u);
  EXPECT_EQ(r.tenants.scans[0].t_unix_ns, 1'000);
  EXPECT_EQ(r.tenants.scans[1].t_unix_ns, 3'000);
  EXPECT_EQ(r.tenants.scans[1].counters[0].cpu_usage_us, 2.0);
}

INSTANTIATE_TEST_SUITE_P(Kinds, CorruptScanTest,
                         ::testing::Values("garbage", "empty", "truncated_frame", "truncated_payload",
                                           "trailing_bytes", "huge_count", "long_varint", "varint_overflow", "huge_frame",
                                           "wrong_version", "id_beyond_2_24", "id_beyond_paths",
                                           "id_without_path"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

// The crafting helpers above make blobs the loader accepts when nothing is wrong with them (so
// the corrupt cases fail for the reason they name).
TEST_F(TenantStoreTest, CraftedWellFormedBlobLoads) {
  const fs::path p = dir_ / "ok.db";
  {
    StoreWriter w(p, meta(), channels());
    w.append_tenant_scan(scan(1'000, {0}, {tc(1, 1, 1, 1)}), {"a", "b", "c"});
    w.finish(1'000, 0);
  }
  set_blob(p, 1'000, zframe(payload({2, 0, 1})));
  const Recording r = load_recording(p);
  ASSERT_EQ(r.tenants.scans.size(), 1u);
  EXPECT_EQ(r.tenants.scans[0].ids, (std::vector<std::uint32_t>{2, 0, 1}));
  EXPECT_EQ(r.tenants.scans[0].counters[2].io_some_us, 5.0);
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

TEST(TenantCodecTest, CountersRoundToWholeMicrosecondsAndUnrepresentableOnesBecomeNaN) {
  store::TenantCodec codec;
  std::vector<char> blob;
  const TenantScan in = scan(0, {0, 1}, {tc(2.4, 2.6, -0.2, 0), tc(-1, std::numeric_limits<double>::infinity(), 1e19, 9e18)});
  codec.encode(in, 3, blob);
  TenantScan out;
  codec.decode(blob, out);
  expect_same(out, scan(0, {0, 1}, {tc(2, 3, 0, 0), tc(kNaN, kNaN, kNaN, 9e18)}));
  EXPECT_THROW(codec.encode(scan(0, {1u << 24}, {tc(1, 1, 1, 1)}), 3, blob), std::invalid_argument);
}

TEST(TenantCodecTest, IdsOutsideZeroTo2Pow24AreRefused) {
  store::TenantCodec codec;
  TenantScan out;
  codec.decode(zframe(payload({(1u << 24) - 1, 0})), out);  // the largest id, then back to 0
  EXPECT_EQ(out.ids, (std::vector<std::uint32_t>{(1u << 24) - 1, 0}));
  EXPECT_THROW(codec.decode(zframe(payload_deltas({-1})), out), std::runtime_error);
  EXPECT_THROW(codec.decode(zframe(payload_deltas({(1 << 24) - 1, (1 << 24) - 1})), out), std::runtime_error);
  EXPECT_THROW(codec.decode(zframe(payload_deltas({1 << 24})), out), std::runtime_error);
  EXPECT_THROW(codec.decode(zframe(payload_deltas({std::numeric_limits<std::int64_t>::min()})), out),
               std::runtime_error);
  // a delta that would overflow prev + delta (UndefinedBehaviorSanitizer sees it if unchecked)
  EXPECT_THROW(codec.decode(zframe(payload_deltas({1, std::numeric_limits<std::int64_t>::max()})), out),
               std::runtime_error);
}

// Issue brief: the encoded size of one scan of 200 cgroups, for store.h's comment.
TEST(TenantCodecTest, ScanOf200CgroupsStaysSmall) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  const auto measure = [&](bool idle_tenants) {
    store::TenantCodec codec;
    std::vector<char> blob;
    std::size_t bytes = 0;
    const int n_scans = 20;
    double encode_us = 0;
    for (int s = 0; s < n_scans; ++s) {
      TenantScan sc;
      sc.t_unix_ns = s * 5'000'000'000LL;
      for (std::uint32_t i = 0; i < 200; ++i) {
        sc.ids.push_back(i);
        // usage log-uniform in 1e9..1e12 µs; stall totals uniform in 0..1e9 µs, or (idle
        // tenants) half of them 0 and the others log-uniform up to 1e9 µs
        const auto stall = [&] {
          if (!idle_tenants) return std::floor(u(rng) * 1e9);
          return u(rng) < 0.5 ? 0.0 : std::floor(std::pow(10.0, 9 * u(rng)));
        };
        sc.counters.push_back(tc(std::floor(std::pow(10.0, 9 + 3 * u(rng))), stall(), stall(), stall()));
      }
      const auto t0 = std::chrono::steady_clock::now();
      codec.encode(sc, 9, blob);
      encode_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      bytes += blob.size();
      TenantScan back;
      codec.decode(blob, back);
      back.t_unix_ns = sc.t_unix_ns;
      expect_same(back, sc);
    }
    std::printf("[ size ] 200 cgroups, %s: %zu bytes per scan, %.0f us to encode\n",
                idle_tenants ? "half the stall totals 0" : "stall totals uniform 0..1e9", bytes / n_scans,
                encode_us / n_scans);
    return bytes / n_scans;
  };
  // 22 bytes per entry uncompressed (1 + 6 + 3 × 5): 4.4 KB; fixed 8-byte counters would be 6.6 KB
  EXPECT_LT(measure(false), 3'800u);
  EXPECT_LT(measure(true), 2'200u);
}

}  // namespace
}  // namespace reveal
