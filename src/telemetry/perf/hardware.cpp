#include "telemetry/perf/hardware.h"

#include <linux/perf_event.h>

#include <array>

namespace reveal::telemetry {
namespace {
constexpr std::array<PerfEventSpec, 6> kHardware{{
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles", Subsystem::cpu,
     "CPU core cycles, all CPUs"},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "count", Subsystem::cpu,
     "instructions retired"},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "count", Subsystem::cpu,
     "branch instructions retired"},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "count", Subsystem::cpu,
     "mispredicted branches"},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "count",
     Subsystem::memory, "last-level cache references"},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "count", Subsystem::memory,
     "last-level cache misses"},
}};
}  // namespace

ProbeStatus PerfHardwareProbe::open(const std::filesystem::path& root) {
  return open_perf_probe(kHardware, root, /*drop_unsupported=*/true, groups_, channels_);
}

}  // namespace reveal::telemetry
