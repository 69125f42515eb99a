#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "reveal/store.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("reveal-store-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

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

}  // namespace
}  // namespace reveal
