// CPU and wall cost of each NVML read the nvml probe makes, on the live driver.
//
// usage: reveal_nvml_cost [REPEATS=50] [LIBRARY]
// For GPU 0, runs every read of the probe's discovery list REPEATS times and prints per call:
// CPU time of this process (user + system, CLOCK_PROCESS_CPUTIME_ID: NVML's ioctls are system
// time) and wall time, both medians over the repeats, plus the NVML status. This is how the
// cost of the nvml probe per tick is broken down (docs/BENCHMARKS.md, "NVML probe cost").
// Then the XID poll (nvmlEventSetWait_v2 with timeout 0, as poll_events() makes it) and whole
// probe ticks (NvmlProbe::sample + poll_events over all GPUs, REPEATS ticks 0.5 s apart): with
// the slow reads every tick, and with the default slow interval (its first tick is the slow one
// and is printed apart).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <chrono>
#include <thread>

#include "telemetry/nvml/nvml_library.h"
#include "telemetry/nvml/nvml_probe.h"
#include "telemetry/nvml/nvml_reads.h"

using namespace reveal::telemetry::nvml;

namespace {
double now(clockid_t c) {
  timespec ts{};
  clock_gettime(c, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
  const std::string path = argc > 2 ? argv[2] : default_library_path();
  NvmlLibrary lib;
  std::string err;
  if (!lib.load(path, &err)) {
    std::fprintf(stderr, "nvml_cost: %s\n", err.c_str());
    return 3;
  }
  if (lib.Init() != NVML_SUCCESS) {
    std::fprintf(stderr, "nvml_cost: nvmlInit_v2 failed\n");
    return 3;
  }
  GpuState gpu;
  gpu.label = "gpu0";
  if (lib.DeviceGetHandleByIndex(0, &gpu.device) != NVML_SUCCESS) {
    std::fprintf(stderr, "nvml_cost: no GPU 0\n");
    return 3;
  }
  struct Named {
    const char* name;
    Read read;
  };
  std::vector<Named> reads = {
      {"utilization", {Op::utilization}},
      {"memory", {Op::memory}},
      {"clock sm", {Op::clock, NVML_CLOCK_SM}},
      {"clock mem", {Op::clock, NVML_CLOCK_MEM}},
      {"pstate", {Op::pstate}},
      {"power_usage", {Op::power_usage}},
      {"power_limit", {Op::power_limit}},
      {"temperature", {Op::temperature}},
      {"fan_speed", {Op::fan_speed}},
      {"throttle", {Op::throttle}},
      {"pcie_throughput tx", {Op::pcie_throughput, NVML_PCIE_UTIL_TX_BYTES}},
      {"pcie_throughput rx", {Op::pcie_throughput, NVML_PCIE_UTIL_RX_BYTES}},
      {"pcie_bytes tx (field)", {Op::pcie_bytes, int(NVML_FI_DEV_PCIE_COUNT_TX_BYTES), 64}},
      {"pcie_bytes rx (field)", {Op::pcie_bytes, int(NVML_FI_DEV_PCIE_COUNT_RX_BYTES), 64}},
      {"pcie_gen_current", {Op::pcie_gen_current}},
      {"pcie_gen_max", {Op::pcie_gen_max}},
      {"pcie_width_current", {Op::pcie_width_current}},
      {"pcie_width_max", {Op::pcie_width_max}},
      {"ecc sbe vol", {Op::ecc, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC}},
      {"ecc dbe agg", {Op::ecc, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC}},
      {"retired_pages", {Op::retired_pages, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS}},
      {"remapped_rows", {Op::remapped_rows}},
      {"nvlink_error l0", {Op::nvlink_error, NVML_NVLINK_ERROR_DL_REPLAY, 0, 0}},
      {"nvlink_throughput l0", {Op::nvlink_throughput, int(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX), 0, 0}},
  };
  // GPM: two samples, as the probe keeps them.
  if (lib.GpmSampleAlloc && lib.GpmSampleGet && lib.GpmMetricsGet &&
      lib.GpmSampleAlloc(&gpu.gpm.samples[0]) == NVML_SUCCESS &&
      lib.GpmSampleAlloc(&gpu.gpm.samples[1]) == NVML_SUCCESS &&
      lib.GpmSampleGet(gpu.device, gpu.gpm.samples[0]) == NVML_SUCCESS) {
    gpu.gpm.latest = 0;
    gpu.gpm.request = std::make_unique<nvmlGpmMetricsGet_t>();
    reads.push_back({"gpm (sample + 4 metrics)", {Op::gpm}});
  }
  double out[16];
  // Reads made once per tick, ticks 0.5 s apart, as the recorder makes them (a driver may cost
  // more after an idle gap than in back-to-back calls): medians over the ticks.
  {
    std::vector<std::vector<double>> cpu(reads.size());
    for (int t = 0; t < std::min(repeats, 15); ++t) {
      for (std::size_t i = 0; i < reads.size(); ++i) {
        if (reads[i].read.op == Op::pcie_throughput) continue;  // 20 ms each: measured below
        const double c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        execute(lib, gpu, reads[i].read, out);
        cpu[i].push_back((now(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    std::printf("%-26s %12s (one call per tick, ticks 0.5 s apart)\n", "read", "cpu_us");
    double sum = 0;
    for (std::size_t i = 0; i < reads.size(); ++i)
      if (!cpu[i].empty()) {
        std::printf("%-26s %12.1f\n", reads[i].name, median(cpu[i]));
        sum += median(cpu[i]);
      }
    std::printf("%-26s %12.1f\n\n", "sum", sum);
  }
  double total_cpu = 0, total_wall = 0;
  std::printf("%-26s %12s %12s %s\n", "read", "cpu_us", "wall_us", "status");
  for (const auto& r : reads) {
    std::vector<double> cpu, wall;
    nvmlReturn_t st = NVML_SUCCESS;
    for (int i = 0; i < repeats; ++i) {
      const double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
      st = execute(lib, gpu, r.read, out);
      cpu.push_back((now(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6);
      wall.push_back((now(CLOCK_MONOTONIC) - w0) * 1e6);
    }
    const double c = median(cpu), w = median(wall);
    if (st == NVML_SUCCESS) total_cpu += c, total_wall += w;
    std::printf("%-26s %12.1f %12.1f %s\n", r.name, c, w, lib.error_string(st).c_str());
  }
  std::printf("%-26s %12.1f %12.1f (successful reads, one of each)\n", "total", total_cpu, total_wall);

  // Both PCIe byte counters in one nvmlDeviceGetFieldValues call (the probe makes one call per
  // field): is the cost per call or per field?
  if (lib.DeviceGetFieldValues) {
    std::vector<double> cpu, wall;
    nvmlReturn_t st = NVML_SUCCESS;
    for (int i = 0; i < repeats; ++i) {
      nvmlFieldValue_t v[2]{};
      v[0].fieldId = NVML_FI_DEV_PCIE_COUNT_TX_BYTES;
      v[1].fieldId = NVML_FI_DEV_PCIE_COUNT_RX_BYTES;
      const double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
      st = lib.DeviceGetFieldValues(gpu.device, 2, v);
      cpu.push_back((now(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6);
      wall.push_back((now(CLOCK_MONOTONIC) - w0) * 1e6);
      if (st == NVML_SUCCESS) st = v[0].nvmlReturn != NVML_SUCCESS ? v[0].nvmlReturn : v[1].nvmlReturn;
    }
    std::printf("%-26s %12.1f %12.1f %s\n", "pcie_bytes tx+rx (1 call)", median(cpu), median(wall),
                lib.error_string(st).c_str());
  }

  // The XID poll of poll_events(): one nvmlEventSetWait_v2 with timeout 0 on an empty set.
  nvmlEventSet_t set = nullptr;
  if (lib.EventSetCreate && lib.DeviceRegisterEvents && lib.EventSetWait && lib.EventSetFree &&
      lib.EventSetCreate(&set) == NVML_SUCCESS) {
    if (lib.DeviceRegisterEvents(gpu.device, nvmlEventTypeXidCriticalError, set) == NVML_SUCCESS) {
      std::vector<double> cpu, wall;
      for (int i = 0; i < repeats; ++i) {
        nvmlEventData_t data{};
        const double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
        lib.EventSetWait(set, &data, 0);
        cpu.push_back((now(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6);
        wall.push_back((now(CLOCK_MONOTONIC) - w0) * 1e6);
      }
      std::printf("%-26s %12.1f %12.1f\n", "xid poll (wait, timeout 0)", median(cpu), median(wall));
    }
    lib.EventSetFree(set);
  }
  lib.Shutdown();

  // Whole probe ticks, every GPU, as the recorder makes them.
  for (const double slow_interval : {0.0, reveal::telemetry::NvmlProbe::kSlowReadIntervalS}) {
    reveal::telemetry::NvmlProbe probe(path, slow_interval);
    const auto st = probe.open("/");
    if (!st.available) {
      std::fprintf(stderr, "nvml_cost: probe unavailable: %s\n", st.reason.c_str());
      return 3;
    }
    std::vector<double> out(probe.channels().size());
    std::vector<reveal::Event> events;
    std::vector<double> cpu;
    double first = 0;
    for (int i = 0; i < repeats; ++i) {
      const double c0 = now(CLOCK_PROCESS_CPUTIME_ID);
      probe.sample(out);
      probe.poll_events(0, events);
      const double c = (now(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6;
      if (i == 0) first = c;
      else cpu.push_back(c);
      events.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    if (slow_interval == 0)
      std::printf("probe tick, every read (%zu channels): median %.1f CPU us\n", out.size(), median(cpu));
    else
      std::printf("probe tick, slow reads every %.0f s: first (slow) tick %.1f CPU us, the others median %.1f CPU us\n",
                  slow_interval, first, median(cpu));
  }
  return 0;
}
