#include "telemetry/perf/pfm.h"

#include <perfmon/pfmlib_perf_event.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace reveal::telemetry {
namespace {
int pfm_init_result() {
  static std::once_flag once;
  static int result = PFM_ERR_NOINIT;
  std::call_once(once, [] { result = pfm_initialize(); });
  return result;
}
}  // namespace

std::string pfm_status() {
  const int r = pfm_init_result();
  return r == PFM_SUCCESS ? std::string() : std::string("libpfm4: pfm_initialize: ") + pfm_strerror(r);
}

std::string pfm_encode(const std::string& pfm_name, PerfEvent& ev) {
  if (std::string why = pfm_status(); !why.empty()) return why;
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof(arg));
  arg.size = sizeof(arg);
  arg.attr = &attr;
  const int r = pfm_get_os_event_encoding(pfm_name.c_str(), PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
  if (r != PFM_SUCCESS) return "libpfm4: " + pfm_name + ": " + pfm_strerror(r);
  ev.type = attr.type;
  ev.config = attr.config;
  ev.config1 = attr.config1;
  ev.config2 = attr.config2;
  return {};
}

std::optional<PmuCounters> pfm_core_counters() {
  if (!pfm_status().empty()) return std::nullopt;
  std::optional<PmuCounters> out;
  int i;
  pfm_for_all_pmus(i) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof(info));
    info.size = sizeof(info);
    if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(i), &info) != PFM_SUCCESS) continue;
    if (!info.is_present || info.type != PFM_PMU_TYPE_CORE || info.num_cntrs <= 0) continue;
    if (!out) {
      out = PmuCounters{info.num_cntrs, info.num_fixed_cntrs, std::string("libpfm4 ") + info.name};
    } else {
      out->generic = std::min(out->generic, info.num_cntrs);
      out->fixed = std::min(out->fixed, info.num_fixed_cntrs);
      out->source += std::string("+") + info.name;
    }
  }
  return out;
}

}  // namespace reveal::telemetry
