// StoreReader and StoreFeed (issue #19): a store read a chunk at a time gives exactly what
// load_recording() gives — blocks no longer than the writer's chunk, then the head log of a
// writer that was killed; the channels and time range asked; tenant scans row by row — and
// `reveal detect --streaming` over a StoreFeed reports what it reports over the loaded store.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "reveal/recording_feed.h"
#include "reveal/store.h"
#include "reveal/store_reader.h"
#include "reveal/streaming.h"
#include "store_test_util.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;

class StoreReaderTest : public testing::StoreDirTest {};

constexpr std::int64_t kT0 = std::int64_t(1'700'000'000) * 1'000'000'000;
constexpr std::int64_t kSec = 1'000'000'000;

std::vector<ChannelInfo> channels() {
  return {{"proc.stat:user", "ticks", Kind::counter, Subsystem::cpu, 64, ""},
          {"proc.meminfo:MemFree", "bytes", Kind::gauge, Subsystem::memory, 0, ""},
          {"proc.pressure:cpu_some_total", "us", Kind::counter, Subsystem::cpu, 64, ""}};
}

RunMetadata meta() {
  RunMetadata m;
  m.hostname = "h1";
  m.cores = 2;
  m.interval_s = 1.0;
  m.start_unix_ns = kT0;
  return m;
}

// n samples at 1 Hz; a NaN now and then.
void write(const fs::path& p, std::size_t n, std::size_t chunk, bool finish) {
  StoreWriter w(p, meta(), channels(), chunk);
  std::mt19937_64 rng(3);
  double user = 0, stall = 0;
  for (std::size_t i = 0; i < n; ++i) {
    user += 100 + double(rng() % 20);
    stall += 1000 + double(rng() % 100);
    const double free = i % 17 == 5 ? std::nan("") : 1e9 + double(rng() % 1000);
    const double row[] = {user, free, stall};
    w.append(kT0 + std::int64_t(i) * kSec, row);
  }
  if (finish) w.finish(kT0 + std::int64_t(n - 1) * kSec, 0);
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Every block of `reader` in range, concatenated, is `want`; no block exceeds `max_rows`.
void expect_blocks(StoreReader& reader, const Recording& want, std::size_t max_rows) {
  SampleBlock b;
  std::size_t at = 0, blocks = 0;
  while (reader.next_samples(b)) {
    ++blocks;
    ASSERT_FALSE(b.t_unix_ns.empty()) << "an empty block with true";
    EXPECT_LE(b.t_unix_ns.size(), max_rows);
    ASSERT_EQ(b.values.rows(), b.t_unix_ns.size());
    ASSERT_EQ(b.values.cols(), want.channels.size());
    for (std::size_t i = 0; i < b.t_unix_ns.size(); ++i, ++at) {
      ASSERT_LT(at, want.t_unix_ns.size());
      EXPECT_EQ(b.t_unix_ns[i], want.t_unix_ns[at]);
      for (std::size_t c = 0; c < want.channels.size(); ++c)
        EXPECT_TRUE(same(b.values(i, c), want.values(at, c))) << "sample " << at << " channel " << c;
    }
  }
  EXPECT_EQ(at, want.t_unix_ns.size());
  EXPECT_TRUE(b.t_unix_ns.empty());
  EXPECT_GT(blocks, 1u);
}

TEST_F(StoreReaderTest, ReadsTheChunksThenAKilledWritersHeadLogAsLoadRecordingDoes) {
  const fs::path p = dir_ / "run.db";
  write(p, 100, 16, false);  // 6 chunks committed, 4 samples only in the head log
  ASSERT_TRUE(fs::exists(p.string() + "-head"));
  const Recording whole = load_recording(p);
  ASSERT_EQ(whole.t_unix_ns.size(), 100u);
  StoreReader reader(p);
  EXPECT_FALSE(reader.meta().complete);
  EXPECT_EQ(reader.meta().end_unix_ns, 0);
  EXPECT_EQ(reader.store_channels(), 3u);
  EXPECT_EQ(reader.claimed_samples(kT0, kT0 + 1000 * kSec), 96u);
  reader.begin_samples();
  expect_blocks(reader, whole, 16);
  // Again from the start; and a second reader over the same file at the same time.
  reader.begin_samples();
  StoreReader other(p);
  other.begin_samples();
  SampleBlock a, b;
  ASSERT_TRUE(reader.next_samples(a));
  ASSERT_TRUE(other.next_samples(b));
  EXPECT_EQ(a.t_unix_ns, b.t_unix_ns);
  EXPECT_EQ(a.t_unix_ns.front(), kT0);
}

TEST_F(StoreReaderTest, KeepsTheChannelsAndTheTimeRangeAsked) {
  const fs::path p = dir_ / "run.db";
  write(p, 100, 16, true);
  const auto keep = [](const ChannelInfo& c) { return c.kind == Kind::counter; };
  LoadOptions lo;
  lo.keep_channel = keep;
  lo.start_unix_ns = kT0 + 20 * kSec;
  lo.end_unix_ns = kT0 + 70 * kSec;
  const Recording want = load_recording(p, lo);
  ASSERT_EQ(want.t_unix_ns.size(), 51u);
  ASSERT_EQ(want.channels.size(), 2u);
  StoreReader reader(p, keep);
  ASSERT_EQ(reader.channels().size(), 2u);
  EXPECT_EQ(reader.channels()[1].name, "proc.pressure:cpu_some_total");
  reader.begin_samples(lo.start_unix_ns, lo.end_unix_ns);
  expect_blocks(reader, want, 16);
}

TEST_F(StoreReaderTest, ReadsTenantScansRowByRowInRange) {
  const fs::path p = dir_ / "run.db";
  {
    StoreWriter w(p, meta(), channels(), 16);
    const std::vector<std::string> paths = {"a.service", "b.scope"};
    for (int k = 0; k < 30; ++k) {  // 30 scans: rows of 12, 12 and 6
      TenantScan s{kT0 + k * 5 * kSec, {0, 1}, {{1e6 * k, 0, 0, 0}, {2e6 * k, 1e3 * k, 0, 0}}};
      w.append_tenant_scan(s, paths);
      const double row[] = {double(k), 1.0, double(k)};
      w.append(kT0 + k * 5 * kSec, row);
    }
    w.finish(kT0 + 29 * 5 * kSec, 0);
  }
  StoreReader reader(p);
  ASSERT_TRUE(reader.has_tenant_scans());
  ASSERT_EQ(reader.tenant_paths().size(), 2u);
  EXPECT_EQ(reader.tenant_paths()[1], "b.scope");
  reader.begin_tenant_scans(kT0 + 20 * kSec, kT0 + 100 * kSec);  // scans 4..20
  std::vector<TenantScan> row;
  std::vector<std::size_t> sizes;
  std::int64_t last = 0;
  while (reader.next_tenant_scans(row)) {
    sizes.push_back(row.size());
    for (const auto& s : row) {
      EXPECT_GT(s.t_unix_ns, last);
      last = s.t_unix_ns;
    }
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{8, 9}));
  EXPECT_EQ(last, kT0 + 100 * kSec);

  // StoreFeed: scans up to a time, each once, in order.
  StoreFeed feed(p);
  EXPECT_TRUE(feed.has_tenant_scans());
  std::vector<TenantScan> window;
  feed.tenant_scans_until(kT0 + 7 * kSec, window);
  EXPECT_EQ(window.size(), 2u);
  feed.tenant_scans_until(kT0 + 7 * kSec, window);
  EXPECT_EQ(window.size(), 2u);
  feed.tenant_scans_until(kT0 + 1000 * kSec, window);
  ASSERT_EQ(window.size(), 30u);
  for (std::size_t k = 0; k < window.size(); ++k) EXPECT_EQ(window[k].t_unix_ns, kT0 + std::int64_t(k) * 5 * kSec);
}

TEST_F(StoreReaderTest, AStoreWithoutTenantTablesHasNoScans) {
  const fs::path p = dir_ / "run.db";
  write(p, 20, 8, true);
  StoreReader reader(p);
  EXPECT_FALSE(reader.has_tenant_scans());
  EXPECT_TRUE(reader.tenant_paths().empty());
  reader.begin_tenant_scans();
  std::vector<TenantScan> row;
  EXPECT_FALSE(reader.next_tenant_scans(row));
}

TEST_F(StoreReaderTest, BadFilesGiveOneLineStoreErrors) {
  EXPECT_THROW(StoreReader(dir_ / "missing.db"), StoreError);
  const fs::path junk = dir_ / "junk.db";
  { std::ofstream(junk) << "not a store at all, just some text to fill sixteen bytes"; }
  try {
    StoreReader r(junk);
    FAIL() << "no error";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("junk.db"), std::string::npos);
  }
}

TEST(SpreadSlices, WholeWhenItFitsElseEvenlySpreadRuns) {
  using V = std::vector<std::pair<std::size_t, std::size_t>>;
  EXPECT_EQ(spread_slices(100, 100, 10), (V{{0, 100}}));
  EXPECT_EQ(spread_slices(0, 5, 10), (V{{0, 0}}));
  // 3 runs of 10 centred at 1/6, 3/6, 5/6 of 600.
  EXPECT_EQ(spread_slices(600, 30, 10), (V{{95, 10}, {295, 10}, {495, 10}}));
  // A budget under one run: one run, in the middle; runs never leave the recording.
  EXPECT_EQ(spread_slices(600, 4, 10), (V{{295, 10}}));
  for (const auto& [first, count] : spread_slices(101, 100, 60)) EXPECT_LE(first + count, 101u);
  // From another phase: centred at (j + 0.1)/3 and (0 + 0.9)/1; clamped inside; a phase out of
  // [0, 1) is 1/2.
  EXPECT_EQ(spread_slices(600, 30, 10, 0.1), (V{{15, 10}, {215, 10}, {415, 10}}));
  EXPECT_EQ(spread_slices(600, 10, 10, 0.9), (V{{535, 10}}));
  EXPECT_EQ(spread_slices(600, 10, 100, 0.99), (V{{500, 100}}));
  EXPECT_EQ(spread_slices(600, 30, 10, 1.0), spread_slices(600, 30, 10));
  EXPECT_EQ(spread_slices(600, 30, 10, std::nan("")), spread_slices(600, 30, 10));
}

// A long store read as slices (reveal train, detect --baseline): each slice is those rows of
// the store exactly; a short store comes whole.
TEST_F(StoreReaderTest, ALongStoreIsReadAsEvenlySpreadSlices) {
  const fs::path p = dir_ / "run.db";
  write(p, 300, 16, true);
  const Recording whole = load_recording(p);
  const auto slices = load_recording_slices(p, 40, 20);
  const auto rows = spread_slices(300, 40, 20);
  ASSERT_EQ(slices.size(), 2u);
  ASSERT_EQ(rows.size(), 2u);
  for (std::size_t s = 0; s < 2; ++s) {
    const Recording& r = slices[s];
    ASSERT_EQ(r.t_unix_ns.size(), 20u);
    EXPECT_EQ(r.channels.size(), 3u);
    EXPECT_EQ(r.meta.hostname, "h1");
    EXPECT_EQ(r.meta.start_unix_ns, whole.t_unix_ns[rows[s].first]);
    EXPECT_EQ(r.meta.end_unix_ns, whole.t_unix_ns[rows[s].first + 19]);
    for (std::size_t i = 0; i < 20; ++i) {
      EXPECT_EQ(r.t_unix_ns[i], whole.t_unix_ns[rows[s].first + i]);
      for (std::size_t c = 0; c < 3; ++c) EXPECT_TRUE(same(r.values(i, c), whole.values(rows[s].first + i, c)));
    }
  }
  const auto all = load_recording_slices(p, 300, 20);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].t_unix_ns, whole.t_unix_ns);
}

}  // namespace
}  // namespace reveal
