// Internal: what the perf probes need to know about the core PMU before opening anything:
// the CPU vendor and model (which vendor event table applies), whether the NMI watchdog holds
// a counter, how many counters exist, and how to split events into groups that fit.
//
// Counter budget (the rule every hardware group obeys, so no group asks for more counters
// than exist and is then never scheduled):
//   generic budget = generic counters − 1 when <root>/proc/sys/kernel/nmi_watchdog is 1
//                    (the watchdog keeps a cycles event pinned on every CPU), at least 1;
//   cost of an event = 1 generic counter, except cycles and instructions when the PMU has
//                    at least 2 fixed counters (Intel architectural PMU: IA32_FIXED_CTR0
//                    instructions retired, IA32_FIXED_CTR1 unhalted core cycles; Intel SDM
//                    vol. 3B §20.2.2), which cost 0;
//   Σ cost over a group ≤ generic budget.
// Counter counts come from libpfm4 (pfm_get_pmu_info: num_cntrs, num_fixed_cntrs of the
// present core PMU, the smallest if several, e.g. hybrid parts) or, without it, a conservative
// 4 generic and 0 fixed. Groups beyond the first time-share the PMU (the kernel rotates them;
// PerfGroups undoes that with TOTAL_TIME_ENABLED/RUNNING).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/perf/perf_group.h"

namespace reveal::telemetry {

enum class CpuVendor : std::uint8_t { unknown, intel, amd };

struct CpuId {
  CpuVendor vendor = CpuVendor::unknown;
  std::string vendor_id;  // as in /proc/cpuinfo, e.g. "GenuineIntel", "AuthenticAMD"
  int family = -1, model = -1;
};

// First processor of <root>/proc/cpuinfo (vendor_id, cpu family, model), else the live
// /proc/cpuinfo (perf counts the live CPU); unknown fields stay -1 / unknown.
CpuId read_cpu_id(const std::filesystem::path& root);

// <root>/proc/sys/kernel/nmi_watchdog, else the live file; true ("holds a counter") when it
// reads 1 or cannot be read at all (the conservative answer).
bool nmi_watchdog_on(const std::filesystem::path& root);

struct PmuCounters {
  int generic = 4;
  int fixed = 0;
  std::string source = "default (no libpfm4 core PMU)";
};

int generic_budget(const PmuCounters& c, bool nmi_watchdog);
// Generic counters `ev` occupies (0 or 1), see the rule above.
int counter_cost(const PerfEvent& ev, const PmuCounters& c);

// Splits events into groups. `bundles` lists event indices to keep in one group where they
// fit (ratio partners such as cycles/instructions, so a ratio is taken over the same time
// slices); bundles are placed first-fit, in order, into groups whose Σ cost ≤ budget; a
// bundle bigger than the budget is split across groups. budget < 1 is treated as 1.
std::vector<std::vector<std::size_t>> pack_groups(const std::vector<std::vector<std::size_t>>& bundles,
                                                  const std::vector<int>& cost, int budget);

// Encodes a libpfm4 event string (e.g. "CYCLE_ACTIVITY:STALLS_L3_MISS", "perf_raw::r40")
// into ev.type/config/config1/config2; returns "" on success, else the reason.
using PerfEncoder = std::function<std::string(const std::string& pfm_name, PerfEvent& ev)>;

// What the hardware and uncore probes take from the outside world; tests substitute all three.
struct PerfEnv {
  PerfSyscalls* sys = nullptr;                              // nullptr: the live kernel
  PerfEncoder encode;                                       // empty: libpfm4 (pfm.h)
  std::function<std::optional<PmuCounters>()> counters;    // empty: libpfm4; nullopt: default
};

}  // namespace reveal::telemetry
