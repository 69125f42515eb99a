// `reveal agent --replay RUN`: a recording served in real time as if its samples were being
// taken now.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>

#include "reveal/recording.h"

namespace reveal::agent {

// Called with each replayed sample: its new timestamp, its raw row and the recording's events
// that fall up to it (restamped the same way).
using ReplaySample = std::function<void(std::int64_t t_unix_ns, std::span<const double> row, std::span<const Event> events)>;

// Serves `rec` (at least one sample) in real time: sample i is due at the call's start +
// (t_i − t_0) on the monotonic clock and stamped wall-clock start + (t_i − t_0). Sleeps in
// steps of at most 200 ms, so `stop` is seen within that; before each sample calls
// `between_samples` (the agent applies a pending reload there). Returns when every sample is
// served or `stop` is set.
void replay_in_real_time(const Recording& rec, const std::atomic<bool>& stop,
                                const std::function<void()>& between_samples, const ReplaySample& on_sample);

}  // namespace reveal::agent
