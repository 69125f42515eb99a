#include "telemetry/perf/software.h"

namespace reveal::telemetry {
namespace {
std::vector<PerfEvent> software_events() {
  return {
      {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, "count",
       Subsystem::cpu, "context switches, all CPUs"},
      {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0, 0, "count",
       Subsystem::cpu, "task migrations between CPUs"},
      {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, 0, "count",
       Subsystem::memory, "page faults (minor and major), all CPUs"},
  };
}
}  // namespace

ProbeStatus PerfSoftwareProbe::open(const std::filesystem::path& root) {
  return open_perf_probe(software_events(), root, groups_, channels_);
}

}  // namespace reveal::telemetry
