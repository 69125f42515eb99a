#include "telemetry/perf/hardware.h"

#include <array>

#include "telemetry/perf/pfm.h"

namespace reveal::telemetry {
namespace {

constexpr std::uint64_t cache_config(std::uint64_t cache, std::uint64_t result) {
  return cache | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (result << 16);
}

// A candidate event and the bundle (ratio partners kept in one group) it belongs to.
struct Candidate {
  PerfEvent ev;
  int bundle;
};

std::vector<Candidate> generic_events() {
  using S = Subsystem;
  constexpr auto hw = PERF_TYPE_HARDWARE, hc = PERF_TYPE_HW_CACHE;
  constexpr auto acc = PERF_COUNT_HW_CACHE_RESULT_ACCESS, miss = PERF_COUNT_HW_CACHE_RESULT_MISS;
  return {
      {{"cycles", hw, PERF_COUNT_HW_CPU_CYCLES, 0, 0, "cycles", S::cpu, "CPU core cycles (unhalted), all CPUs"}, 0},
      {{"instructions", hw, PERF_COUNT_HW_INSTRUCTIONS, 0, 0, "count", S::cpu, "instructions retired"}, 0},
      {{"branches", hw, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 0, 0, "count", S::cpu, "branch instructions retired"}, 1},
      {{"branch-misses", hw, PERF_COUNT_HW_BRANCH_MISSES, 0, 0, "count", S::cpu, "mispredicted branches"}, 1},
      {{"cache-references", hw, PERF_COUNT_HW_CACHE_REFERENCES, 0, 0, "count", S::memory,
        "last-level cache references"}, 2},
      {{"cache-misses", hw, PERF_COUNT_HW_CACHE_MISSES, 0, 0, "count", S::memory, "last-level cache misses"}, 2},
      {{"L1-dcache-loads", hc, cache_config(PERF_COUNT_HW_CACHE_L1D, acc), 0, 0, "count", S::memory,
        "L1 data cache loads"}, 3},
      {{"L1-dcache-load-misses", hc, cache_config(PERF_COUNT_HW_CACHE_L1D, miss), 0, 0, "count", S::memory,
        "L1 data cache load misses"}, 3},
      {{"LLC-loads", hc, cache_config(PERF_COUNT_HW_CACHE_LL, acc), 0, 0, "count", S::memory,
        "last-level cache loads"}, 4},
      {{"LLC-load-misses", hc, cache_config(PERF_COUNT_HW_CACHE_LL, miss), 0, 0, "count", S::memory,
        "last-level cache load misses (served by memory or a remote cache)"}, 4},
      {{"dTLB-loads", hc, cache_config(PERF_COUNT_HW_CACHE_DTLB, acc), 0, 0, "count", S::memory,
        "data TLB lookups by loads"}, 5},
      {{"dTLB-load-misses", hc, cache_config(PERF_COUNT_HW_CACHE_DTLB, miss), 0, 0, "count", S::memory,
        "data TLB misses by loads (page walks)"}, 5},
      {{"stalled-cycles-frontend", hw, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 0, 0, "cycles", S::cpu,
        "cycles the frontend delivered no instructions"}, 6},
      {{"stalled-cycles-backend", hw, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 0, 0, "cycles", S::cpu,
        "cycles the backend accepted no instructions"}, 6},
  };
}

bool intel_core(const CpuId& id) { return id.vendor == CpuVendor::intel && id.family == 6; }
bool amd_zen(const CpuId& id) {
  return id.vendor == CpuVendor::amd && (id.family == 0x17 || id.family == 0x19 || id.family == 0x1a);
}
bool amd_zen1_3(const CpuId& id) {  // Zen 4 is family 19h models 10h-1Fh, 60h-7Fh, A0h-AFh
  if (id.vendor != CpuVendor::amd) return false;
  if (id.family == 0x17) return true;
  const int m = id.model;
  return id.family == 0x19 && !((m >= 0x10 && m <= 0x1f) || (m >= 0x60 && m <= 0x7f) || (m >= 0xa0 && m <= 0xaf));
}

struct VendorEvent {
  bool (*applies)(const CpuId&);
  std::array<const char*, 2> pfm;  // libpfm4 names, tried in order (nullptr: none)
  const char* name;
  const char* unit;
  Subsystem subsystem;
  const char* help;
  int bundle;
};

constexpr std::array<VendorEvent, 5> kVendorEvents{{
    {intel_core, {"CYCLE_ACTIVITY:STALLS_L3_MISS", nullptr}, "cycle_activity.stalls_l3_miss", "cycles",
     Subsystem::memory, "execution stall cycles while an L3-miss demand load is outstanding", 7},
    {intel_core, {"CYCLE_ACTIVITY:STALLS_TOTAL", nullptr}, "cycle_activity.stalls_total", "cycles", Subsystem::cpu,
     "execution stall cycles, any cause", 7},
    {amd_zen, {"LS_DISPATCH:LD_DISPATCH", nullptr}, "ls_dispatch.ld_dispatch", "count", Subsystem::memory,
     "load operations dispatched to the load-store unit", 8},
    {amd_zen, {"LS_DISPATCH:STORE_DISPATCH", nullptr}, "ls_dispatch.store_dispatch", "count", Subsystem::memory,
     "store operations dispatched to the load-store unit", 8},
    {amd_zen1_3, {"LS_DC_ACCESSES", "perf_raw::r40"}, "ls_dc_accesses", "count", Subsystem::memory,
     "data cache accesses by loads and stores", 9},
}};

}  // namespace

PerfHardwareProbe::PerfHardwareProbe(PerfEnv env) : env_(std::move(env)), groups_(env_.sys) {}

ProbeStatus PerfHardwareProbe::open(const std::filesystem::path& root) {
  groups_.clear();
  channels_.clear();
  skipped_.clear();
  skips_reported_ = false;
  reported_ = PmuState::ok;
  groups_per_cpu_ = 0;
  PerfSyscalls& sys = groups_.sys();

  const std::vector<int> cpus = online_cpus(root);
  if (cpus.empty()) return {false, "no online CPUs (sys/devices/system/cpu/online unreadable)"};
  const CpuId id = read_cpu_id(root);
  const std::optional<PmuCounters> counted = env_.counters ? env_.counters() : pfm_core_counters();
  counters_ = counted ? *counted : PmuCounters{};
  budget_ = generic_budget(counters_, nmi_watchdog_on(root));

  std::vector<Candidate> cand = generic_events();
  for (const auto& v : kVendorEvents) {
    if (!v.applies(id)) continue;
    Candidate c{{v.name, 0, 0, 0, 0, v.unit, v.subsystem, v.help}, v.bundle};
    std::string why;
    for (const char* pfm : v.pfm) {
      if (!pfm) break;
      why = env_.encode ? env_.encode(pfm, c.ev) : pfm_encode(pfm, c.ev);
      if (why.empty()) break;
    }
    if (why.empty()) cand.push_back(std::move(c));
    else skipped_.push_back(std::string(v.name) + ": " + why);
  }

  // Which events this PMU has: each alone on the first CPU. cycles (first) is required.
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < cand.size(); ++i) {
    const int err = perf_probe_event(sys, cand[i].ev, cpus[0]);
    if (err == 0) {
      kept.push_back(i);
    } else if (i == 0) {
      skipped_.clear();
      return {false, perf_open_error(cand[0].ev.name, err, true)};
    } else {
      skipped_.push_back(cand[i].ev.name + ": " +
                         (perf_unsupported(err) ? "not counted by this PMU (" + errno_message(err) + ")"
                                                : perf_open_error(cand[i].ev.name, err, true)));
    }
  }

  // Channels: host totals in table order, then per CPU cycles/instructions, then running %.
  std::vector<std::size_t> host_slot(cand.size(), PerfSlot::none);
  for (std::size_t i : kept) {
    host_slot[i] = channels_.size();
    const auto& ev = cand[i].ev;
    channels_.push_back({channel_name("perf", ev.name), ev.unit, Kind::counter, ev.subsystem, 64, ev.help});
  }
  std::vector<std::vector<std::size_t>> bundles;
  std::vector<int> cost(cand.size(), 1);
  for (std::size_t i : kept) {
    const auto b = static_cast<std::size_t>(cand[i].bundle);
    if (bundles.size() <= b) bundles.resize(b + 1);
    bundles[b].push_back(i);
    cost[i] = counter_cost(cand[i].ev, counters_);
  }
  const auto templates = pack_groups(bundles, cost, budget_);

  const bool per_cpu_instructions = host_slot[1] != PerfSlot::none;  // instructions is index 1
  std::vector<PerfEvent> evs;
  std::vector<PerfSlot> slots;
  for (int cpu : cpus) {
    const std::size_t cpu_cycles = channels_.size();
    const std::size_t cpu_ins = per_cpu_instructions ? cpu_cycles + 1 : PerfSlot::none;
    const std::size_t before = groups_.groups();
    bool gone = false;
    for (const auto& t : templates) {
      evs.clear();
      slots.clear();
      for (std::size_t i : t) {
        evs.push_back(cand[i].ev);
        PerfSlot s;
        s.host = host_slot[i];
        s.cpu = i == 0 ? cpu_cycles : i == 1 ? cpu_ins : PerfSlot::none;
        s.sentinel = i == 0;
        slots.push_back(s);
      }
      if (auto e = groups_.add(cpu, evs, slots)) {
        if (before > 0 && e->event == 0 && perf_cpu_gone(e->err)) {
          gone = true;  // hot-unplugged or absent from the live kernel: leave this CPU out
          break;
        }
        groups_.clear();
        channels_.clear();
        return {false, "CPU " + std::to_string(cpu) + ": " + perf_open_error(evs[e->event].name, e->err, true)};
      }
    }
    if (gone) {
      groups_.truncate(before);
      continue;
    }
    const std::string index = "cpu" + std::to_string(cpu);
    channels_.push_back({channel_name("perf", "cycles", index), "cycles", Kind::counter, Subsystem::cpu, 64,
                         "CPU core cycles (unhalted) on " + index});
    if (per_cpu_instructions)
      channels_.push_back({channel_name("perf", "instructions", index), "count", Kind::counter, Subsystem::cpu,
                           64, "instructions retired on " + index});
  }
  groups_per_cpu_ = templates.size();
  const std::size_t running = channels_.size();
  channels_.push_back({channel_name("perf", "counters_running_pct"), "%", Kind::gauge, Subsystem::cpu, 64,
                       "share of enabled time the counter groups were scheduled (100: no multiplexing, 0: PMU "
                       "held by another user)"});
  groups_.finish(channels_.size(), running);
  return {true, {}};
}

void PerfHardwareProbe::poll_events(std::int64_t now_unix_ns, std::vector<Event>& out) {
  if (!skips_reported_) {
    for (const auto& s : skipped_) out.push_back({now_unix_ns, "perf.hardware", "event_skipped", 0, s});
    skips_reported_ = true;
  }
  const PmuState s = groups_.state();
  if (s == reported_) return;
  if (s == PmuState::ok)
    out.push_back({now_unix_ns, "perf.hardware", "pmu_restored", 0, "PMU counters scheduled again"});
  else
    out.push_back({now_unix_ns, "perf.hardware", "pmu_contention", static_cast<double>(s),
                   std::string(pmu_state_reason(s))});
  reported_ = s;
}

}  // namespace reveal::telemetry
