// Helpers shared by the store tests: a fresh directory per test, and the smallest run a store
// accepts.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "reveal/recording.h"

namespace reveal::testing {

// dir_: /tmp/reveal-<suite>-<pid>-<test>, made before each test and removed after it.
class StoreDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("reveal-" + std::string(info->test_suite_name()) + "-" + std::to_string(::getpid()) + "-" + info->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
};

// Host "h1", started at t = 1000 ns; one counter channel.
inline RunMetadata minimal_meta() {
  RunMetadata m;
  m.hostname = "h1";
  m.start_unix_ns = 1'000;
  return m;
}
inline std::vector<ChannelInfo> one_channel() {
  return {{"proc.stat:user", "ticks", Kind::counter, Subsystem::cpu, 64, ""}};
}

}  // namespace reveal::testing
