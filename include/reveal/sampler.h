// Sampler: opens probes and reads them all at a fixed rate on a monotonic schedule.
//
// Sample k is taken at t0 + k·interval on CLOCK_MONOTONIC (absolute sleeps, so no drift
// accumulates). If a tick is missed (the host stalled longer than one interval), the
// missed ticks are skipped, not bunched: the next sample is the next future tick.
// Each sample is stamped in Unix nanoseconds as realtime(start) + (monotonic(now) − monotonic(start)):
// wall-clock anchored, strictly increasing, immune to the wall clock stepping back or wobbling
// (WallAnchor). One exception: when the wall clock runs ahead of that stamp by more than
// WallAnchor::kForwardNs, the monotonic clock stood still while time went on — the VM was
// paused (a live migration or snapshot: "crng reseeded due to virtual machine fork"; 18 s seen
// on the development VM) or the host suspended — and the stamp moves forward to the wall clock
// (a gap in the series, as it truly was), so incident times stay comparable with every other
// log. The row buffer is reused: sampling allocates nothing per sample.
//
// Lateness is recorded, not only counted: when the registry's "reveal.sampler" probe is among
// the probes, each sample carries reveal.sampler:delay_seconds (how late its reading began
// against its tick) and reveal.sampler:ticks_missed (skipped_ticks(); src/telemetry/self/
// sampler_probe.h), so a stall of the sampler is in the store and scored like any channel.
//
// Priority (issue #17). On a saturated host a sampler thread at normal priority can wait
// seconds past its tick: measured on the 2-core development VM during `stress-ng --switch 2
// --cpu 2`, gaps of 2.5–8 s between samples, the thread's timer long expired (clock_nanosleep
// returned 4.5 s late) while no probe and no store write blocked. A nice value does not help
// (nice −10 gave the same gaps): it weighs a thread only against threads of its own scheduling
// group, and the hog runs in another session (autogroup) or cgroup. set_priority() with
// `realtime` makes run() raise its thread to SCHED_RR priority 1, the lowest real-time
// priority, which every normal (SCHED_OTHER) thread yields to, whatever its group: the same
// storm left no gap over 1.0 s. A CPU budget keeps that safe for the host: a token bucket that
// fills at `cpu_share` of one core up to `burst`, drained by the thread CPU time of each tick
// (reading the probes and the callback; CLOCK_THREAD_CPUTIME_ID). Normal use is far below it
// (about 1 ms a tick at 1 Hz, docs/BENCHMARKS.md); a thread that empties it returns to normal
// priority for the rest of the run, with one line to `note`. Work that may take long and can
// wait (the agent's model refit) runs inside an AtNormalPriority scope, outside the budget. The
// kernel's real-time throttling (sched_rt_runtime_us, 95 % by default) bounds any real-time
// thread besides. The raise needs CAP_SYS_NICE or RLIMIT_RTPRIO ≥ 1 (systemd: LimitRTPRIO=1);
// without it sampling goes on at normal priority after one line to `note`, never an error.
// SCHED_RESET_ON_FORK: a process or thread started from the sampling thread is never real-time.
// A thread that is real-time already (chrt) is left as it is, without a budget.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "reveal/probe.h"
#include "reveal/recording.h"

namespace reveal {

namespace telemetry {
struct SampleTiming;  // src/telemetry/self/sampler_probe.h
}  // namespace telemetry

// How run() schedules the thread that calls it (see the header comment, "Priority").
struct SamplingPriority {
  bool realtime = false;  // SCHED_RR priority 1 while run() runs; false: the thread as it is
  double cpu_share = 0.1;  // the CPU budget's refill rate, a fraction of one core (0 < x ≤ 1)
  std::chrono::nanoseconds burst = std::chrono::milliseconds(500);  // and its capacity (> 0)
  // Told one line when the thread stays at or returns to normal priority: the raise was refused
  // ("…: Operation not permitted …") or the budget ran out. May be empty.
  std::function<void(const std::string&)> note;
};

// A sample's stamp from the monotonic and wall clocks (see the top of this file).
struct WallAnchor {
  static constexpr std::int64_t kForwardNs = 2'000'000'000;  // wall clock ahead by more: re-anchor
  std::int64_t offset = 0;     // stamp = monotonic + offset
  std::uint64_t forward = 0;   // re-anchors so far
  // Anchors the stamp to the wall clock now.
  void start(std::int64_t mono, std::int64_t real) { offset = real - mono; }
  // The stamp for monotonic time `mono`, the wall clock reading `real`. Allocates nothing.
  std::int64_t stamp(std::int64_t mono, std::int64_t real) {
    std::int64_t t = mono + offset;
    if (real - t > kForwardNs) {
      offset += real - t;
      t = real;
      ++forward;
    }
    return t;
  }
};

class Sampler {
 public:
  // Opens every probe under `root`. Unavailable probes are kept in probe_records() with the
  // reason and contribute no channels.
  Sampler(std::vector<std::unique_ptr<Probe>> probes, const std::filesystem::path& root);

  const std::vector<ChannelInfo>& channels() const { return channels_; }
  const std::vector<ProbeRecord>& probe_records() const { return records_; }

  // Reads all available probes once into the internal row and returns it (size = channels()),
  // then collects their events (see events()), stamped `t_unix_ns`.
  std::span<const double> sample_once(std::int64_t t_unix_ns = 0);
  // Events polled at the last sample_once(); cleared at the next one.
  const std::vector<Event>& events() const { return events_; }

  // Health of each available probe at its last read, in probe_records() order of the
  // available probes. A probe whose sample() throws has its channels set to NaN and the
  // error counted; sampling goes on.
  struct ProbeStats {
    std::string name;
    std::size_t channels = 0;
    std::int64_t last_duration_ns = 0;  // CLOCK_MONOTONIC time of the last sample() call
    std::size_t missing = 0;            // NaN values it produced at the last read
    std::uint64_t errors = 0;           // ticks it threw, produced no value at all, or failed a read
                                        // of a file that is still there (EIO, EACCES, overflow)
  };
  const std::vector<ProbeStats>& probe_stats() const { return stats_; }
  // Ticks skipped by run() because the host stalled past them.
  std::uint64_t skipped_ticks() const { return skipped_; }
  // Times the stamps moved forward to the wall clock (WallAnchor: a paused VM, a suspend).
  std::uint64_t clock_reanchors() const { return anchor_.forward; }

  // Scheduling of run()'s thread from the next run() on. Throws std::invalid_argument for a
  // cpu_share outside (0, 1] or a burst ≤ 0.
  void set_priority(SamplingPriority p);
  // True while run() holds its thread at real-time priority.
  bool realtime() const { return rt_active_; }

  // While alive (inside on_sample), run()'s thread is at normal priority and the CPU time it
  // uses is not charged to the budget; back to real-time priority at destruction. Does nothing
  // when the thread is not real-time. Create it on run()'s thread only.
  class AtNormalPriority {
   public:
    explicit AtNormalPriority(Sampler& s);
    ~AtNormalPriority();
    AtNormalPriority(const AtNormalPriority&) = delete;
    AtNormalPriority& operator=(const AtNormalPriority&) = delete;

   private:
    Sampler* s_;
    std::int64_t cpu0_ns_ = 0;
  };

  // Samples every `interval` until `stop` becomes true or `max_samples` are taken (0 = no limit),
  // calling on_sample(t_unix_ns, row) after each. Returns the number of samples taken. With
  // set_priority(realtime) the calling thread runs at SCHED_RR priority 1 (see above) and is
  // back at its previous policy when run() returns.
  using Callback = std::function<void(std::int64_t, std::span<const double>)>;
  std::size_t run(std::chrono::nanoseconds interval, std::size_t max_samples,
                  const std::atomic<bool>& stop, const Callback& on_sample);

  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

 private:
  struct Slot { std::unique_ptr<Probe> probe; std::size_t offset = 0, count = 0; };
  bool enter_realtime();               // run()'s start; false: refused (noted)
  void leave_realtime();               // back to the policy run() found
  void charge_budget(std::int64_t now_ns);  // after each tick
  std::vector<Slot> slots_;
  std::vector<ChannelInfo> channels_;
  std::vector<ProbeRecord> records_;
  std::vector<double> row_;
  std::vector<Event> events_;
  std::vector<ProbeStats> stats_;  // one per slot
  std::uint64_t skipped_ = 0;
  WallAnchor anchor_;
  std::unique_ptr<telemetry::SampleTiming> timing_;  // what the reveal.sampler probe reads
  SamplingPriority priority_;
  bool rt_active_ = false;
  int saved_policy_ = 0, saved_priority_ = 0;  // the thread's policy before run() raised it
  double budget_ns_ = 0;                       // tokens left, ns of CPU
  std::int64_t budget_wall_ns_ = 0, budget_cpu_ns_ = 0, normal_cpu_ns_ = 0;
};

// Probes selected from the registry: `include` (names or wildcard patterns, reveal/glob.h, e.g. "proc.*"; empty = all
// enabled by default) minus `exclude`. Throws std::invalid_argument naming an unknown probe.
std::vector<std::unique_ptr<Probe>> make_probes(const std::vector<std::string>& include,
                                                const std::vector<std::string>& exclude);

std::int64_t realtime_ns();
std::int64_t monotonic_ns();


}  // namespace reveal
