// GPU settings in the configuration snapshot (nvml_config.h) read from the NVML test double:
// exact keys per GPU, keys omitted where the double answers NOT_SUPPORTED, nothing at all when
// the library is absent or nvmlInit fails, NVML left as found, and the registered config
// source following $REVEAL_NVML_LIBRARY.
#include "telemetry/nvml/nvml_config.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "../probe_test_util.h"
#include "nvml_double_control.h"
#include "reveal/host_config.h"

namespace reveal {
namespace {
using testing::EnvGuard;
using testing::NvmlDouble;
using telemetry::nvml::read_nvml_config;

class NvmlConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(d().handle, nullptr) << ::dlerror();
    d().reset();
  }
  static NvmlDouble& d() { return NvmlDouble::get(); }
};

std::string get(const ConfigSnapshot& c, const std::string& key) {
  auto it = c.find(key);
  return it == c.end() ? "<absent>" : it->second;
}

TEST_F(NvmlConfigTest, ExactKeysFromTheDouble) {
  const int refs = d().init_refcount();
  ConfigSnapshot c;
  read_nvml_config(REVEAL_NVML_DOUBLE_PATH, c);
  EXPECT_EQ(d().init_refcount(), refs);  // initialised and shut down again
  const ConfigSnapshot want{
      {"gpu.driver_version", "580.159.03"},
      {"gpu.nvml_version", "13.580.159.03"},
      {"gpu.cuda_driver_version", "13.0"},
      {"gpu.count", "2"},
      {"gpu.0.name", "Reveal Double A"},
      {"gpu.0.uuid", "GPU-00000000-0000-0000-0000-000000000000"},
      {"gpu.0.vbios_version", "96.00.89.00.01"},
      {"gpu.0.persistence_mode", "Enabled"},
      {"gpu.0.ecc_mode.current", "Enabled"},
      {"gpu.0.ecc_mode.pending", "Disabled"},
      {"gpu.0.mig_mode.current", "Disabled"},
      {"gpu.0.mig_mode.pending", "Disabled"},
      {"gpu.0.compute_mode", "Default"},
      {"gpu.0.power_limit_w", "700"},
      {"gpu.0.default_power_limit_w", "700"},
      {"gpu.0.enforced_power_limit_w", "700"},
      {"gpu.0.applications_clocks.sm_mhz", "1980"},
      {"gpu.0.applications_clocks.mem_mhz", "2619"},
      {"gpu.0.default_applications_clocks.sm_mhz", "1755"},
      {"gpu.0.default_applications_clocks.mem_mhz", "2619"},
      {"gpu.0.pcie.max_link_gen", "5"},
      {"gpu.0.pcie.max_link_width", "16"},
      {"gpu.0.pcie.current_link_width", "8"},
      {"gpu.1.name", "Reveal Double B"},
      {"gpu.1.uuid", "GPU-11111111-1111-1111-1111-111111111111"},
      {"gpu.1.persistence_mode", "Disabled"},
      {"gpu.1.compute_mode", "Exclusive_Process"},
      {"gpu.1.power_limit_w", "312.5"},
      {"gpu.1.default_power_limit_w", "300"},
      {"gpu.1.enforced_power_limit_w", "300"},
      {"gpu.1.pcie.max_link_gen", "4"},
      {"gpu.1.pcie.max_link_width", "16"},
      {"gpu.1.pcie.current_link_width", "16"},
  };
  EXPECT_EQ(c, want);
}

TEST_F(NvmlConfigTest, MinimalLibraryGivesOnlyWhatItHas) {
  ConfigSnapshot c;
  read_nvml_config(REVEAL_NVML_DOUBLE_MINIMAL_PATH, c);
  EXPECT_EQ(get(c, "gpu.count"), "2");
  EXPECT_EQ(get(c, "gpu.1.name"), "Reveal Double B");
  EXPECT_EQ(c.count("gpu.driver_version"), 0u);
  EXPECT_EQ(c.count("gpu.0.persistence_mode"), 0u);
  EXPECT_EQ(c.count("gpu.0.pcie.max_link_gen"), 0u);
}

TEST_F(NvmlConfigTest, NothingWithoutALibraryOrWhenInitFails) {
  ConfigSnapshot c;
  read_nvml_config("/nonexistent/libnvidia-ml.so.1", c);
  EXPECT_TRUE(c.empty());
  d().set_init_result(9);  // NVML_ERROR_DRIVER_NOT_LOADED
  read_nvml_config(REVEAL_NVML_DOUBLE_PATH, c);
  EXPECT_TRUE(c.empty());
  d().set_init_result(0);
}

TEST_F(NvmlConfigTest, LostGpuLosesOnlyItsOwnKeys) {
  d().set_lost_after(1, 0);  // gpu1 lost from now on
  ConfigSnapshot c;
  read_nvml_config(REVEAL_NVML_DOUBLE_PATH, c);
  EXPECT_EQ(get(c, "gpu.0.persistence_mode"), "Enabled");
  for (const auto& [k, v] : c) EXPECT_NE(k.rfind("gpu.1.", 0), 0u) << k;
}

TEST_F(NvmlConfigTest, CachedSessionInitialisesOnceAndRetriesFailures) {
  const std::string missing = "/nonexistent/cached/libnvidia-ml.so.1";
  ConfigSnapshot none;
  telemetry::nvml::read_nvml_config_cached(missing, none);
  EXPECT_TRUE(none.empty());
  // The double under a second path name (same library): a session of its own.
  // (a new spelling on every run of this test, so that repeats start without a session)
  static int run = 0;
  const std::filesystem::path lib(REVEAL_NVML_DOUBLE_PATH);
  std::filesystem::path dir = lib.parent_path();
  for (int i = 0; i <= run; ++i) dir /= ".";
  ++run;
  const std::string path = (dir / lib.filename()).string();
  d().set_init_result(9);  // the first attempt fails: nothing, and no session kept
  ConfigSnapshot c;
  telemetry::nvml::read_nvml_config_cached(path, c);
  EXPECT_TRUE(c.empty());
  d().set_init_result(0);
  const int before = d().init_refcount();
  for (int i = 0; i < 3; ++i) {
    c.clear();
    telemetry::nvml::read_nvml_config_cached(path, c);
    EXPECT_EQ(get(c, "gpu.0.persistence_mode"), "Enabled");
  }
  EXPECT_EQ(d().init_refcount(), before + 1);  // initialised once, kept
}

TEST_F(NvmlConfigTest, RegisteredSourceFollowsTheLibraryVariable) {
  EnvGuard guard("REVEAL_NVML_LIBRARY");
  ::setenv("REVEAL_NVML_LIBRARY", REVEAL_NVML_DOUBLE_PATH, 1);
  const auto with = read_config(testing::fixture("config-2socket"));
  EXPECT_EQ(get(with, "gpu.0.persistence_mode"), "Enabled");
  EXPECT_EQ(get(with, "net.eth0.mtu"), "1500");  // the file-based keys are still there
  ::setenv("REVEAL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  const auto without = read_config(testing::fixture("config-2socket"));
  EXPECT_EQ(without.count("gpu.0.persistence_mode"), 0u);
  EXPECT_EQ(get(without, "net.eth0.mtu"), "1500");
}

}  // namespace
}  // namespace reveal
