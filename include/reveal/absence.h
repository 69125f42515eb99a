// Absence: data that stops is an incident, not silence. A GPU falling off the bus, a port
// going down or a probe stalling leaves its channels NaN in the recording (the sampler records
// a gap for a failed read); the detectors skip NaN, so without this step the loss would go
// unreported.
//
// find_absences(run, min_samples): a channel is *absent* over a run of at least `min_samples`
// consecutive NaN samples that follows a stretch where it reported (finite in at least half
// of the samples since its first finite one). Channels that never reported (a probe absent
// from the start), and shorter gaps, are not absences. Absent channels of one source (the
// part of the name before ':', i.e. the probe) whose spans overlap form one AbsenceSpan; the
// span runs from the first sample any of them is missing to the last.
// absence_incident(): the Incident an AbsenceSpan reports: kind "absence", subsystem the most
// common among the absent channels (confidence: their share), focus the common label (gpu0,
// eth0) when they share one, top = the absent channels with their last reported value as the
// reference, and an action naming the source, how long it has been missing and what to check.
// The same incident is built from AbsenceFacts by the streaming AbsenceTracker
// (absence_tracker.h), which keeps an open one's end and action current with
// update_absence_end().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/incident.h"
#include "reveal/recording.h"

namespace reveal {

struct AbsenceSpan {
  std::string source;                  // "nvml", "sys.net", "proc.meminfo" ...
  std::size_t first_row = 0, last_row = 0;  // samples of `run`, inclusive
  std::vector<std::size_t> channels;   // absent channels (indices into run.channels)
  std::size_t source_channels = 0;     // channels the source has in the run
};

std::vector<AbsenceSpan> find_absences(const Recording& run, std::size_t min_samples);

Incident absence_incident(const Recording& run, const AbsenceSpan& span, int top_channels);

// What an absence incident is built from, however it was found.
struct AbsenceFacts {
  std::string_view source;                // the channels' source (probe)
  std::span<const std::size_t> channels;  // the absent channels: indices into the channel list
  std::span<const double> last_values;    // per absent channel: its last finite value (NaN: none)
  std::size_t source_channels = 0;        // channels the source has
  std::int64_t start_unix_ns = 0, end_unix_ns = 0;  // first and last missing sample
  std::int64_t origin_unix_ns = 0;        // what start_s and end_s count from (the first sample)
  double interval_s = 0;                  // sampling interval (the last missing sample's share)
};

Incident absence_incident(std::span<const ChannelInfo> channels, const AbsenceFacts& facts, int top_channels);

// Moves an absence incident's end to facts.end_unix_ns (end_unix_ns, end_s) and rewrites its
// action for the new duration, in place: no allocation once the action string has room.
void update_absence_end(Incident& inc, std::span<const ChannelInfo> channels, const AbsenceFacts& facts);

}  // namespace reveal
