// Internal: the libpfm4 calls the perf probes make (Debian libpfm4-dev, perfmon2 project;
// man libpfm(3), pfm_get_os_event_encoding(3), pfm_get_pmu_info(3)).
//
// pfm_initialize() runs once per process, on first use (std::call_once); its failure is
// remembered and returned as the reason by every call. libpfm4 knows the event tables of
// the CPU it runs on (detected from CPUID) plus the generic "perf::" and "perf_raw::" PMUs.
#pragma once

#include <optional>
#include <string>

#include "telemetry/perf/pmu.h"

namespace reveal::telemetry {

// "" when libpfm4 initialised, else why not.
std::string pfm_status();

// Encodes `pfm_name` for perf_event_open (PFM_OS_PERF_EVENT, user + kernel): sets ev.type
// (PERF_TYPE_RAW for core events) and ev.config/config1/config2. Returns "" or
// "libpfm4: <name>: <pfm_strerror>".
std::string pfm_encode(const std::string& pfm_name, PerfEvent& ev);

// Counter counts of the present core PMU(s) (smallest over several), or nullopt when libpfm4
// did not initialise or found no core PMU (VMs whose CPUID hides the PMU, non-x86 hosts it
// does not know).
std::optional<PmuCounters> pfm_core_counters();

}  // namespace reveal::telemetry
