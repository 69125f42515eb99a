// StoreWriter with StoreOpen::append (reveal/store.h): a store is continued across writers —
// after a writer was killed (its head log's samples recovered), with channels added, removed
// and reordered, with tenant paths kept by name — and refused, untouched, when it cannot be.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "reveal/recorder.h"
#include "reveal/store.h"
#include "reveal/store_reader.h"
#include "store_test_util.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;

class StoreContinueTest : public testing::StoreDirTest {};

RunMetadata meta(std::int64_t start = 1'000) {
  RunMetadata m;
  m.hostname = "h1";
  m.interval_s = 1.0;
  m.start_unix_ns = start;
  m.command = "reveal agent";
  return m;
}

ChannelInfo counter(const std::string& name) { return {name, "ticks", Kind::counter, Subsystem::cpu, 64, ""}; }
ChannelInfo gauge(const std::string& name) { return {name, "kB", Kind::gauge, Subsystem::memory, 64, ""}; }

std::string meta_value(const fs::path& p, const std::string& key) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, nullptr);
  sqlite3_bind_text(st, 1, key.c_str(), -1, SQLITE_TRANSIENT);
  std::string v = sqlite3_step(st) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0)) : "";
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

TEST_F(StoreContinueTest, AKilledWritersSamplesAreAllKeptAndTheStoreGoesOn) {
  const fs::path p = dir_ / "agent.db";
  const std::vector<ChannelInfo> ch = {counter("a"), gauge("b")};
  // A writer killed with SIGKILL after 10 samples, chunks of 4: 8 committed, 2 in the head log.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    StoreWriter w(p, meta(), ch, 4);
    for (int i = 0; i < 10; ++i) {
      const double row[] = {double(i), 100.0 + i};
      w.append(1'000 + i, row);
    }
    ::raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ASSERT_TRUE(fs::exists(p.string() + "-head"));

  EXPECT_EQ(store_continuation_blocker(p, meta(5'000), ch), "");
  {
    StoreWriter w(p, meta(5'000), ch, StoreOpen::append, 4);
    const StoreContinuation& c = w.continuation();
    EXPECT_TRUE(c.continued);
    EXPECT_EQ(c.samples_before, 10u);
    EXPECT_EQ(c.recovered, 2u);
    EXPECT_EQ(c.last_t_unix_ns, 1'009);
    EXPECT_EQ(c.channels_added, 0u);
    EXPECT_EQ(c.channels_absent, 0u);
    for (int i = 10; i < 13; ++i) {
      const double row[] = {double(i), 100.0 + i};
      w.append(5'000 + i, row);
    }
    EXPECT_EQ(w.samples_written(), 3u);
    w.finish(5'012, 0);
  }
  const Recording r = load_recording(p);
  ASSERT_EQ(r.t_unix_ns.size(), 13u);
  for (std::size_t i = 0; i < 13; ++i) {
    EXPECT_EQ(r.values(i, 0), double(i)) << i;
    EXPECT_EQ(r.values(i, 1), 100.0 + double(i)) << i;
  }
  EXPECT_EQ(r.t_unix_ns[9], 1'009);
  EXPECT_EQ(r.t_unix_ns[10], 5'010);
  EXPECT_EQ(r.meta.start_unix_ns, 1'000);  // the store's first start
  EXPECT_EQ(r.meta.end_unix_ns, 5'012);
  EXPECT_EQ(meta_value(p, "schema_version"), "2");  // no channel added: still a v2 store
  EXPECT_FALSE(fs::exists(p.string() + "-head"));
}

TEST_F(StoreContinueTest, ChannelsAddedRemovedAndReorderedKeepTheirColumns) {
  const fs::path p = dir_ / "agent.db";
  {
    StoreWriter w(p, meta(), {counter("a"), gauge("b")}, 2);
    for (int i = 0; i < 3; ++i) {
      const double row[] = {double(i), 10.0 + i};
      w.append(1'000 + i, row);
    }
    w.finish(1'002, 0);
  }
  {
    // "b" is gone, "c" is new, and the writer's order differs from the store's.
    const std::vector<ChannelInfo> ch = {gauge("c"), counter("a")};
    StoreWriter w(p, meta(2'000), ch, StoreOpen::append, 2);
    EXPECT_EQ(w.continuation().channels_added, 1u);
    EXPECT_EQ(w.continuation().channels_absent, 1u);
    for (int i = 3; i < 6; ++i) {
      const double row[] = {20.0 + i, double(i)};
      w.append(2'000 + i, row);
    }
    w.finish(2'005, 0);
  }
  EXPECT_EQ(meta_value(p, "schema_version"), "3");
  const Recording r = load_recording(p);
  ASSERT_EQ(r.channels.size(), 3u);
  EXPECT_EQ(r.channels[0].name, "a");
  EXPECT_EQ(r.channels[1].name, "b");
  EXPECT_EQ(r.channels[2].name, "c");
  EXPECT_EQ(r.channels[2].kind, Kind::gauge);
  ASSERT_EQ(r.t_unix_ns.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(r.values(i, 0), double(i)) << i;
    if (i < 3) {
      EXPECT_EQ(r.values(i, 1), 10.0 + double(i)) << i;
      EXPECT_TRUE(std::isnan(r.values(i, 2))) << i;  // "c" did not exist yet
    } else {
      EXPECT_TRUE(std::isnan(r.values(i, 1))) << i;  // "b" is no longer written
      EXPECT_EQ(r.values(i, 2), 20.0 + double(i)) << i;
    }
  }
  // Reading a subset of channels decodes the narrower chunks too.
  LoadOptions only_c;
  only_c.keep_channel = [](const ChannelInfo& c) { return c.name == "c"; };
  const Recording rc = load_recording(p, only_c);
  ASSERT_EQ(rc.channels.size(), 1u);
  EXPECT_TRUE(std::isnan(rc.values(0, 0)));
  EXPECT_EQ(rc.values(5, 0), 25.0);
}

// A counter a store made 64 bits wide and the probe now declares 32 (diskstats' times):
// continued, and the store declares its width from then on.
TEST_F(StoreContinueTest, ACounterNowDeclared32BitsTakesThatWidthInTheStore) {
  const fs::path p = dir_ / "agent.db";
  {
    StoreWriter w(p, meta(), {counter("a"), gauge("b")});
    const double row[] = {1.0, 2.0};
    w.append(1'000, row);
    w.finish(1'000, 0);
  }
  std::vector<ChannelInfo> narrowed = {counter("a"), gauge("b")};
  narrowed[0].counter_bits = 32;
  ASSERT_EQ(store_continuation_blocker(p, meta(2'000), narrowed), "");
  {
    StoreWriter w(p, meta(2'000), narrowed, StoreOpen::append);
    EXPECT_TRUE(w.continuation().continued);
    const double row[] = {3.0, 4.0};
    w.append(2'000, row);
    w.finish(2'000, 0);
  }
  StoreReader r(p);
  ASSERT_EQ(r.channels().size(), 2u);
  EXPECT_EQ(r.channels()[0].counter_bits, 32);
  EXPECT_EQ(r.channels()[1].counter_bits, 64);
}

TEST_F(StoreContinueTest, AStoreThatCannotBeContinuedIsRefusedUntouched) {
  const fs::path p = dir_ / "agent.db";
  const std::vector<ChannelInfo> ch = {counter("a"), gauge("b")};
  {
    StoreWriter w(p, meta(), ch);
    const double row[] = {1.0, 2.0};
    w.append(1'000, row);
    w.finish(1'000, 0);
  }
  RunMetadata other_host = meta(2'000);
  other_host.hostname = "h2";
  RunMetadata other_interval = meta(2'000);
  other_interval.interval_s = 0.1;
  std::vector<ChannelInfo> rekinded = {gauge("a"), gauge("b")};
  std::vector<ChannelInfo> many;
  for (int i = 0; i < 300; ++i) many.push_back(gauge("n" + std::to_string(i)));  // 302 channels: within 2·300 + 256
  std::vector<ChannelInfo> few = {gauge("x")};  // 3 channels: within 2·1 + 256
  EXPECT_NE(store_continuation_blocker(p, other_host, ch).find("host 'h1'"), std::string::npos);
  EXPECT_NE(store_continuation_blocker(p, other_interval, ch).find("every 1 s"), std::string::npos);
  EXPECT_NE(store_continuation_blocker(p, meta(2'000), rekinded).find("channel a changed"), std::string::npos);
  // A counter now declared 32 bits (diskstats' times, made 64 by older agents): continued.
  std::vector<ChannelInfo> narrowed = ch;
  narrowed[0].counter_bits = 32;
  EXPECT_EQ(store_continuation_blocker(p, meta(2'000), narrowed), "");
  std::vector<ChannelInfo> other_width = narrowed;
  other_width[0].counter_bits = 16;
  EXPECT_NE(store_continuation_blocker(p, meta(2'000), other_width).find("channel a changed"), std::string::npos);
  EXPECT_EQ(store_continuation_blocker(p, meta(2'000), many), "");
  EXPECT_EQ(store_continuation_blocker(p, meta(2'000), few), "");
  EXPECT_EQ(store_continuation_blocker(dir_ / "absent.db", meta(2'000), ch), "");
  std::ofstream(dir_ / "text.db") << "not a store\n";
  EXPECT_NE(store_continuation_blocker(dir_ / "text.db", meta(2'000), ch), "");
  try {
    StoreWriter w(p, other_host, ch, StoreOpen::append);
    ADD_FAILURE() << "continued a store of another host";
  } catch (const StoreError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("cannot be continued"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  const Recording r = load_recording(p);
  EXPECT_EQ(r.t_unix_ns.size(), 1u);
  EXPECT_EQ(r.meta.hostname, "h1");
  EXPECT_EQ(r.meta.end_unix_ns, 1'000);
}

TEST_F(StoreContinueTest, TheChannelTableGrowsOnlyToItsBound) {
  const fs::path p = dir_ / "agent.db";
  std::vector<ChannelInfo> first;
  for (int i = 0; i < 300; ++i) first.push_back(gauge("old" + std::to_string(i)));
  {
    StoreWriter w(p, meta(), first);
    w.finish(1'000, 0);
  }
  // 300 stored + 10 new = 310 > 2·10 + 256 = 276.
  std::vector<ChannelInfo> next;
  for (int i = 0; i < 10; ++i) next.push_back(gauge("new" + std::to_string(i)));
  EXPECT_EQ(max_continued_channels(10), 276u);
  EXPECT_NE(store_continuation_blocker(p, meta(2'000), next).find("would grow to 310 channels"), std::string::npos);
}

TEST_F(StoreContinueTest, AStoreBeingWrittenIsNotContinuedByASecondWriter) {
  const fs::path p = dir_ / "agent.db";
  const std::vector<ChannelInfo> ch = {counter("a")};
  StoreWriter first(p, meta(), ch);
  const double row[] = {1.0};
  first.append(1'000, row);
  EXPECT_NE(store_continuation_blocker(p, meta(2'000), ch).find("another reveal process"), std::string::npos);
  EXPECT_THROW(StoreWriter(p, meta(2'000), ch, StoreOpen::append), StoreError);
}

TEST_F(StoreContinueTest, TenantPathsKeepTheirIdsAcrossWriters) {
  const fs::path p = dir_ / "agent.db";
  const std::vector<ChannelInfo> ch = {counter("a")};
  const auto scan = [](std::int64_t t, std::vector<std::uint32_t> ids) {
    TenantScan s;
    s.t_unix_ns = t;
    s.ids = std::move(ids);
    s.counters.resize(s.ids.size());
    for (std::size_t i = 0; i < s.ids.size(); ++i) s.counters[i].cpu_usage_us = 1000.0 * (s.ids[i] + 1) + double(t);
    return s;
  };
  {
    StoreWriter w(p, meta(), ch);
    const double row[] = {1.0};
    w.append(1'000'000'000, row);
    w.append_tenant_scan(scan(1'000'000'000, {0, 1}), {"job/a", "job/b"});
    w.finish(1'000'000'000, 0);
  }
  {
    StoreWriter w(p, meta(2'000'000'000), ch, StoreOpen::append);
    const double row[] = {2.0};
    w.append(2'000'000'000, row);
    // The new scanner numbers its own paths: "job/b" is its 0, "job/c" its 1.
    w.append_tenant_scan(scan(2'000'000'000, {0, 1}), {"job/b", "job/c"});
    w.finish(2'000'000'000, 0);
  }
  const Recording r = load_recording(p);
  ASSERT_EQ(r.tenants.paths, (std::vector<std::string>{"job/a", "job/b", "job/c"}));
  ASSERT_EQ(r.tenants.scans.size(), 2u);
  EXPECT_EQ(r.tenants.scans[0].ids, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(r.tenants.scans[1].ids, (std::vector<std::uint32_t>{1, 2}));
  // The counters travelled with their paths.
  EXPECT_DOUBLE_EQ(r.tenants.scans[1].counters[0].cpu_usage_us, 1000.0 * 1 + 2e9);
  EXPECT_DOUBLE_EQ(r.tenants.scans[1].counters[1].cpu_usage_us, 1000.0 * 2 + 2e9);
}

TEST_F(StoreContinueTest, TheRecorderStoresOnlyTheConfigurationThatChangedMeanwhile) {
  const fs::path p = dir_ / "agent.db";
  const fs::path root = dir_ / "host";
  fs::create_directories(root / "proc/sys/vm");
  const auto swappiness = [&](const char* v) { std::ofstream(root / "proc/sys/vm/swappiness") << v << "\n"; };
  const std::vector<ChannelInfo> ch = {counter("a")};
  const double row[] = {1.0};
  swappiness("60");
  {
    Recorder rec(p, meta(), ch, root, 1, StoreOpen::append);
    EXPECT_FALSE(rec.store().continuation().continued);
    rec.append(1'000, row);
    rec.finish(1'000, 0);
  }
  {  // nothing changed while no recorder ran: nothing stored
    Recorder rec(p, meta(2'000), ch, root, 1000, StoreOpen::append);
    EXPECT_TRUE(rec.store().continuation().continued);
    rec.append(2'000, row);
    rec.finish(2'000, 0);
  }
  swappiness("10");
  {
    Recorder rec(p, meta(3'000), ch, root, 1000, StoreOpen::append);
    rec.append(3'000, row);
    rec.finish(3'000, 0);
  }
  const Recording r = load_recording(p);
  EXPECT_EQ(r.config.at("vm.swappiness"), "60");
  ASSERT_EQ(r.config_changes.size(), 1u);
  EXPECT_EQ(r.config_changes[0].t_unix_ns, 3'000);
  EXPECT_EQ(r.config_changes[0].old_value, "60");
  EXPECT_EQ(r.config_changes[0].value, "10");
  std::size_t events = 0;
  for (const auto& e : r.events) events += e.kind == "config_change";
  EXPECT_EQ(events, 1u);
}

}  // namespace
}  // namespace reveal
