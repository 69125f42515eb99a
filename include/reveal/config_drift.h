// Configuration drift across hosts (issue #22): the settings on which a minority of hosts differs
// from the majority, ranked by how likely they are to change how a workload runs, each with the
// action that aligns it. `reveal config drift` prints it for stores, live roots or the agents
// behind a Prometheus server (their reveal_host_config_info series, reveal/agent.h).
//
// Input: one ConfigSnapshot per host (reveal/host_config.h: dotted key -> value, e.g.
// "net.eth0.mtu" -> "9000"). Per key the hosts are grouped by value; a host without the key
// holds the value "" (shown as "(absent)"). The majority is the value more than half the hosts
// hold; every other value is a drift held by a minority. A key on which no value has more than
// half the hosts is "split" (three kernels across five hosts; any difference between two hosts),
// and so is one whose most common value leads the next by fewer than a fifth of the hosts (at
// least 1): 458 hosts on one kernel and 457 on another of 1000 are two halves, not a drift of 457.
// Keys that differ between hosts by nature are left out: kernel.boot_id, the GPUs' UUIDs
// (gpu.N.uuid) and the interfaces container runtimes make per pod or VM (net.veth*, cali*, lxc*,
// gke*, azv*, eni*, tap*, vnet*: a Kubernetes node's pod interfaces are on that node only). A host whose CPUs run different governors (cpu.cpu<N>.governor keys instead of
// cpu.governor) is compared as cpu.governor = "mixed: performance on 3 CPUs, powersave on 1 CPU".
// Actions: the class's, with the fleet's value and the odd hosts; when the odd hosts lack the key,
// prefixed "<key> is missing on <hosts> ... then"; when the fleet lacks it (only the odd hosts
// have it), "<key> = <value> only on <hosts>; ... check that it belongs there".
//
// Ranking: each key falls in a class (the table kClasses in config_drift.cpp is the reference) with
// an area (network, interconnect, cpu, memory, storage, gpu, driver, kernel, other) and an
// importance; broadly:
//   high    known to change a job's speed by itself: MTU, link speed/duplex/state, the current
//           PCIe link of NICs and GPUs, RDMA port state, physical state and rate, the CPU
//           governor, SMT, online CPUs, GPU power limits and application clocks, the GPU count
//   medium  often matters: a NIC's or GPU's maximum PCIe link (its slot), RDMA link layer and
//           firmware, THP, NUMA balancing and zone reclaim, huge pages, memory map limits,
//           socket buffers, queues and TCP congestion control, driver versions, the kernel
//           release, GPU persistence/ECC/MIG/compute mode and the other GPU keys
//   low     rarely matters alone: kernel command line, swappiness, writeback ratios, the NMI
//           watchdog, CPU model and microcode, any key no class names
// score = importance (1, 0.6, 0.3) × how the minority differs (a different value 1; the key
//         missing on the minority 0.8, e.g. a driver not loaded; a key only the minority has 0.5,
//         e.g. an extra interface) × (1 − the minority's share of the hosts / 2), so that a
//         setting only one host of 64 has ranks above the same setting on half of them. For numeric
//         settings where less is slower (MTU, link speed and width, PCIe generation, RDMA rate,
//         power limits, clocks, huge pages, socket buffers, memory maps) a minority below the
//         majority counts in full and one above at 0.8. Drifts are sorted by score, then key.
//
// Errors: none (any snapshots, even empty; fewer than two hosts give no drift). Cost: one pass
// over the keys of all hosts, O(hosts × keys × log) time; memory: the snapshots, a host index per
// host and key being grouped, and the names of the hosts printed (minorities and split keys).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/recording.h"

namespace reveal {

struct HostConfig {
  std::string host;       // a label: a store's path, a root directory, a Prometheus instance
  ConfigSnapshot config;  // reveal/host_config.h keys
};

enum class DriftImportance { low, medium, high };
const char* to_string(DriftImportance i);

struct DriftValue {
  std::string value;               // "" = the key is absent on these hosts
  std::vector<std::string> hosts;  // their labels, in input order (empty for a drift's majority)
  std::size_t count = 0;           // how many hosts hold it (hosts.size() where they are named)
};

struct ConfigDrift {
  std::string key;
  std::string area;  // network, interconnect, cpu, memory, storage, gpu, driver, kernel, other
  DriftImportance importance = DriftImportance::low;
  double score = 0;                  // the ranking above, in (0, 1]
  DriftValue majority;               // the value more than half the hosts hold (count only, no names)
  std::vector<DriftValue> minority;  // every other value, most hosts first
  std::string why;                   // why such a difference matters, one sentence
  std::string action;                // what aligns it, with the command, naming the minority's hosts
};

struct SplitKey {
  std::string key;
  std::vector<DriftValue> values;  // most hosts first
};

struct DriftReport {
  std::size_t hosts = 0;
  std::vector<ConfigDrift> drifts;  // by score, highest first
  std::vector<SplitKey> split;      // keys without a majority (or one less than a fifth of the hosts ahead), by key
  std::size_t same = 0;             // keys every host holds with one value
  std::size_t skipped = 0;          // keys left out as different by nature (boot_id, GPU UUIDs, pod interfaces)
};

DriftReport find_config_drift(const std::vector<HostConfig>& hosts);

// A key, value or host name as drift compares and prints it, and as agents expose it on /metrics
// (prometheus_config_label, reveal/agent.h): printable ASCII, any other byte '?', at most 1024
// bytes (a longer one is cut to 1021 and ends "...").
std::string config_text(std::string_view v);

// How a value prints: "" -> "(absent)".
std::string drift_value_text(const std::string& value);

}  // namespace reveal
