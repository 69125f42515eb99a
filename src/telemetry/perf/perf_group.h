// Internal: per-CPU perf_event groups, read and summed without allocating.
//
// open() creates, for every CPU, one group whose leader is events[0]: system-wide counting
// (pid = -1, cpu = N), read_format GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING, counting
// from open. read_sum() reads each leader once (one read(2) per CPU) and adds
// value × time_enabled / time_running over CPUs, which undoes multiplexing when the PMU
// time-shares counters; a group never scheduled while enabled makes the sums NaN.
// perf always observes the live kernel, whatever root directory the probe was given.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

struct PerfEventSpec {
  std::string_view name;  // perf(1) event name, also the channel field
  std::uint32_t type;     // PERF_TYPE_*
  std::uint64_t config;   // PERF_COUNT_*
  std::string_view unit;
  Subsystem subsystem;
  std::string_view help;
};

class PerfGroups {
 public:
  // Opens groups on `cpus`. A member event the PMU rejects on the first CPU (ENOENT,
  // EOPNOTSUPP, EINVAL) is dropped from every group when `drop_unsupported` is set.
  // CPUs that are offline or unknown to the live kernel (ENODEV, ENXIO, EINVAL on the
  // leader) are skipped, except the first. Returns "" on success, else the one-line reason.
  std::string open(std::span<const PerfEventSpec> events, const std::vector<int>& cpus,
                   bool drop_unsupported);
  // Indices into `events` that were opened, in read order.
  const std::vector<std::size_t>& active() const { return active_; }
  std::size_t cpus() const { return groups_.size(); }
  // out.size() == active().size(). NaN everywhere if any read fails.
  void read_sum(std::span<double> out);

 private:
  std::vector<std::vector<UniqueFd>> groups_;  // per CPU: leader first
  std::vector<std::size_t> active_;
  std::vector<std::uint64_t> buf_;  // nr, time_enabled, time_running, values[nr]
};

// Online CPUs from <root>/sys/devices/system/cpu/online, else the live /sys; empty if neither.
std::vector<int> online_cpus(const std::filesystem::path& root);

// Reason line for a failed perf_event_open of `event` with errno `err`.
std::string perf_open_error(std::string_view event, int err, bool hardware);

// Shared open() of the perf probes: opens `groups` on the online CPUs and lists one counter
// channel "perf:<event>" per opened event; unavailable with the reason otherwise.
ProbeStatus open_perf_probe(std::span<const PerfEventSpec> events,
                            const std::filesystem::path& root, bool drop_unsupported,
                            PerfGroups& groups, std::vector<ChannelInfo>& channels);

}  // namespace reveal::telemetry
