// Configuration drift across hosts; contract and ranking in reveal/config_drift.h.
#include "reveal/config_drift.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>

#include "reveal/glob.h"

namespace reveal {
namespace {

// One class of keys: the first whose pattern (reveal/glob.h) matches a key gives its area,
// importance and texts. In `action`, {m} stands for the majority's value, {dev} for the key's
// second dotted part (the interface, device or GPU index), {key} for the key, {leaf} for its last
// dotted part, {hosts} for the minority's hosts.
struct KeyClass {
  const char* pattern;
  const char* area;
  DriftImportance importance;
  bool lower_is_slower;  // numeric: a minority below the majority is the worse side
  const char* why;
  const char* action;
};

constexpr DriftImportance kHigh = DriftImportance::high, kMedium = DriftImportance::medium,
                          kLow = DriftImportance::low;

constexpr KeyClass kClasses[] = {
    {"net.*.mtu", "network", kHigh, true,
     "hosts of one job with different MTUs fragment, or silently drop, the larger packets between them",
     "set the MTU the rest of the fleet has on {hosts}: ip link set dev {dev} mtu {m}"},
    {"net.*.speed", "network", kHigh, true, "the link negotiated another speed than the fleet's",
     "check the cable, transceiver and switch port of {dev} on {hosts} (ethtool {dev}); the fleet runs {m} Mb/s"},
    {"net.*.duplex", "network", kHigh, false, "a half-duplex link collides and retransmits under load",
     "check the autonegotiation of {dev} on {hosts} (ethtool {dev}); the fleet runs {m} duplex"},
    {"net.*.operstate", "network", kHigh, false, "the interface is not in the state the fleet's is",
     "check the link of {dev} on {hosts} (ip link show {dev}, the cable and switch port); the fleet's is {m}"},
    {"net.*.pcie.current_link_*", "interconnect", kHigh, true,
     "the NIC's PCIe link trained narrower or slower than the fleet's, which caps its bandwidth",
     "reseat the NIC {dev} on {hosts} or check its slot, riser and BIOS settings (lspci -vv: LnkSta); the fleet's "
     "link is {m}"},
    {"net.*.pcie.max_link_*", "interconnect", kMedium, true, "the NIC sits in a slot or is a model of another PCIe class",
     "check the NIC {dev}'s slot on {hosts} (lspci -vv: LnkCap); the fleet's is {m}"},
    {"rdma.*.port*.state", "interconnect", kHigh, false, "the RDMA port is not in the state the fleet's are",
     "check the port of {dev} on {hosts} and the subnet manager (ibstat {dev}); the fleet's state is {m}"},
    {"rdma.*.port*.phys_state", "interconnect", kHigh, false, "the RDMA port's physical link is not up as the fleet's",
     "check the cable and switch port of {dev} on {hosts} (ibstat {dev}); the fleet's is {m}"},
    {"rdma.*.port*.rate", "interconnect", kHigh, true, "the RDMA port runs at another rate than the fleet's",
     "check the cable and switch port of {dev} on {hosts} (ibstat {dev}); the fleet's rate is {m}"},
    {"rdma.*.port*.link_layer", "interconnect", kMedium, false, "the port runs another link layer (InfiniBand or Ethernet)",
     "check the port type of {dev} on {hosts} (mlxconfig LINK_TYPE); the fleet's is {m}"},
    {"rdma.*.fw_ver", "interconnect", kMedium, false, "HCA firmware versions differ within the fleet",
     "update the firmware of {dev} on {hosts} to the fleet's {m} (mlxfwmanager)"},
    {"gpu.*.pcie.current_link_width", "interconnect", kHigh, true,
     "the GPU's PCIe link trained narrower than the fleet's, which caps host-device copies",
     "reseat GPU {dev} on {hosts} or check its slot and riser (nvidia-smi -q -d PCIE); the fleet's width is x{m}"},
    {"gpu.*.pcie.*", "interconnect", kMedium, true, "the GPU sits in a slot of another PCIe class",
     "check GPU {dev}'s slot on {hosts} (nvidia-smi -q -d PCIE); the fleet's is {m}"},
    {"gpu.*.power_limit_w", "gpu", kHigh, true, "a lower power limit caps the GPU's clocks under load",
     "set GPU {dev}'s power limit on {hosts} to the fleet's: nvidia-smi -i {dev} -pl {m}"},
    {"gpu.*.enforced_power_limit_w", "gpu", kHigh, true, "a lower enforced power limit caps the GPU's clocks under load",
     "check GPU {dev}'s power limit on {hosts} (nvidia-smi -q -d POWER); the fleet's is {m} W"},
    {"gpu.*.applications_clocks.*", "gpu", kHigh, true, "application clocks set below the fleet's slow every kernel",
     "reset GPU {dev}'s application clocks on {hosts} (nvidia-smi -i {dev} -rac) or set the fleet's {m} MHz"},
    {"gpu.*.persistence_mode", "gpu", kMedium, false,
     "without persistence mode every job start re-initialises the GPU (seconds of delay)",
     "set persistence mode on {hosts} as the fleet has it: nvidia-smi -i {dev} -pm {m}"},
    {"gpu.*.ecc_mode.*", "gpu", kMedium, false, "ECC changes usable memory and memory bandwidth",
     "set ECC on GPU {dev} of {hosts} as the fleet has it ({m}: nvidia-smi -i {dev} -e 0|1, then reset the GPU)"},
    {"gpu.*.mig_mode.*", "gpu", kMedium, false, "a GPU in another MIG mode offers jobs other slices",
     "set MIG mode on GPU {dev} of {hosts} as the fleet has it ({m}: nvidia-smi -i {dev} -mig 0|1)"},
    {"gpu.*.compute_mode", "gpu", kMedium, false, "another compute mode admits other processes to the GPU",
     "set GPU {dev}'s compute mode on {hosts} to the fleet's {m} (nvidia-smi -i {dev} -c)"},
    {"gpu.count", "gpu", kHigh, false, "the host sees another number of GPUs than the fleet's (a GPU fell off the bus?)",
     "check nvidia-smi and the kernel log (XID 79) on {hosts}; the fleet's hosts see {m}"},
    {"gpu.*driver_version", "driver", kMedium, false, "the NVIDIA driver differs within the fleet",
     "install the fleet's NVIDIA driver on {hosts} ({m})"},
    {"gpu.*", "gpu", kMedium, false, "GPU software or settings differ within the fleet",
     "align {hosts} with the fleet's value ({m})"},
    {"cpu.governor", "cpu", kHigh, false, "another CPU frequency governor runs the cores at other clocks",
     "set the fleet's governor on {hosts}: cpupower frequency-set -g {m}"},
    {"cpu.cpu*.governor", "cpu", kHigh, false, "some cores run another frequency governor than the fleet's",
     "set the fleet's governor on {hosts}: cpupower frequency-set -g {m}"},
    {"smt.*", "cpu", kHigh, false, "SMT on or off changes how many threads share a core",
     "set SMT on {hosts} as the fleet has it ({m}: echo on|off > /sys/devices/system/cpu/smt/control)"},
    {"cpu.online", "cpu", kHigh, false, "other CPUs are online than on the fleet's hosts",
     "bring the fleet's CPUs ({m}) online on {hosts} (chcpu -e)"},
    {"cpu.offline", "cpu", kHigh, false, "some CPUs are offline where the fleet's are not",
     "bring the offline CPUs back on {hosts} (chcpu -e)"},
    {"cpu.model", "cpu", kLow, false, "the host has another CPU model than the fleet's",
     "run one job's ranks on alike hosts; {hosts} differ from the fleet's {m}"},
    {"cpu.microcode", "cpu", kLow, false, "CPU microcode versions differ within the fleet",
     "update the microcode on {hosts} to the fleet's {m}"},
    {"thp.*", "memory", kMedium, false, "transparent huge pages change page-fault and TLB costs",
     "set it on {hosts} as the fleet has it: echo {m} > /sys/kernel/mm/transparent_hugepage/{leaf}"},
    {"kernel.numa_balancing", "memory", kMedium, false, "automatic NUMA balancing migrates pages under the job",
     "set it on {hosts} as the fleet has it: sysctl kernel.numa_balancing={m}"},
    {"vm.nr_hugepages", "memory", kMedium, true, "fewer huge pages reserved than the fleet's",
     "reserve the fleet's huge pages on {hosts}: sysctl vm.nr_hugepages={m}"},
    {"hugepages.*", "memory", kMedium, true, "fewer huge pages of this size reserved than the fleet's",
     "reserve the fleet's {m} huge pages of {dev} on {hosts} (/sys/kernel/mm/hugepages/hugepages-{dev}/nr_hugepages)"},
    {"net.ipv4.tcp_congestion_control", "network", kMedium, false,
     "another TCP congestion control (cubic, bbr...) gets other throughput on lossy or long paths",
     "set it on {hosts} as the fleet has it: sysctl -w net.ipv4.tcp_congestion_control={m}"},
    {"net.ipv4.tcp_mtu_probing", "network", kMedium, false, "MTU probing decides whether a path MTU black hole stalls TCP",
     "set it on {hosts} as the fleet has it: sysctl -w net.ipv4.tcp_mtu_probing={m}"},
    {"net.core.*", "network", kMedium, true, "smaller socket buffers or queues cap throughput on fast links",
     "set it on {hosts} as the fleet has it: sysctl -w {key}='{m}'"},
    {"net.ipv4.*", "network", kMedium, true, "smaller socket buffers cap TCP throughput on fast links",
     "set it on {hosts} as the fleet has it: sysctl -w {key}='{m}'"},
    {"vm.zone_reclaim_mode", "memory", kMedium, false, "zone reclaim frees local memory instead of using another node's",
     "set it on {hosts} as the fleet has it: sysctl -w vm.zone_reclaim_mode={m}"},
    {"vm.max_map_count", "memory", kMedium, true, "too few memory maps make large jobs (and their loaders) fail",
     "set it on {hosts} as the fleet has it: sysctl -w vm.max_map_count={m}"},
    {"vm.dirty_*", "storage", kLow, false, "other writeback thresholds change when checkpoints stall on I/O",
     "set it on {hosts} as the fleet has it: sysctl -w {key}={m}"},
    {"kernel.nmi_watchdog", "other", kLow, false, "the NMI watchdog holds one hardware counter of every CPU",
     "set it on {hosts} as the fleet has it: sysctl -w kernel.nmi_watchdog={m}"},
    {"vm.swappiness", "memory", kLow, false, "swappiness differs within the fleet",
     "set it on {hosts} as the fleet has it: sysctl vm.swappiness={m}"},
    {"driver.nvidia.*", "driver", kMedium, false, "the NVIDIA driver differs within the fleet",
     "install the fleet's NVIDIA driver on {hosts} ({m})"},
    {"driver.*", "driver", kMedium, false, "a kernel module's version differs within the fleet",
     "install the fleet's {dev} driver on {hosts} ({m})"},
    {"kernel.osrelease", "kernel", kMedium, false, "another kernel runs other schedulers, drivers and defaults",
     "boot {hosts} into the fleet's kernel {m}"},
    {"kernel.cmdline", "kernel", kLow, false, "other boot parameters (isolcpus, iommu, mitigations...)",
     "compare /proc/cmdline on {hosts} with the fleet's: {m}"},
};

constexpr KeyClass kOther = {"*", "other", kLow, false, "the setting differs within the fleet",
                             "align {hosts} with the fleet's value: {m}"};

// Different on every host by nature: never drift. Besides boot ids and GPU UUIDs, the interfaces
// container runtimes and CNI plugins make per pod or VM, named after it (a Kubernetes node's
// veth/cali/lxc/gke/azv/eni… peers, a hypervisor's tap/vnet), each on one host only; a node's own
// bridges and tunnels (docker0, cni0, flannel.1, cilium_host) are alike on every host and stay.
constexpr const char* kSkipped[] = {"kernel.boot_id", "gpu.*.uuid", "net.veth*", "net.cali*", "net.lxc*",
                                    "net.gke*",       "net.azv*",   "net.eni*",  "net.tap*",  "net.vnet*"};

const KeyClass& class_of(std::string_view key) {
  for (const auto& c : kClasses)
    if (glob_match(c.pattern, key)) return c;
  return kOther;
}

bool skipped(std::string_view key) {
  for (const char* p : kSkipped)
    if (glob_match(p, key)) return true;
  return false;
}

// The number a value is compared by: its last number when it is a list of numbers only
// ("4096 131072 6291456", a socket buffer's min, default and max: the max), else its leading
// number ("8.0 GT/s PCIe" -> 8, "100 Gb/sec (4X EDR)" -> 100, "9000"); none without one.
std::optional<double> compared_number(const std::string& v) {
  const char* s = v.c_str();
  char* end = nullptr;
  const double first = std::strtod(s, &end);
  if (end == s) return std::nullopt;
  double last = first;
  for (;;) {
    while (*end == ' ') ++end;
    if (*end == '\0') return last;
    const char* from = end;
    last = std::strtod(from, &end);
    if (end == from) return first;  // text after the number: the leading number
  }
}

// The device a key is about, for {dev}: the interface of net.<if>.<field> keys (which may hold
// dots: a VLAN "eth0.100"), else the second dotted part (rdma.<dev>, gpu.<N>, driver.<module>,
// hugepages.<size>).
std::string dotted_part(const std::string& key, std::size_t i);
std::string device_of(const std::string& key) {
  if (key.rfind("net.", 0) == 0) {
    const std::size_t pcie = key.find(".pcie.", 4);
    const std::size_t end = pcie != std::string::npos ? pcie : key.rfind('.');
    if (end != std::string::npos && end > 4) return key.substr(4, end - 4);
  }
  return dotted_part(key, 1);
}

std::string dotted_part(const std::string& key, std::size_t i) {
  std::size_t from = 0;
  for (std::size_t k = 0; k < i; ++k) {
    from = key.find('.', from);
    if (from == std::string::npos) return {};
    ++from;
  }
  const std::size_t to = key.find('.', from);
  return key.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

void replace_all(std::string& s, std::string_view what, const std::string& with) {
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + with.size()))
    s.replace(at, what.size(), with);
}

std::string host_list(const std::vector<std::string>& hosts) {
  constexpr std::size_t kShown = 5;
  std::string out;
  for (std::size_t i = 0; i < hosts.size() && i < kShown; ++i) out += (i ? ", " : "") + hosts[i];
  if (hosts.size() > kShown) out += " and " + std::to_string(hosts.size() - kShown) + " more";
  return out;
}

std::string action_text(const KeyClass& c, const std::string& key, const DriftValue& majority,
                        const std::vector<DriftValue>& minority) {
  std::vector<std::string> hosts;
  bool all_absent = true;
  for (const auto& m : minority) {
    hosts.insert(hosts.end(), m.hosts.begin(), m.hosts.end());
    all_absent = all_absent && m.value.empty();
  }
  // The fleet has no such key: no value to set, only the odd hosts' own to question.
  std::string a = majority.value.empty()
                      ? "{key} = " + minority.front().value +
                            " only on {hosts}; the rest of the fleet has no such setting: check that it belongs there"
                      : c.action;
  // The odd hosts lack the key: the device, driver or setting is missing there.
  if (all_absent && !majority.value.empty())
    a = "{key} is missing on {hosts} (the rest of the fleet has it): check that the device, driver or setting is "
        "there, then " + a;
  replace_all(a, "{hosts}", host_list(hosts));
  replace_all(a, "{key}", key);
  replace_all(a, "{dev}", device_of(key));
  const std::size_t last_dot = key.rfind('.');
  replace_all(a, "{leaf}", last_dot == std::string::npos ? key : key.substr(last_dot + 1));
  replace_all(a, "{m}", drift_value_text(majority.value));
  return a;
}

}  // namespace

const char* to_string(DriftImportance i) {
  switch (i) {
    case DriftImportance::high:
      return "high";
    case DriftImportance::medium:
      return "medium";
    case DriftImportance::low:
      return "low";
  }
  return "low";
}

std::string config_text(std::string_view v) {
  constexpr std::size_t kMax = 1024;
  std::string out;
  const bool cut = v.size() > kMax;
  if (cut) v = v.substr(0, kMax - 3);
  out.reserve(v.size() + 3);
  for (char c : v) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  if (cut) out += "...";
  return out;
}

std::string drift_value_text(const std::string& value) { return value.empty() ? "(absent)" : value; }

namespace {

// A host whose CPUs run different governors has cpu.cpu<N>.governor keys instead of
// cpu.governor (reveal/host_config.h); as drift they are one setting: folded into
// cpu.governor = "mixed: performance on 3 CPUs, powersave on 1". Null when nothing to fold.
std::optional<ConfigSnapshot> fold_governors(const ConfigSnapshot& c) {
  std::map<std::string, std::size_t> governors;
  for (const auto& [k, v] : c)
    if (glob_match("cpu.cpu*.governor", k)) ++governors[v];
  if (governors.empty()) return std::nullopt;
  ConfigSnapshot out;
  for (const auto& [k, v] : c)
    if (!glob_match("cpu.cpu*.governor", k)) out.emplace(k, v);
  std::string v = governors.size() == 1 ? governors.begin()->first : "mixed:";
  if (governors.size() > 1) {
    bool first = true;
    for (const auto& [g, n] : governors) {
      v += (first ? " " : ", ") + g + " on " + std::to_string(n) + (n == 1 ? " CPU" : " CPUs");
      first = false;
    }
  }
  out["cpu.governor"] = std::move(v);
  return out;
}

}  // namespace

DriftReport find_config_drift(const std::vector<HostConfig>& given) {
  // Per-CPU governors folded (a copy only of the hosts that have them).
  std::vector<HostConfig> folded;
  std::vector<const HostConfig*> at;
  for (const auto& h : given) at.push_back(&h);
  for (std::size_t i = 0; i < given.size(); ++i)
    if (auto f = fold_governors(given[i].config)) {
      if (folded.capacity() == 0) folded.reserve(given.size());  // stable addresses
      folded.push_back({given[i].host, std::move(*f)});
      at[i] = &folded.back();
    }
  DriftReport r;
  r.hosts = given.size();
  // Every key any host has.
  std::map<std::string, std::size_t> keys;
  for (const HostConfig* h : at)
    for (const auto& [k, v] : h->config) ++keys[k];
  for (const auto& [key, holders] : keys) {
    if (skipped(key)) {
      ++r.skipped;
      continue;
    }
    // Hosts by value ("" = absent), values in first-seen order for a stable output; hosts by
    // index, named only where they are printed (not the majority's: memory stays that of the
    // snapshots, not keys x hosts names).
    std::vector<std::pair<std::string, std::vector<std::uint32_t>>> grouped;
    for (std::size_t i = 0; i < at.size(); ++i) {
      const auto it = at[i]->config.find(key);
      const std::string& v = it == at[i]->config.end() ? std::string() : it->second;
      auto slot = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) { return g.first == v; });
      if (slot == grouped.end()) {
        grouped.push_back({v, {}});
        slot = grouped.end() - 1;
      }
      slot->second.push_back(std::uint32_t(i));
    }
    (void)holders;
    if (grouped.size() <= 1) {
      ++r.same;
      continue;
    }
    std::stable_sort(grouped.begin(), grouped.end(),
                     [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    const auto named = [&](std::size_t g, bool with_names) {
      DriftValue d{grouped[g].first, {}, grouped[g].second.size()};
      if (with_names)
        for (const std::uint32_t i : grouped[g].second) d.hosts.push_back(at[i]->host);
      return d;
    };
    const bool has_majority = 2 * grouped[0].second.size() > given.size() &&
                              grouped[0].second.size() - grouped[1].second.size() >=
                                  std::max<std::size_t>(1, (given.size() + 4) / 5);
    std::vector<DriftValue> values;
    for (std::size_t g = 0; g < grouped.size(); ++g) values.push_back(named(g, g > 0 || !has_majority));
    // No majority, or one too narrow to call the rest a minority (458 hosts against 457).
    if (!has_majority) {
      r.split.push_back({key, std::move(values)});
      continue;
    }
    const KeyClass& c = class_of(key);
    ConfigDrift d;
    d.key = key;
    d.area = c.area;
    d.importance = c.importance;
    d.majority = std::move(values.front());
    d.minority.assign(std::make_move_iterator(values.begin() + 1), std::make_move_iterator(values.end()));
    std::size_t minority_hosts = 0;
    for (const auto& m : d.minority) minority_hosts += m.count;
    const double importance = c.importance == kHigh ? 1.0 : c.importance == kMedium ? 0.6 : 0.3;
    // How the minority differs: by its most common value.
    const DriftValue& odd = d.minority.front();
    double how = 1.0;
    if (odd.value.empty())
      how = 0.8;  // the key is missing where the fleet has it
    else if (d.majority.value.empty())
      how = 0.5;  // only the minority has the key
    else if (c.lower_is_slower) {
      const auto mine = compared_number(odd.value), theirs = compared_number(d.majority.value);
      if (mine && theirs && *mine > *theirs) how = 0.8;
    }
    d.score = importance * how * (1.0 - 0.5 * double(minority_hosts) / double(given.size()));
    d.why = c.why;
    d.action = action_text(c, key, d.majority, d.minority);
    r.drifts.push_back(std::move(d));
  }
  std::stable_sort(r.drifts.begin(), r.drifts.end(), [](const ConfigDrift& a, const ConfigDrift& b) {
    return a.score != b.score ? a.score > b.score : a.key < b.key;
  });
  return r;
}

}  // namespace reveal
