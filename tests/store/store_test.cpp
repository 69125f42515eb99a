#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <bit>
#include <limits>
#include <random>

#include "reveal/store.h"
#include "store_test_util.h"
#include "store/head_log.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;

class StoreTest : public testing::StoreDirTest {};

RunMetadata meta() {
  RunMetadata m;
  m.hostname = "h1";
  m.kernel = "6.1";
  m.cpu_model = "cpu";
  m.cores = 2;
  m.interval_s = 0.5;
  m.start_unix_ns = 1'000;
  m.command = "python3 train.py";
  m.probes = {{"proc.stat", true, "", 2}, {"perf.hardware", false, "no PMU exposed", 0}};
  return m;
}

std::vector<ChannelInfo> channels() {
  return {{"proc.stat:user", "ticks", Kind::counter, Subsystem::cpu, 64, "user time", 4096.0},
          {"proc.meminfo:MemFree", "kB", Kind::gauge, Subsystem::memory, 64, ""}};
}

TEST_F(StoreTest, RoundTripKeepsMetadataChannelsAndValues) {
  const fs::path p = dir_ / "run.db";
  {
    StoreWriter w(p, meta(), channels());
    const double r0[] = {1.0, std::nan("")};
    const double r1[] = {2.5, 1e15};
    w.append(1'000, r0);
    w.append(2'000, r1);
    w.append_event({2'000, "nvml", "xid", 79, "GPU 1 fell off the bus"});
    w.finish(2'000, 7);
  }
  Recording r = load_recording(p);
  EXPECT_EQ(r.meta.hostname, "h1");
  EXPECT_EQ(r.meta.cores, 2);
  EXPECT_DOUBLE_EQ(r.meta.interval_s, 0.5);
  EXPECT_EQ(r.meta.exit_code, 7);
  EXPECT_EQ(r.meta.end_unix_ns, 2'000);
  EXPECT_EQ(r.meta.command, "python3 train.py");
  ASSERT_EQ(r.meta.probes.size(), 2u);
  EXPECT_FALSE(r.meta.probes[1].available);
  EXPECT_EQ(r.meta.probes[1].reason, "no PMU exposed");
  ASSERT_EQ(r.channels.size(), 2u);
  EXPECT_EQ(r.channels[0].kind, Kind::counter);
  EXPECT_DOUBLE_EQ(r.channels[0].wrap_range, 4096.0);
  EXPECT_EQ(r.channels[1].subsystem, Subsystem::memory);
  ASSERT_EQ(r.t_unix_ns.size(), 2u);
  EXPECT_TRUE(std::isnan(r.values(0, 1)));
  EXPECT_DOUBLE_EQ(r.values(1, 1), 1e15);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, "xid");
  EXPECT_DOUBLE_EQ(r.events[0].value, 79);
  EXPECT_EQ(r.events[0].detail, "GPU 1 fell off the bus");
}

TEST_F(StoreTest, UnfinishedStoreStillOpens) {
  const fs::path p = dir_ / "run.db";
  auto* w = new StoreWriter(p, meta(), channels());
  const double r0[] = {1.0, 2.0};
  w->append(1'000, r0);
  // Simulate a crash: read while the writer is still open, without finish().
  Recording r = load_recording(p);
  EXPECT_EQ(r.t_unix_ns.size(), 1u);
  EXPECT_FALSE(r.meta.complete);
  EXPECT_EQ(r.meta.end_unix_ns, 1'000);  // from the last sample
  delete w;
}

TEST_F(StoreTest, BadFilesGiveOneLineErrors) {
  auto expect_error = [](const fs::path& p, const std::string& needle) {
    try {
      load_recording(p);
      ADD_FAILURE() << "no error for " << p;
    } catch (const StoreError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  };
  expect_error(dir_ / "missing.db", "no such file");
  std::ofstream(dir_ / "empty.db").close();
  expect_error(dir_ / "empty.db", "empty");
  std::ofstream(dir_ / "text.db") << "hello, this is not a database at all\n";
  expect_error(dir_ / "text.db", "not a Reveal store");
  // Truncated: a valid store cut in half.
  const fs::path good = dir_ / "good.db";
  {
    StoreWriter w(good, meta(), channels());
    const double r0[] = {1.0, 2.0};
    for (int i = 0; i < 200; ++i) w.append(i, r0);
    w.finish(200, 0);
  }
  fs::copy_file(good, dir_ / "trunc.db");
  fs::resize_file(dir_ / "trunc.db", fs::file_size(good) / 2);
  EXPECT_THROW(load_recording(dir_ / "trunc.db"), StoreError);
  // Corrupt: garbage over the middle pages.
  fs::copy_file(good, dir_ / "corrupt.db");
  {
    std::fstream f(dir_ / "corrupt.db", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(1024);
    std::string junk(static_cast<std::size_t>(fs::file_size(good)) - 2048, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  EXPECT_THROW(load_recording(dir_ / "corrupt.db"), StoreError);
}

// n samples × 3 channels with gaps, infinities, −0, NaN payloads and slowly moving values,
// stamped 1 s apart from t = 1e18 ns.
struct Series {
  std::vector<std::int64_t> t;
  std::vector<std::vector<double>> rows;
};
Series series(std::size_t n) {
  Series s;
  std::mt19937_64 rng(42);
  for (std::size_t i = 0; i < n; ++i) {
    s.t.push_back(1'000'000'000'000'000'000 + std::int64_t(i) * 1'000'000'000 + std::int64_t(i % 3));
    double a = 1e9 + double(i) * 4096.0;           // a counter
    double b = (i % 7 == 3) ? std::nan("") : std::sin(double(i)) * 1e-3;  // gauge with gaps
    double c = std::bit_cast<double>(rng());       // any bit pattern at all
    if (i == 5) b = -0.0;
    if (i == 6) a = std::numeric_limits<double>::infinity();
    s.rows.push_back({a, b, c});
  }
  return s;
}
std::vector<ChannelInfo> three_channels() {
  auto c = channels();
  c.push_back({"nvml:power_usage.gpu0", "W", Kind::gauge, Subsystem::power_thermal, 64, ""});
  return c;
}
void expect_bits(const Recording& r, const Series& s, std::size_t first, std::size_t n,
                 const std::vector<std::size_t>& cols = {0, 1, 2}) {
  ASSERT_EQ(r.t_unix_ns.size(), n);
  ASSERT_EQ(r.values.cols(), cols.size());
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(r.t_unix_ns[i], s.t[first + i]) << i;
    for (std::size_t k = 0; k < cols.size(); ++k)
      EXPECT_EQ(std::bit_cast<std::uint64_t>(r.values(i, k)),
                std::bit_cast<std::uint64_t>(s.rows[first + i][cols[k]]))
          << "sample " << first + i << " channel " << cols[k];
  }
}
std::int64_t count_chunks(const fs::path& p) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM chunks", -1, &st, nullptr);
  const std::int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

TEST_F(StoreTest, ChunksRoundTripBitForBitAcrossChunkBoundaries) {
  const fs::path p = dir_ / "run.db";
  const Series s = series(23);
  {
    StoreWriter w(p, meta(), three_channels(), 5);  // 4 full chunks + 3 in the last
    for (std::size_t i = 0; i < s.t.size(); ++i) w.append(s.t[i], s.rows[i]);
    EXPECT_EQ(count_chunks(p), 4);
    w.finish(s.t.back(), 0);
  }
  EXPECT_EQ(count_chunks(p), 5);
  EXPECT_FALSE(fs::exists(p.string() + "-head")) << "finish() removes the head log";
  const Recording r = load_recording(p);
  EXPECT_TRUE(r.meta.complete);
  expect_bits(r, s, 0, 23);
}

TEST_F(StoreTest, KilledWriterLosesNothingAppended) {
  const fs::path p = dir_ / "run.db";
  const Series s = series(13);
  {
    StoreWriter w(p, meta(), three_channels(), 4);
    for (std::size_t i = 0; i < s.t.size(); ++i) w.append(s.t[i], s.rows[i]);
    // Destroyed without finish(), as after an error; a kill -9 leaves the same files behind.
  }
  ASSERT_TRUE(fs::exists(p.string() + "-head"));
  EXPECT_EQ(count_chunks(p), 3);  // 12 samples committed, the 13th only in the head log
  const Recording r = load_recording(p);
  EXPECT_FALSE(r.meta.complete);
  EXPECT_EQ(r.meta.end_unix_ns, s.t.back());
  expect_bits(r, s, 0, 13);
}

TEST_F(StoreTest, HeadLogDamageKeepsEverySampleBeforeIt) {
  const fs::path p = dir_ / "run.db";
  const Series s = series(10);
  {
    StoreWriter w(p, meta(), three_channels(), 100);  // everything stays in the head log
    for (std::size_t i = 0; i < s.t.size(); ++i) w.append(s.t[i], s.rows[i]);
  }
  const fs::path head = p.string() + "-head";
  const auto size = fs::file_size(head);
  fs::resize_file(head, size - 3);  // a torn last record
  expect_bits(load_recording(p), s, 0, 9);
  {  // one flipped byte in the middle: the log ends at the damaged record
    std::fstream f(head, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size / 2));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x40);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.write(&c, 1);
  }
  const Recording r = load_recording(p);
  EXPECT_LT(r.t_unix_ns.size(), 9u);
  expect_bits(r, s, 0, r.t_unix_ns.size());
}

TEST_F(StoreTest, CrashBetweenChunkCommitAndHeadClearCountsSamplesOnce) {
  const fs::path p = dir_ / "run.db";
  const Series s = series(6);
  {
    StoreWriter w(p, meta(), three_channels(), 4);
    for (std::size_t i = 0; i < 6; ++i) w.append(s.t[i], s.rows[i]);
  }
  // The head log as it would be had the recorder died right after committing samples 0..3 but
  // before emptying the log: it still holds 0..5.
  store::HeadLogWriter head;
  head.open(p.string() + "-head", 3);
  for (std::size_t i = 0; i < 6; ++i) head.append(i, s.t[i], s.rows[i]);
  expect_bits(load_recording(p), s, 0, 6);
}

TEST_F(StoreTest, ChunkSpanningTooLongIsCommittedEarly) {
  const fs::path p = dir_ / "run.db";
  StoreWriter w(p, meta(), channels(), 1000);
  const double r0[] = {1.0, 2.0};
  w.append(0, r0);
  w.append(300'000'000'000, r0);
  EXPECT_EQ(count_chunks(p), 0);
  w.append(600'000'000'000, r0);  // 10 minutes after the chunk's first sample
  EXPECT_EQ(count_chunks(p), 1);
}

TEST_F(StoreTest, LoadsOnlyTheChannelsAndTimeRangeAsked) {
  const fs::path p = dir_ / "run.db";
  const Series s = series(40);
  {
    StoreWriter w(p, meta(), three_channels(), 8);
    for (std::size_t i = 0; i < 37; ++i) w.append(s.t[i], s.rows[i]);
    // 3 samples left in the head log (unfinished): ranges reach into it too.
    for (std::size_t i = 37; i < 40; ++i) w.append(s.t[i], s.rows[i]);
  }
  LoadOptions o;
  o.keep_channel = [](const ChannelInfo& c) { return c.name != "proc.meminfo:MemFree"; };
  o.start_unix_ns = s.t[6];
  o.end_unix_ns = s.t[38];
  const Recording r = load_recording(p, o);
  ASSERT_EQ(r.channels.size(), 2u);
  EXPECT_EQ(r.channels[0].name, "proc.stat:user");
  EXPECT_EQ(r.channels[1].name, "nvml:power_usage.gpu0");
  expect_bits(r, s, 6, 33, {0, 2});
  EXPECT_EQ(r.events.size(), 0u);
  EXPECT_EQ(r.meta.hostname, "h1");
  o.keep_channel = [](const ChannelInfo&) { return false; };
  const Recording none = load_recording(p, o);
  EXPECT_EQ(none.t_unix_ns.size(), 33u);
  EXPECT_EQ(none.values.rows(), 33u);
  EXPECT_EQ(none.values.cols(), 0u);
}

TEST_F(StoreTest, SchemaVersion1StoresStillLoad) {
  // Recorded on an H200 host with the schema-v1 writer (tests/fixtures/recordings/README.md).
  const Recording r = load_recording(fs::path(REVEAL_FIXTURES_DIR) / "recordings/h200-clean.db");
  EXPECT_GT(r.t_unix_ns.size(), 100u);
  EXPECT_EQ(r.values.rows(), r.t_unix_ns.size());
  EXPECT_EQ(r.values.cols(), r.channels.size());
  LoadOptions o;
  o.keep_channel = [](const ChannelInfo& c) { return c.name.starts_with("nvml:"); };
  const Recording gpu = load_recording(fs::path(REVEAL_FIXTURES_DIR) / "recordings/h200-clean.db", o);
  EXPECT_GT(gpu.channels.size(), 10u);
  EXPECT_EQ(gpu.t_unix_ns.size(), r.t_unix_ns.size());
}

TEST_F(StoreTest, NewerSchemaVersionIsRefusedWithAClearMessage) {
  const fs::path p = dir_ / "run.db";
  {
    StoreWriter w(p, meta(), channels());
    w.finish(1'000, 0);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "UPDATE meta SET value='99' WHERE key='schema_version'", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  try {
    load_recording(p);
    ADD_FAILURE() << "a schema-99 store loaded";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("newer than this reveal"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace reveal

namespace reveal {
namespace {

class RollingStoreTest : public StoreTest {};

TEST_F(RollingStoreTest, AgeBoundKeepsOnlyTheNewestSamplesAndEvents) {
  const fs::path p = dir_ / "roll.db";
  StoreWriter w(p, meta(), channels(), /*chunk_samples=*/10);
  w.set_retention(/*max_age_ns=*/50'000, 0);  // 50 µs at 1 µs per sample = 50 samples
  for (int i = 0; i < 200; ++i) {
    const double row[] = {double(i), double(1000 - i)};
    w.append(1'000 + i * 1'000, row);
    if (i % 20 == 0) w.append_event({1'000 + i * 1'000, "test", "tick", double(i), ""});
  }
  w.finish(1'000 + 199 * 1'000, 0);
  const Recording r = load_recording(p);
  ASSERT_FALSE(r.t_unix_ns.empty());
  // Chunks end at samples 9, 19, ...: the newest is 199; chunks ending before 149 are gone.
  EXPECT_EQ(r.t_unix_ns.front(), 1'000 + 140 * 1'000);
  EXPECT_EQ(r.t_unix_ns.back(), 1'000 + 199 * 1'000);
  EXPECT_EQ(r.values(0, 0), 140.0);
  ASSERT_FALSE(r.events.empty());
  EXPECT_GE(r.events.front().t_unix_ns, 1'000 + 149 * 1'000);
}

TEST_F(RollingStoreTest, SizeBoundStopsTheFileGrowing) {
  const fs::path p = dir_ / "size.db";
  std::vector<ChannelInfo> chans;
  for (int c = 0; c < 64; ++c) chans.push_back({"t:noise." + std::to_string(c), "count", Kind::gauge, Subsystem::system});
  StoreWriter w(p, meta(), chans, 32);
  const std::uint64_t bound = 64 * 1024;
  w.set_retention(0, bound);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> row(chans.size());
  std::uintmax_t size_mid = 0;
  for (int i = 0; i < 4000; ++i) {
    for (double& v : row) v = u(rng);  // incompressible: ~0.5 KB per sample
    w.append(i, row);
    if (i == 2000) size_mid = fs::file_size(p) + (fs::exists(fs::path(p.string() + "-wal")) ? fs::file_size(fs::path(p.string() + "-wal")) : 0);
    EXPECT_LE(w.committed_sample_bytes(), bound);
  }
  w.finish(3999, 0);
  const std::uintmax_t size_end = fs::file_size(p);
  EXPECT_LT(size_end, 3 * bound);
  EXPECT_LE(size_end, size_mid + bound);
  const Recording r = load_recording(p);
  ASSERT_FALSE(r.t_unix_ns.empty());
  EXPECT_EQ(r.t_unix_ns.back(), 3999);
  EXPECT_GT(r.t_unix_ns.front(), 3000);  // only the newest ~100 samples fit in 64 KiB
}

}  // namespace
}  // namespace reveal
