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
// reference, and an action naming the source and what to check.
#pragma once

#include <cstddef>
#include <string>
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

}  // namespace reveal
