#include "telemetry/perf/software.h"

#include <linux/perf_event.h>

#include <array>

namespace reveal::telemetry {
namespace {
constexpr std::array<PerfEventSpec, 3> kSoftware{{
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "count",
     Subsystem::cpu, "context switches, all CPUs"},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "count", Subsystem::cpu,
     "task migrations between CPUs"},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "count", Subsystem::memory,
     "page faults (minor and major), all CPUs"},
}};
}  // namespace

ProbeStatus PerfSoftwareProbe::open(const std::filesystem::path& root) {
  return open_perf_probe(kSoftware, root, /*drop_unsupported=*/false, groups_, channels_);
}

}  // namespace reveal::telemetry
