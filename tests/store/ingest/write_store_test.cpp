#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "reveal/ingest.h"
#include "reveal/store.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;

class WriteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("reveal-import-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

Recording sample() {
  return import_wide_csv({"in.csv", "t_unix_ns,t_s,proc.stat:user,b:x\n1000,0,1,\n2000,0,2.5,3\n"});
}

TEST_F(WriteStoreTest, WritesAStoreThatLoadsBack) {
  const fs::path out = dir_ / "run.db";
  write_store(out, sample());
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_EQ(e.path().filename().string(), "run.db");  // nothing beside
  const Recording r = load_recording(out);
  ASSERT_EQ(r.channels.size(), 2u);
  EXPECT_EQ(r.channels[0].name, "proc.stat:user");
  EXPECT_EQ(r.channels[0].subsystem, Subsystem::cpu);
  ASSERT_EQ(r.t_unix_ns.size(), 2u);
  EXPECT_EQ(r.t_unix_ns[1], 2000);
  EXPECT_EQ(r.values(1, 0), 2.5);
  EXPECT_TRUE(std::isnan(r.values(0, 1)));
  EXPECT_EQ(r.meta.command, "reveal import csv in.csv");
  EXPECT_TRUE(r.meta.complete);
}

TEST_F(WriteStoreTest, ReplacesAStoreAndIgnoresItsStaleHeadLog) {
  const fs::path out = dir_ / "run.db";
  write_store(out, sample());
  { std::ofstream(out.string() + "-head") << "stale head log of a crashed recorder"; }
  Recording other = sample();
  other.t_unix_ns = {5000, 6000};
  other.meta.start_unix_ns = 5000;
  other.meta.end_unix_ns = 6000;
  write_store(out, other);
  EXPECT_FALSE(fs::exists(out.string() + "-head"));
  const Recording r = load_recording(out);
  ASSERT_EQ(r.t_unix_ns.size(), 2u);
  EXPECT_EQ(r.t_unix_ns[0], 5000);
}

TEST_F(WriteStoreTest, RefusesToReplaceAFileThatIsNotAStore) {
  const fs::path out = dir_ / "notes.txt";
  { std::ofstream(out) << "precious"; }
  EXPECT_THROW(write_store(out, sample()), ImportError);
  std::ifstream f(out);
  std::string s;
  f >> s;
  EXPECT_EQ(s, "precious");
  EXPECT_THROW(write_store(dir_, sample()), ImportError);  // a directory
}

TEST_F(WriteStoreTest, FailureLeavesNothingBehind) {
  const fs::path out = dir_ / "no" / "such" / "dir" / "run.db";
  EXPECT_ANY_THROW(write_store(out, sample()));
  EXPECT_FALSE(fs::exists(out));
  // Nothing stray in the test folder either.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
}

}  // namespace
}  // namespace reveal
