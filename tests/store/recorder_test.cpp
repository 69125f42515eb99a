// Recorder (reveal/recorder.h) against a real store in a temporary directory: what it is given
// (samples, their events, extra events, configuration changes, run metadata) is what
// load_recording reads back; and one sample costs no allocation.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../alloc_count.h"
#include "reveal/recorder.h"
#include "reveal/store.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;

class RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("reveal-recorder-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A host tree holding one configuration file, proc/sys/vm/swappiness.
  fs::path config_root(const std::string& swappiness) {
    const fs::path root = dir_ / "host";
    fs::create_directories(root / "proc/sys/vm");
    set_swappiness(root, swappiness);
    return root;
  }
  static void set_swappiness(const fs::path& root, const std::string& v) {
    std::ofstream(root / "proc/sys/vm/swappiness") << v << "\n";
  }
  fs::path dir_;
};

RunMetadata meta() {
  RunMetadata m;
  m.hostname = "h1";
  m.kernel = "6.1";
  m.interval_s = 1.0;
  m.start_unix_ns = 1'000;
  m.command = "python3 train.py";
  m.reveal_version = "test";
  m.probes = {{"proc.stat", true, "", 2}};
  return m;
}

std::vector<ChannelInfo> channels() {
  return {{"proc.stat:user", "ticks", Kind::counter, Subsystem::cpu, 64, "user time"},
          {"proc.meminfo:MemFree", "kB", Kind::gauge, Subsystem::memory, 64, ""}};
}

TEST_F(RecorderTest, SamplesEventsAndMetadataReadBack) {
  const fs::path p = dir_ / "run.db";
  {
    Recorder rec(p, meta(), channels());
    const double r0[] = {1.0, std::nan("")}, r1[] = {2.0, 5e6}, r2[] = {3.5, 4e6};
    const std::vector<Event> with_r1 = {{2'000, "nvml", "xid", 79, "GPU 1 fell off the bus"},
                                        {2'000, "netlink", "link_down", 0, "eth0"}};
    rec.append(1'000, r0);
    rec.append(2'000, r1, with_r1);
    rec.append(3'000, r2, {});
    rec.append_event({3'000, "agent", "incident_opened", 4.5, "incident opened: cpu"});
    EXPECT_EQ(rec.samples_written(), 3u);
    rec.finish(3'000, 7);
  }
  const Recording r = load_recording(p);
  EXPECT_EQ(r.meta.hostname, "h1");
  EXPECT_EQ(r.meta.command, "python3 train.py");
  EXPECT_EQ(r.meta.reveal_version, "test");
  EXPECT_EQ(r.meta.start_unix_ns, 1'000);
  EXPECT_EQ(r.meta.end_unix_ns, 3'000);
  EXPECT_EQ(r.meta.exit_code, 7);
  ASSERT_EQ(r.meta.probes.size(), 1u);
  EXPECT_EQ(r.meta.probes[0].name, "proc.stat");
  ASSERT_EQ(r.channels.size(), 2u);
  EXPECT_EQ(r.channels[1].name, "proc.meminfo:MemFree");
  ASSERT_EQ(r.t_unix_ns, (std::vector<std::int64_t>{1'000, 2'000, 3'000}));
  EXPECT_EQ(r.values(0, 0), 1.0);
  EXPECT_TRUE(std::isnan(r.values(0, 1)));
  EXPECT_EQ(r.values(1, 1), 5e6);
  EXPECT_EQ(r.values(2, 0), 3.5);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].kind, "xid");
  EXPECT_EQ(r.events[0].value, 79);
  EXPECT_EQ(r.events[0].detail, "GPU 1 fell off the bus");
  EXPECT_EQ(r.events[1].kind, "link_down");
  EXPECT_EQ(r.events[2].source, "agent");
  EXPECT_EQ(r.events[2].t_unix_ns, 3'000);
  // No configuration tracking: no snapshot, no changes.
  EXPECT_TRUE(r.config.empty());
  EXPECT_TRUE(r.config_changes.empty());
  // finish() leaves one self-contained file.
  for (const auto& side : store_side_files()) EXPECT_FALSE(fs::exists(p.string() + side.suffix)) << side.suffix;
}

TEST_F(RecorderTest, ConfigurationSnapshotThenChangesAsRowsAndEvents) {
  const fs::path p = dir_ / "run.db";
  const fs::path root = config_root("60");
  {
    Recorder rec(p, meta(), channels(), root, 2);  // re-read every 2nd sample
    const double row[] = {1.0, 2.0};
    rec.append(1'000, row);
    set_swappiness(root, "10");
    rec.append(2'000, row);  // re-read: 60 -> 10
    set_swappiness(root, "1");
    rec.append(3'000, row);  // not re-read
    rec.append(4'000, row);  // re-read: 10 -> 1
    rec.append(5'000, row);
    rec.append(6'000, row);  // re-read: unchanged
    rec.finish(6'000, 0);
  }
  const Recording r = load_recording(p);
  ASSERT_EQ(r.t_unix_ns.size(), 6u);
  ASSERT_TRUE(r.config.count("vm.swappiness"));
  EXPECT_EQ(r.config.at("vm.swappiness"), "60");  // the snapshot at the start
  std::vector<ConfigChange> swap;
  for (const auto& c : r.config_changes)
    if (c.key == "vm.swappiness") swap.push_back(c);
  ASSERT_EQ(swap.size(), 2u);
  EXPECT_EQ(swap[0].t_unix_ns, 2'000);
  EXPECT_EQ(swap[0].old_value, "60");
  EXPECT_EQ(swap[0].value, "10");
  EXPECT_EQ(swap[1].t_unix_ns, 4'000);
  EXPECT_EQ(swap[1].old_value, "10");
  EXPECT_EQ(swap[1].value, "1");
  // Each change is an event too, at the change's time.
  std::vector<Event> ev;
  for (const auto& e : r.events)
    if (e.source == "config" && e.kind == "config_change" && e.detail.find("vm.swappiness") != std::string::npos)
      ev.push_back(e);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].t_unix_ns, 2'000);
  EXPECT_EQ(ev[1].t_unix_ns, 4'000);
  EXPECT_NE(ev[1].detail.find("10 → 1"), std::string::npos) << ev[1].detail;
}

TEST_F(RecorderTest, ReplacesAPreviousStoreAndRefusesOtherFiles) {
  const fs::path p = dir_ / "run.db";
  {
    Recorder rec(p, meta(), channels());
    const double row[] = {1.0, 2.0};
    rec.append(1'000, row);
    rec.finish(1'000, 0);
  }
  {
    Recorder rec(p, meta(), channels());
    const double row[] = {7.0, 8.0};
    rec.append(5'000, row);
    rec.append(6'000, row);
    rec.finish(6'000, 0);
  }
  EXPECT_EQ(load_recording(p).t_unix_ns, (std::vector<std::int64_t>{5'000, 6'000}));
  const fs::path notes = dir_ / "notes.txt";
  std::ofstream(notes) << "keep\n";
  EXPECT_THROW((Recorder{notes, meta(), channels()}), StoreError);
  std::string kept;
  std::ifstream(notes) >> kept;
  EXPECT_EQ(kept, "keep");
}

// The hot path: one sample with no events, between chunk commits and configuration re-reads.
TEST_F(RecorderTest, AppendAllocatesNothing) {
  const fs::path p = dir_ / "run.db";
  Recorder rec(p, meta(), channels(), config_root("60"), 1000);
  double row[] = {1.0, 2.0};
  std::int64_t t = 1'000;
  for (int i = 0; i < 2; ++i) rec.append(t += 1'000, row);  // warm up
  testing::start_counting_allocations();
  for (int i = 0; i < 50; ++i) {
    row[0] += 1.0;
    rec.append(t += 1'000, row);
  }
  EXPECT_EQ(testing::stop_counting_allocations(), 0);
  rec.finish(t, 0);
  EXPECT_EQ(load_recording(p).t_unix_ns.size(), 52u);
}

}  // namespace
}  // namespace reveal
