// Internal: per-CPU perf_event groups, read and scaled without allocating.
//
// A PerfGroups holds any number of groups, each opened on one CPU with its first event as
// leader: system-wide counting (pid = -1), read_format GROUP | TOTAL_TIME_ENABLED |
// TOTAL_TIME_RUNNING, counting from open (perf_event_open(2)). Every member maps to output
// slots (a host total and optionally a per-CPU channel) through a PerfSlot.
//
// read() reads each leader once (one read(2) per group) and keeps, per member, a cumulative
// estimate advanced every tick by Δvalue × Δtime_enabled / Δtime_running: the multiplexing
// scale of *this interval*, as `perf stat -I` does, so a group that ran 25% of one second and
// 100% of the next is scaled correctly in both. Outputs are the sums of the estimates
// (× slot scale) of their members: monotone counters whose rate is the signal.
//
// Gaps (NaN) rather than guesses:
//  * a group whose read fails, or whose time_enabled advanced while time_running did not
//    (never scheduled in the interval: another user holds the counters), makes every slot it
//    feeds NaN this tick; its estimate does not advance;
//  * when the sentinel members (cycles) ran but counted nothing on every CPU, no value of the
//    tick is trusted (all slots NaN): cycles cannot be zero host-wide while this process runs,
//    so something else programs the PMU behind the kernel's back (MSR access).
// PMU state (state()): `not_scheduled` after kBadTicks consecutive ticks in which *every*
// group that was enabled was not scheduled (another profiler took the counters with pinned or
// exclusive events, or the NMI watchdog holds one a group needed), `zero_counts` after
// kBadTicks consecutive sentinel-zero ticks; back to `ok` at the first good tick.
// perf always observes the live kernel, whatever root directory a probe was given.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/probe.h"
#include "telemetry/file_reader.h"
#include "telemetry/perf/syscalls.h"

namespace reveal::telemetry {

// One event, fully encoded for perf_event_open(2).
struct PerfEvent {
  std::string name;        // perf(1) event name, also the channel field
  std::uint32_t type = 0;  // PERF_TYPE_* or a dynamic PMU's type (sysfs .../devices/<pmu>/type)
  std::uint64_t config = 0, config1 = 0, config2 = 0;
  std::string unit = "count";
  Subsystem subsystem = Subsystem::cpu;
  std::string help;
};

// The attribute the probes open `ev` with: system-wide counting from open, group read format.
perf_event_attr perf_attr(const PerfEvent& ev);

// Where one group member's scaled count goes. `scale` converts counts to the channel's unit
// (e.g. bytes per uncore CAS); a `sentinel` member takes part in the zero-count check.
struct PerfSlot {
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t host = none;
  std::size_t cpu = none;
  double scale = 1;
  bool sentinel = false;
};

enum class PmuState : std::uint8_t { ok, not_scheduled, zero_counts };

// The Event detail line for a state (empty for ok).
std::string_view pmu_state_reason(PmuState s);

class PerfGroups {
 public:
  static constexpr int kBadTicks = 2;  // consecutive bad ticks before state() changes

  explicit PerfGroups(PerfSyscalls* sys = nullptr);  // nullptr: the live kernel
  ~PerfGroups();
  PerfGroups(const PerfGroups&) = delete;
  PerfGroups& operator=(const PerfGroups&) = delete;

  struct OpenError {
    std::size_t event;  // index into `events` that failed
    int err;            // errno
  };
  // Opens one group on `cpu`, events[0] leading; slots[i] routes events[i]. On failure
  // closes what it opened of this group and says which event failed with which errno.
  std::optional<OpenError> add(int cpu, std::span<const PerfEvent> events, std::span<const PerfSlot> slots);
  // Call after the last add(): the outputs are n_out slots; `running_slot` (if any) receives
  // 100 × Σ Δtime_running / Σ Δtime_enabled over all groups (NaN when no time passed).
  void finish(std::size_t n_out, std::size_t running_slot = PerfSlot::none);
  // out.size() == n_out. Allocates nothing.
  void read(std::span<double> out);
  // Closes every group; truncate(n) closes the groups added after the first n.
  void clear();
  void truncate(std::size_t n);

  std::size_t groups() const { return groups_.size(); }
  PmuState state() const { return state_; }
  PerfSyscalls& sys() const { return *sys_; }

 private:
  struct Group {
    std::vector<int> fds;  // leader first
    std::vector<PerfSlot> slots;
    std::vector<std::uint64_t> prev;  // raw values at the previous read
    std::vector<double> est;          // cumulative scaled estimates
    std::uint64_t prev_enabled = 0, prev_running = 0;
  };
  PerfSyscalls* sys_;
  std::vector<Group> groups_;
  std::vector<std::uint64_t> buf_;  // nr, time_enabled, time_running, values[nr]
  std::vector<char> gap_;           // per output slot, this tick
  std::size_t n_out_ = 0, running_slot_ = PerfSlot::none;
  PmuState state_ = PmuState::ok;
  int bad_ticks_ = 0;
};

// Opens `ev` alone on `cpu` and closes it: 0 when the PMU accepts it, else the errno.
int perf_probe_event(PerfSyscalls& sys, const PerfEvent& ev, int cpu);

// Online CPUs from <root>/sys/devices/system/cpu/online, else the live /sys; empty if neither.
std::vector<int> online_cpus(const std::filesystem::path& root);

// Reason line for a failed perf_event_open of `event` with errno `err`.
std::string perf_open_error(std::string_view event, int err, bool hardware);

// errno values meaning "this PMU does not have that event".
bool perf_unsupported(int err);
// errno values of a leader on a CPU that went offline or that the live kernel does not have.
bool perf_cpu_gone(int err);

// Shared open() of the software probe: one group of all `events` per online CPU, one counter
// channel "perf:<event>" per event, summed over CPUs; unavailable with the reason otherwise.
ProbeStatus open_perf_probe(std::span<const PerfEvent> events, const std::filesystem::path& root,
                            PerfGroups& groups, std::vector<ChannelInfo>& channels);

}  // namespace reveal::telemetry
