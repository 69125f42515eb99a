// Sampler: opens probes and reads them all at a fixed rate on a monotonic schedule.
//
// Sample k is taken at t0 + k·interval on CLOCK_MONOTONIC (absolute sleeps, so no drift
// accumulates). If a tick is missed (the host stalled longer than one interval), the
// missed ticks are skipped, not bunched: the next sample is the next future tick.
// Each sample is stamped in Unix nanoseconds as realtime(start) + (monotonic(now) − monotonic(start)):
// wall-clock anchored but immune to clock steps during the run. The row buffer is reused:
// sampling allocates nothing per sample.
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
    std::uint64_t errors = 0;           // reads that threw or produced no value at all
  };
  const std::vector<ProbeStats>& probe_stats() const { return stats_; }
  // Ticks skipped by run() because the host stalled past them.
  std::uint64_t skipped_ticks() const { return skipped_; }

  // Samples every `interval` until `stop` becomes true or `max_samples` are taken (0 = no limit),
  // calling on_sample(t_unix_ns, row) after each. Returns the number of samples taken.
  using Callback = std::function<void(std::int64_t, std::span<const double>)>;
  std::size_t run(std::chrono::nanoseconds interval, std::size_t max_samples,
                  const std::atomic<bool>& stop, const Callback& on_sample);

 private:
  struct Slot { std::unique_ptr<Probe> probe; std::size_t offset = 0, count = 0; };
  std::vector<Slot> slots_;
  std::vector<ChannelInfo> channels_;
  std::vector<ProbeRecord> records_;
  std::vector<double> row_;
  std::vector<Event> events_;
  std::vector<ProbeStats> stats_;  // one per slot
  std::uint64_t skipped_ = 0;
};

// Probes selected from the registry: `include` (names or wildcard patterns, reveal/glob.h, e.g. "proc.*"; empty = all
// enabled by default) minus `exclude`. Throws std::invalid_argument naming an unknown probe.
std::vector<std::unique_ptr<Probe>> make_probes(const std::vector<std::string>& include,
                                                const std::vector<std::string>& exclude);

std::int64_t realtime_ns();
std::int64_t monotonic_ns();

}  // namespace reveal
