// Configuration drift across hosts (include/reveal/config_drift.h): majorities, minorities,
// split keys, keys different by nature, the ranking and the actions.
#include "reveal/config_drift.h"

#include <gtest/gtest.h>

namespace reveal {
namespace {

// Five alike hosts (a..e) as a 2-socket host's snapshot would have them.
std::vector<HostConfig> fleet() {
  std::vector<HostConfig> hosts;
  for (const char* h : {"a", "b", "c", "d", "e"})
    hosts.push_back({h,
                     {{"kernel.osrelease", "6.1.0-18-amd64"},
                      {"kernel.boot_id", std::string("boot-") + h},
                      {"cpu.governor", "performance"},
                      {"net.eth0.mtu", "9000"},
                      {"net.eth0.speed", "100000"},
                      {"net.eth0.pcie.current_link_width", "16"},
                      {"net.eth0.pcie.max_link_width", "16"},
                      {"gpu.0.uuid", std::string("GPU-") + h},
                      {"driver.nvidia.proc_version", "NVRM 550.54"},
                      {"vm.swappiness", "60"}}});
  return hosts;
}

const ConfigDrift* find(const DriftReport& r, const std::string& key) {
  for (const auto& d : r.drifts)
    if (d.key == key) return &d;
  return nullptr;
}

TEST(ConfigDrift, AlikeHostsHaveNoDrift) {
  const DriftReport r = find_config_drift(fleet());
  EXPECT_EQ(r.hosts, 5u);
  EXPECT_TRUE(r.drifts.empty());
  EXPECT_TRUE(r.split.empty());
  EXPECT_EQ(r.same, 8u);
  EXPECT_EQ(r.skipped, 2u) << "boot ids and GPU UUIDs differ on every host by nature";
}

// The fleet: one host with a lowered MTU, one whose NIC's PCIe link trained at x8.
TEST(ConfigDrift, ALoweredMtuAndANarrowPcieLinkAreNamedWithTheirHosts) {
  auto hosts = fleet();
  hosts[2].config["net.eth0.mtu"] = "1500";
  hosts[3].config["net.eth0.pcie.current_link_width"] = "8";
  hosts[4].config["vm.swappiness"] = "10";
  const DriftReport r = find_config_drift(hosts);
  ASSERT_EQ(r.drifts.size(), 3u);
  EXPECT_TRUE(r.split.empty());
  // Both high-importance drifts rank above the swappiness one; ties by key.
  EXPECT_EQ(r.drifts[0].key, "net.eth0.mtu");
  EXPECT_EQ(r.drifts[1].key, "net.eth0.pcie.current_link_width");
  EXPECT_EQ(r.drifts[2].key, "vm.swappiness");

  const ConfigDrift& mtu = r.drifts[0];
  EXPECT_EQ(mtu.area, "network");
  EXPECT_EQ(mtu.importance, DriftImportance::high);
  EXPECT_EQ(mtu.majority.value, "9000");
  EXPECT_EQ(mtu.majority.count, 4u);
  EXPECT_TRUE(mtu.majority.hosts.empty()) << "the majority is counted, not named";
  ASSERT_EQ(mtu.minority.size(), 1u);
  EXPECT_EQ(mtu.minority[0].value, "1500");
  EXPECT_EQ(mtu.minority[0].hosts, (std::vector<std::string>{"c"}));
  EXPECT_EQ(mtu.action, "set the MTU the rest of the fleet has on c: ip link set dev eth0 mtu 9000");
  EXPECT_DOUBLE_EQ(mtu.score, 1.0 * 1.0 * (1 - 0.5 * 1 / 5.0));

  const ConfigDrift& pcie = r.drifts[1];
  EXPECT_EQ(pcie.area, "interconnect");
  EXPECT_EQ(pcie.importance, DriftImportance::high);
  EXPECT_EQ(pcie.minority[0].value, "8");
  EXPECT_EQ(pcie.minority[0].hosts, (std::vector<std::string>{"d"}));
  EXPECT_NE(pcie.action.find("reseat the NIC eth0 on d"), std::string::npos) << pcie.action;
  EXPECT_NE(pcie.action.find("link is 16"), std::string::npos) << pcie.action;

  EXPECT_EQ(r.drifts[2].importance, DriftImportance::low);
  EXPECT_LT(r.drifts[2].score, pcie.score);
  EXPECT_EQ(r.same, 5u);
}

TEST(ConfigDrift, TheSlowerSideAndTheFewerHostsRankHigher) {
  auto hosts = fleet();
  hosts[0].config["net.eth0.mtu"] = "1500";      // below the fleet's 9000
  hosts[1].config["net.eth0.speed"] = "200000";  // above the fleet's 100000
  const DriftReport r = find_config_drift(hosts);
  ASSERT_NE(find(r, "net.eth0.mtu"), nullptr);
  ASSERT_NE(find(r, "net.eth0.speed"), nullptr);
  EXPECT_GT(find(r, "net.eth0.mtu")->score, find(r, "net.eth0.speed")->score);

  // The same setting on two hosts of five ranks below one host of five.
  auto two = fleet();
  two[0].config["cpu.governor"] = "powersave";
  two[1].config["cpu.governor"] = "powersave";
  auto one = fleet();
  one[0].config["cpu.governor"] = "powersave";
  const DriftReport r2 = find_config_drift(two), r1 = find_config_drift(one);
  const ConfigDrift* d2 = find(r2, "cpu.governor");
  const ConfigDrift* d1 = find(r1, "cpu.governor");
  ASSERT_TRUE(d1 && d2);
  EXPECT_GT(d1->score, d2->score);
  EXPECT_EQ(r2.drifts[0].action, "set the fleet's governor on a, b: cpupower frequency-set -g performance");
}

// A VLAN's key holds the interface's dots; socket buffers compare by their maximum.
TEST(ConfigDrift, DevicesWithDotsAndListsOfNumbers) {
  auto hosts = fleet();
  for (auto& h : hosts) h.config["net.eth0.100.mtu"] = "9000";
  hosts[2].config["net.eth0.100.mtu"] = "1500";
  const DriftReport r = find_config_drift(hosts);
  ASSERT_NE(find(r, "net.eth0.100.mtu"), nullptr);
  EXPECT_EQ(find(r, "net.eth0.100.mtu")->action,
            "set the MTU the rest of the fleet has on c: ip link set dev eth0.100 mtu 9000");
  auto bufs = fleet();
  for (auto& h : bufs) h.config["net.ipv4.tcp_rmem"] = "4096 131072 6291456";
  bufs[0].config["net.ipv4.tcp_rmem"] = "4096 131072 4194304";  // a lower maximum: the slower side
  bufs[1].config["net.ipv4.tcp_wmem"] = "4096 16384 8388608";   // higher than the others' (below)
  for (std::size_t i = 2; i < bufs.size(); ++i) bufs[i].config["net.ipv4.tcp_wmem"] = "4096 16384 4194304";
  bufs[0].config["net.ipv4.tcp_wmem"] = "4096 16384 4194304";
  const DriftReport b = find_config_drift(bufs);
  ASSERT_TRUE(find(b, "net.ipv4.tcp_rmem") && find(b, "net.ipv4.tcp_wmem"));
  EXPECT_DOUBLE_EQ(find(b, "net.ipv4.tcp_rmem")->score, 0.6 * 1.0 * 0.9);
  EXPECT_DOUBLE_EQ(find(b, "net.ipv4.tcp_wmem")->score, 0.6 * 0.8 * 0.9);
}

// A host whose CPUs run different governors is one drift of cpu.governor, not one per CPU.
TEST(ConfigDrift, PerCpuGovernorsAreOneSetting) {
  auto hosts = fleet();
  hosts[4].config.erase("cpu.governor");
  for (int c = 0; c < 4; ++c)
    hosts[4].config["cpu.cpu" + std::to_string(c) + ".governor"] = c == 2 ? "powersave" : "performance";
  const DriftReport r = find_config_drift(hosts);
  ASSERT_EQ(r.drifts.size(), 1u);
  EXPECT_EQ(r.drifts[0].key, "cpu.governor");
  EXPECT_EQ(r.drifts[0].minority[0].value, "mixed: performance on 3 CPUs, powersave on 1 CPU");
  EXPECT_EQ(r.drifts[0].action, "set the fleet's governor on e: cpupower frequency-set -g performance");
  EXPECT_EQ(r.same, 7u);
  // Per-CPU keys that all agree are that one governor.
  hosts[4].config["cpu.cpu2.governor"] = "performance";
  EXPECT_TRUE(find_config_drift(hosts).drifts.empty());
}

TEST(ConfigDrift, AMissingKeyAndAnExtraKeyAreDrifts) {
  auto hosts = fleet();
  hosts[4].config.erase("driver.nvidia.proc_version");  // the driver is not loaded there
  hosts[1].config["net.ib0.mtu"] = "2044";               // an interface only b has
  const DriftReport r = find_config_drift(hosts);
  const ConfigDrift* missing = find(r, "driver.nvidia.proc_version");
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->minority[0].value, "");
  EXPECT_EQ(missing->minority[0].hosts, (std::vector<std::string>{"e"}));
  EXPECT_EQ(missing->area, "driver");
  EXPECT_DOUBLE_EQ(missing->score, 0.6 * 0.8 * (1 - 0.5 / 5));
  const ConfigDrift* extra = find(r, "net.ib0.mtu");
  ASSERT_NE(extra, nullptr);
  EXPECT_EQ(extra->majority.value, "");
  EXPECT_EQ(extra->majority.count, 4u);
  EXPECT_EQ(extra->minority[0].value, "2044");
  EXPECT_DOUBLE_EQ(extra->score, 1.0 * 0.5 * (1 - 0.5 / 5));
  EXPECT_EQ(drift_value_text(""), "(absent)");
  EXPECT_EQ(missing->action,
            "driver.nvidia.proc_version is missing on e (the rest of the fleet has it): check that the device, driver "
            "or setting is there, then install the fleet's NVIDIA driver on e (NVRM 550.54)");
  EXPECT_EQ(extra->action,
            "net.ib0.mtu = 2044 only on b; the rest of the fleet has no such setting: check that it belongs there");
}

// A Kubernetes node's pod interfaces exist on that node only: not drift, however many.
TEST(ConfigDrift, PodInterfacesAreNoDrift) {
  auto hosts = fleet();
  for (std::size_t i = 0; i < hosts.size(); ++i)
    for (const char* prefix : {"veth", "cali", "lxc", "gke", "azv", "eni", "tap", "vnet"}) {
      hosts[i].config[std::string("net.") + prefix + "3f9a" + std::to_string(i) + ".mtu"] = "1450";
      hosts[i].config[std::string("net.") + prefix + "3f9a" + std::to_string(i) + ".operstate"] = "up";
    }
  hosts[2].config["net.cni0.mtu"] = "1400";  // the node's bridge: alike elsewhere, so it is drift
  for (auto& h : hosts)
    if (&h != &hosts[2]) h.config["net.cni0.mtu"] = "1450";
  const DriftReport r = find_config_drift(hosts);
  ASSERT_EQ(r.drifts.size(), 1u);
  EXPECT_EQ(r.drifts[0].key, "net.cni0.mtu");
  EXPECT_TRUE(r.split.empty());
}

TEST(ConfigDrift, KeysWithoutAMajorityAreSplit) {
  auto hosts = fleet();
  hosts[0].config["kernel.osrelease"] = "6.5.0";
  hosts[1].config["kernel.osrelease"] = "6.5.0";
  hosts[2].config["kernel.osrelease"] = "6.8.0";
  const DriftReport r = find_config_drift(hosts);
  EXPECT_EQ(find(r, "kernel.osrelease"), nullptr);
  ASSERT_EQ(r.split.size(), 1u);
  EXPECT_EQ(r.split[0].key, "kernel.osrelease");
  ASSERT_EQ(r.split[0].values.size(), 3u);
  EXPECT_EQ(r.split[0].values[0].hosts.size(), 2u);
  EXPECT_EQ(r.split[0].values[2].value, "6.8.0");

  // A majority too narrow to call the rest a minority: 6 against 5 of 11 hosts (the lead must be
  // a fifth of the hosts, 3); 7 against 4 is a drift of 4.
  std::vector<HostConfig> eleven;
  for (int k = 0; k < 11; ++k) {
    eleven.push_back(hosts[0]);
    eleven.back().host = "h" + std::to_string(k);
    eleven.back().config["kernel.osrelease"] = k < 6 ? "6.8.0" : "6.1.0";
  }
  const DriftReport narrow = find_config_drift(eleven);
  EXPECT_TRUE(narrow.drifts.empty());
  ASSERT_EQ(narrow.split.size(), 1u);
  EXPECT_EQ(narrow.split[0].key, "kernel.osrelease");
  eleven[6].config["kernel.osrelease"] = "6.8.0";
  const DriftReport wide = find_config_drift(eleven);
  ASSERT_NE(find(wide, "kernel.osrelease"), nullptr);
  EXPECT_EQ(find(wide, "kernel.osrelease")->minority[0].hosts.size(), 4u);
  EXPECT_TRUE(wide.split.empty());

  // Two hosts: no value can have a majority, every difference is split.
  std::vector<HostConfig> pair(hosts.begin(), hosts.begin() + 2);
  pair[1].config["net.eth0.mtu"] = "1500";
  const DriftReport p = find_config_drift(pair);
  EXPECT_TRUE(p.drifts.empty());
  ASSERT_EQ(p.split.size(), 1u);
  EXPECT_EQ(p.split[0].key, "net.eth0.mtu");
}

TEST(ConfigDrift, SysctlsAreNamedInTheirActions) {
  auto hosts = fleet();
  for (auto& h : hosts) h.config["net.ipv4.tcp_rmem"] = "4096 131072 6291456";
  hosts[1].config["net.ipv4.tcp_rmem"] = "4096 87380 4194304";
  const DriftReport r = find_config_drift(hosts);
  ASSERT_EQ(r.drifts.size(), 1u);
  EXPECT_EQ(r.drifts[0].area, "network");
  EXPECT_EQ(r.drifts[0].importance, DriftImportance::medium);
  EXPECT_EQ(r.drifts[0].action, "set it on b as the fleet has it: sysctl -w net.ipv4.tcp_rmem='4096 131072 6291456'");
}

TEST(ConfigDrift, FewHostsOrEmptySnapshots) {
  EXPECT_TRUE(find_config_drift({}).drifts.empty());
  const DriftReport one = find_config_drift({fleet()[0]});
  EXPECT_TRUE(one.drifts.empty());
  EXPECT_EQ(one.same, 8u);
  const DriftReport empty = find_config_drift({{"a", {}}, {"b", {}}, {"c", {}}});
  EXPECT_TRUE(empty.drifts.empty());
  EXPECT_EQ(empty.same, 0u);
}

TEST(ConfigDrift, EveryClassHasAnActionNamingTheHosts) {
  const char* keys[] = {"net.eth0.duplex", "net.eth0.operstate", "rdma.mlx5_0.port1.state", "rdma.mlx5_0.port1.rate",
                        "rdma.mlx5_0.fw_ver", "gpu.0.pcie.current_link_width", "gpu.0.power_limit_w",
                        "gpu.0.applications_clocks.sm_mhz", "gpu.0.persistence_mode", "gpu.0.ecc_mode.current",
                        "gpu.count", "gpu.driver_version", "smt.active", "cpu.online", "thp.enabled",
                        "kernel.numa_balancing", "vm.nr_hugepages", "hugepages.2048kB.nr_hugepages",
                        "driver.mlx5_core.version", "kernel.cmdline", "cpu.microcode", "net.core.rmem_max",
                        "net.ipv4.tcp_congestion_control", "vm.max_map_count", "vm.dirty_ratio",
                        "kernel.nmi_watchdog", "some.new.key"};
  for (const char* key : keys) {
    auto hosts = fleet();
    for (auto& h : hosts) h.config[key] = "2";
    hosts[3].config[key] = "1";
    const DriftReport r = find_config_drift(hosts);
    const ConfigDrift* d = find(r, key);
    ASSERT_NE(d, nullptr) << key;
    EXPECT_NE(d->action.find(" d"), std::string::npos) << key << ": " << d->action;
    EXPECT_EQ(d->action.find('{'), std::string::npos) << key << ": a placeholder left: " << d->action;
    EXPECT_FALSE(d->why.empty()) << key;
    EXPECT_GT(d->score, 0) << key;
  }
}

}  // namespace
}  // namespace reveal
