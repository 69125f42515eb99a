// Configuration snapshot: read_config on a hand-made root with known values, the governor
// collapse, THP bracket parsing, NIC PCIe link, omission of what is missing, the extension
// point, and ConfigWatcher seeing a file edited under a copy of the fixture.
#include <gtest/gtest.h>

#include <stdexcept>

#include "nvml/nvml_double_control.h"
#include "probe_test_util.h"
#include "reveal/host_config.h"

namespace reveal {
namespace {

using reveal::testing::fixture;
using reveal::testing::TempRoot;

// The snapshot also holds what the registered NVML source reads from $REVEAL_NVML_LIBRARY
// (the test double, in this binary): pin it to nothing so these tests see the files alone.
class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("REVEAL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1); }
  reveal::testing::EnvGuard guard_{"REVEAL_NVML_LIBRARY"};
};
using ConfigWatcherTest = ConfigTest;

const ConfigSnapshot& fixture_config() {
  static const ConfigSnapshot c = read_config(fixture("config-2socket"));
  return c;
}

std::string get(const ConfigSnapshot& c, const std::string& key) {
  auto it = c.find(key);
  return it == c.end() ? "<absent>" : it->second;
}

TEST_F(ConfigTest, ReadsKernelAndMemorySettings) {
  const auto& c = fixture_config();
  EXPECT_EQ(get(c, "kernel.osrelease"), "6.8.0-45-generic");
  EXPECT_EQ(get(c, "kernel.cmdline").rfind("BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic ", 0), 0u);
  EXPECT_EQ(get(c, "kernel.cmdline").back(), 't');  // trailing newline trimmed ("iommu=pt")
  EXPECT_EQ(get(c, "kernel.numa_balancing"), "1");
  EXPECT_EQ(get(c, "vm.swappiness"), "60");
  EXPECT_EQ(get(c, "vm.nr_hugepages"), "0");
  EXPECT_EQ(get(c, "hugepages.2048kB.nr_hugepages"), "0");
  EXPECT_EQ(get(c, "hugepages.1048576kB.nr_hugepages"), "8");
  // Sysctls by their sysctl(8) names, blank runs as one space; absent files give no key.
  EXPECT_EQ(get(c, "net.core.rmem_max"), "212992");
  EXPECT_EQ(get(c, "net.ipv4.tcp_rmem"), "4096 131072 6291456");
  EXPECT_EQ(get(c, "net.ipv4.tcp_congestion_control"), "cubic");
  EXPECT_EQ(get(c, "vm.max_map_count"), "65530");
  EXPECT_EQ(get(c, "kernel.nmi_watchdog"), "1");
  EXPECT_EQ(get(c, "net.core.wmem_max"), "<absent>");
}

TEST_F(ConfigTest, ThpIsTheBracketedChoice) {
  const auto& c = fixture_config();
  EXPECT_EQ(get(c, "thp.enabled"), "madvise");
  EXPECT_EQ(get(c, "thp.defrag"), "madvise");  // not "defer+madvise"
}

TEST_F(ConfigTest, CpuModelMicrocodeSmtAndCollapsedGovernor) {
  const auto& c = fixture_config();
  EXPECT_EQ(get(c, "cpu.model"), "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(get(c, "cpu.microcode"), "0x2b000590");
  EXPECT_EQ(get(c, "smt.control"), "on");
  EXPECT_EQ(get(c, "smt.active"), "1");
  EXPECT_EQ(get(c, "cpu.governor"), "performance");
  for (const auto& [k, v] : c) EXPECT_EQ(k.rfind("cpu.cpu", 0), std::string::npos) << k;  // collapsed
}

// Offline CPUs and the boot id: a CPU taken offline, or a reboot, shows as a changed key.
TEST_F(ConfigTest, OfflineCpusAndTheBootId) {
  TempRoot root("config-2socket");
  root.write("sys/devices/system/cpu/online", "0-1,3\n");
  root.write("sys/devices/system/cpu/offline", "2\n");
  root.write("proc/sys/kernel/random/boot_id", "1c0e3a52-5d4e-4b43-9f0a-2f5a8c1d7e11\n");
  ConfigSnapshot c = read_config(root.path());
  EXPECT_EQ(get(c, "cpu.online"), "0-1,3");
  EXPECT_EQ(get(c, "cpu.offline"), "2");
  EXPECT_EQ(get(c, "kernel.boot_id"), "1c0e3a52-5d4e-4b43-9f0a-2f5a8c1d7e11");
  root.write("sys/devices/system/cpu/online", "0-3\n");
  root.write("sys/devices/system/cpu/offline", "\n");  // none offline: no key
  const auto changes = diff_config(c, read_config(root.path()), 5);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].key, "cpu.offline");
  EXPECT_EQ(changes[0].old_value, "2");
  EXPECT_EQ(changes[0].value, "");
  EXPECT_EQ(changes[1].key, "cpu.online");
  EXPECT_EQ(changes[1].value, "0-3");
}

TEST_F(ConfigTest, MixedGovernorsArePerCpu) {
  TempRoot root("config-2socket");
  root.write("sys/devices/system/cpu/cpu2/cpufreq/scaling_governor", "powersave\n");
  const auto c = read_config(root.path());
  EXPECT_EQ(c.count("cpu.governor"), 0u);
  EXPECT_EQ(get(c, "cpu.cpu0.governor"), "performance");
  EXPECT_EQ(get(c, "cpu.cpu1.governor"), "performance");
  EXPECT_EQ(get(c, "cpu.cpu2.governor"), "powersave");
  EXPECT_EQ(get(c, "cpu.cpu3.governor"), "performance");
}

TEST_F(ConfigTest, NicsWithPcieLinkAndRdmaPorts) {
  const auto& c = fixture_config();
  EXPECT_EQ(get(c, "net.eth0.mtu"), "1500");
  EXPECT_EQ(get(c, "net.eth0.speed"), "100000");
  EXPECT_EQ(get(c, "net.eth0.duplex"), "full");
  EXPECT_EQ(get(c, "net.eth0.operstate"), "up");
  EXPECT_EQ(get(c, "net.eth0.pcie.current_link_speed"), "16.0 GT/s PCIe");
  EXPECT_EQ(get(c, "net.eth0.pcie.current_link_width"), "8");  // a degraded x8 link on an x16 card
  EXPECT_EQ(get(c, "net.eth0.pcie.max_link_speed"), "16.0 GT/s PCIe");
  EXPECT_EQ(get(c, "net.eth0.pcie.max_link_width"), "16");
  EXPECT_EQ(get(c, "rdma.mlx5_0.fw_ver"), "28.39.1002");
  EXPECT_EQ(get(c, "rdma.mlx5_0.port1.rate"), "200 Gb/sec (4X HDR)");
  EXPECT_EQ(get(c, "rdma.mlx5_0.port1.state"), "4: ACTIVE");
  EXPECT_EQ(get(c, "rdma.mlx5_0.port1.phys_state"), "5: LinkUp");
  EXPECT_EQ(get(c, "rdma.mlx5_0.port1.link_layer"), "InfiniBand");
}

TEST_F(ConfigTest, DriverVersions) {
  const auto& c = fixture_config();
  EXPECT_EQ(get(c, "driver.mlx5_core.version"), "24.04-0.6.6");
  EXPECT_EQ(get(c, "driver.nvidia.version"), "550.54.15");
  EXPECT_EQ(get(c, "driver.nvidia.proc_version"),
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024");
}

TEST_F(ConfigTest, MissingOrEmptyFilesAreOmitted) {
  const auto& c = fixture_config();
  for (const char* k : {"net.lo.mtu", "net.veth1.speed", "net.veth1.duplex", "net.veth1.pcie.current_link_speed",
                        "driver.ext4.version", "driver.tcp_cubic.version"})
    EXPECT_EQ(c.count(k), 0u) << k;
  EXPECT_EQ(get(c, "net.veth1.mtu"), "1500");
  for (const auto& [k, v] : c) EXPECT_FALSE(v.empty()) << k;

  TempRoot root("config-2socket");
  root.remove("sys/kernel/mm/transparent_hugepage");
  root.remove("proc/cpuinfo");
  root.remove("sys/class/net/eth0/device");
  const auto d = read_config(root.path());
  for (const char* k : {"thp.enabled", "thp.defrag", "cpu.model", "cpu.microcode", "net.eth0.pcie.max_link_width"})
    EXPECT_EQ(d.count(k), 0u) << k;
  EXPECT_EQ(get(d, "net.eth0.mtu"), "1500");
  EXPECT_EQ(get(d, "kernel.osrelease"), "6.8.0-45-generic");

  EXPECT_TRUE(read_config(fixture("no-such-root")).empty());
}

TEST_F(ConfigTest, ExtensionSourcesAddKeysAndFailAlone) {
  register_config_source("test.gpu", [](const std::filesystem::path&, ConfigSnapshot& out) {
    out["gpu.0.persistence_mode"] = "Enabled";
  });
  EXPECT_EQ(get(read_config(fixture("config-2socket")), "gpu.0.persistence_mode"), "Enabled");
  register_config_source("test.gpu", [](const std::filesystem::path&, ConfigSnapshot& out) {
    out["gpu.0.persistence_mode"] = "Enabled";
    throw std::runtime_error("driver gone");
  });
  const auto c = read_config(fixture("config-2socket"));
  EXPECT_EQ(c.count("gpu.0.persistence_mode"), 0u);
  EXPECT_EQ(get(c, "net.eth0.mtu"), "1500");
  register_config_source("test.gpu", [](const std::filesystem::path&, ConfigSnapshot&) {});
}

TEST_F(ConfigTest, DiffAndEndState) {
  const ConfigSnapshot a{{"k1", "1"}, {"k2", "2"}, {"k3", "3"}};
  const ConfigSnapshot b{{"k1", "1"}, {"k2", "20"}, {"k4", "4"}};
  const auto d = diff_config(a, b, 7);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].key, "k2");
  EXPECT_EQ(d[0].old_value, "2");
  EXPECT_EQ(d[0].value, "20");
  EXPECT_EQ(d[1].key, "k3");
  EXPECT_EQ(d[1].value, "");  // removed
  EXPECT_EQ(d[2].key, "k4");
  EXPECT_EQ(d[2].old_value, "");  // added
  EXPECT_EQ(d[2].t_unix_ns, 7);
  Recording rec;
  rec.config = a;
  rec.config_changes = d;
  EXPECT_EQ(config_at_end(rec), b);
  const Event e = config_event({5, "net.eth0.mtu", "1500", "9000"});
  EXPECT_EQ(e.source, "config");
  EXPECT_EQ(e.kind, "config_change");
  EXPECT_EQ(e.t_unix_ns, 5);
  EXPECT_EQ(e.detail, "net.eth0.mtu: 1500 → 9000");
  EXPECT_EQ(config_event({5, "k", "", "x"}).detail, "k: (none) → x");
}

TEST_F(ConfigWatcherTest, SeesAnEditedFileAtTheNextReRead) {
  TempRoot root("config-2socket");
  ConfigWatcher w(root.path(), 3);
  EXPECT_EQ(get(w.snapshot(), "net.eth0.mtu"), "1500");
  EXPECT_TRUE(w.tick(1).empty());
  root.write("sys/class/net/eth0/mtu", "9000\n");
  root.write("sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
  EXPECT_TRUE(w.tick(2).empty());  // not re-read yet: every 3rd tick
  const auto changes = w.tick(3);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].key, "net.eth0.mtu");
  EXPECT_EQ(changes[0].old_value, "1500");
  EXPECT_EQ(changes[0].value, "9000");
  EXPECT_EQ(changes[0].t_unix_ns, 3);
  EXPECT_EQ(changes[1].key, "thp.enabled");
  EXPECT_EQ(changes[1].value, "always");
  EXPECT_EQ(get(w.snapshot(), "net.eth0.mtu"), "9000");
  for (int t = 4; t <= 6; ++t) EXPECT_TRUE(w.tick(t).empty());  // nothing new
  root.remove("sys/class/net/veth1");
  for (int t = 7; t <= 8; ++t) EXPECT_TRUE(w.tick(t).empty());
  const auto gone = w.tick(9);
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone[0].key, "net.veth1.mtu");
  EXPECT_EQ(gone[0].value, "");
  EXPECT_EQ(gone[1].key, "net.veth1.operstate");
}

}  // namespace
}  // namespace reveal
