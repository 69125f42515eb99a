// Telling a workload change from a fault (issue #17), for the streaming detector.
//
// A job starting, stopping or changing phase moves load channels (utilisation, throughput,
// memory levels) and then settles into a new steady regime; a fault shows symptoms — a shortage
// or a failure (channel_role() in reveal/channel.h: pressure stalls, steal, reclaim, retransmits,
// drops, errors, throttling, I/O queue time) — or keeps drifting (a leak). Two tests decide:
//   SymptomGate::symptomatic: some symptom channel rose materially in a window — its sustained
//     robust z ≥ kSymptomZ and its rise (z × robust scale) at least the unit's material step
//     (10 points for shares in %, 100 ms/s of stall or wait time, 0.1 s/s in us/s, 5 ms more
//     per I/O request, 200 processes created per second): a 0.5 %
//     PSI blip on a quiet reference is not a symptom, a job stalled 10 % of the time is.
//   settled: the rows since a change look like one steady regime. Among the kDriftChannels
//     channels that moved most (largest |mean z| of the episode, at least 3), a channel drifts
//     when the medians of the first and second half of the rows lie more than kDriftMax robust
//     scales apart (a uniform ramp gives 1.35, a noisy plateau of 30 rows exceeds 1 about 3 % of
//     the time); the rows are not settled when the drifting channels carry at least
//     kDriftingShare of the moved channels' |mean z|.
// Heuristics measured on the compressed host day (bench/hostday), not fitted to its labels.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "reveal/channel.h"

namespace reveal::pipeline {

inline constexpr double kSymptomZ = 6.0;
inline constexpr double kDriftMax = 1.0;
inline constexpr std::size_t kDriftChannels = 5;  // channels the settled test looks at
inline constexpr double kDriftingShare = 0.5;

class SymptomGate {
 public:
  // Per model channel: its role and the smallest rise that counts (allocates).
  void reset(const std::vector<const ChannelInfo*>& chans);
  // True when some symptom channel j rose: z[j] ≥ kSymptomZ and z[j]·scale[j] ≥ its material
  // step. `z`, `scale`: per model channel (WindowModel::score's z, RobustZ::scale()).
  // Allocates nothing.
  bool symptomatic(std::span<const double> z, std::span<const double> scale) const { return strongest(z, scale) >= 0; }
  // The model channel j whose qualifying rise is largest relative to its material step (z when
  // any rise counts), or -1 when none qualifies. Allocates nothing.
  std::ptrdiff_t strongest(std::span<const double> z, std::span<const double> scale) const;
  std::size_t symptom_channels() const { return idx_.size(); }

 private:
  std::vector<std::size_t> idx_;   // model channels that are symptoms
  std::vector<double> material_;   // their material rise, in the channel's unit
};

// Channels the kernel smooths out of another recorded channel: the PSI averages
// (proc.pressure:*_avg10/60/300, and a cgroup's) of the stall totals whose rates are
// derived:psi_*, and the load averages (proc.loadavg:load1/5/15) of the run queue
// (procs_running). Exponential filters with 10 s to 15 min time constants, they move for
// minutes after every job start or stop: kept out of the streaming self fit, so a settled new
// regime does not look like drift and a change does not outlast itself.
bool smoothed_average(const std::string& name);

// The settled test over rows [r0, r1) of a row source: `row(r)` gives row r (layout columns),
// `cols[j]` model channel j's column, `floor[j]` its robust-scale floor, `zbar[j]` its mean z
// over the episode (which channels moved). Fewer than 8 rows: not settled. Allocates.
bool settled(std::uint64_t r0, std::uint64_t r1, const std::function<std::span<const double>(std::uint64_t)>& row,
             const std::vector<int>& cols, std::span<const double> floor, std::span<const double> zbar);

}  // namespace reveal::pipeline
