// Absence in a stream: find_absences() (absence.h) applied one raw sample at a time, for
// `reveal agent`, which feeds it the same raw rows as the StreamingDetector.
//
// Per channel: the samples since its first finite value, the finite ones among them, the
// current run of NaN (length, time of its first sample) and the last finite value. A channel
// becomes *absent* when its NaN run reaches `min_samples` (the window length) and it was
// reporting before the run: finite in at least half of its samples since its first finite
// one, find_absences' rule. A channel that never reported, and a shorter gap, is never absent.
// It stops being absent at its next finite value.
// Per source (the part of the channel name before ':', i.e. the probe): an absence incident
// (absence_incident(): kind "absence", the same fields and action text as `reveal detect`)
// opens when the first of its channels becomes absent, starting at that channel's first
// missing sample. A channel of the source that becomes absent while it is open joins it. While
// any of its channels is absent its end is the current sample; it closes at the first sample
// where none is, ending at the last sample where one was missing.
// Differences from find_absences over the same samples: a channel's `reference` is its last
// value before its own gap (find_absences: before the span's start), and a gap that starts
// before an incident closes but reaches min_samples after it does opens a new incident
// (find_absences merges it into the closed one). start_s and end_s count from the first
// sample pushed.
//
// Cost: push() allocates nothing while no channel becomes absent and no incident opens or
// closes: per-channel and per-source state is sized at construction; an open incident's end
// and action (its duration) are rewritten in place each sample. Opening, joining and closing
// build Incidents (allocating).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "reveal/absence.h"
#include "reveal/channel.h"
#include "reveal/incident.h"

namespace reveal {

// What one push() changed.
struct AbsenceUpdate {
  std::size_t opened = 0;  // incidents opened at this sample (the last `opened` of active())
  std::size_t closed = 0;  // incidents closed at this sample (the last `closed` of closed())
  bool changed = false;    // an incident opened, gained a channel or closed
};

class AbsenceTracker {
 public:
  // `channels`: the raw channels of every pushed row; `min_samples` (≥ 1): the NaN run that
  // makes a channel absent; `interval_s`: the sampling interval (incident durations);
  // `top_channels`: absent channels listed per incident.
  AbsenceTracker(std::vector<ChannelInfo> channels, std::size_t min_samples, double interval_s, int top_channels);

  // Feeds one raw sample (NaN = no value; row.size() = channels). Timestamps must increase; a
  // sample not newer than the previous one is ignored.
  const AbsenceUpdate& push(std::int64_t t_unix_ns, std::span<const double> row);

  // Open absence incidents, oldest first: at most one per source; for active()[k], its source
  // and the number of channels in it (absent now or earlier in the incident).
  const std::vector<Incident>& active() const { return active_; }
  const std::string& active_source(std::size_t k) const { return sources_[active_source_[k]]; }
  std::size_t active_channels(std::size_t k) const { return by_source_[active_source_[k]].members.size(); }
  // Closed ones, oldest first (at most 100 kept).
  const std::vector<Incident>& closed() const { return closed_; }
  // The sources (channel name prefixes), in order of first appearance, and per source the
  // absence incidents opened since the start.
  const std::vector<std::string>& sources() const { return sources_; }
  const std::vector<std::uint64_t>& opened_total() const { return opened_total_; }
  // Channels absent right now.
  std::size_t absent_channels() const { return n_absent_; }

 private:
  struct Source {
    std::vector<std::size_t> channels;  // all channels of the source
    std::vector<std::size_t> members;   // channels absent at some point of the open incident
    std::vector<double> last_values;    // per member: its last finite value before its gap
    std::size_t absent = 0;             // members absent now
    std::ptrdiff_t incident = -1;       // index into active_, or -1
    std::int64_t start_ns = 0;          // the open incident's first missing sample
    bool joined = false;                // a member joined at this sample
  };
  void rebuild(Source& s, std::size_t src, std::int64_t end_ns);
  // What absence_incident() / update_absence_end() need about source `src` (views, no copy).
  AbsenceFacts facts(const Source& s, std::size_t src, std::int64_t end_ns) const;

  std::vector<ChannelInfo> channels_;
  std::size_t min_samples_;
  double interval_s_;
  int top_channels_;
  std::vector<std::string> sources_;
  std::vector<Source> by_source_;
  std::vector<std::uint64_t> opened_total_;
  // Per channel.
  std::vector<std::uint32_t> source_of_;
  std::vector<std::uint64_t> seen_, finite_, gap_;
  std::vector<std::int64_t> gap_start_ns_;
  std::vector<double> last_;
  std::vector<char> absent_;
  std::size_t n_absent_ = 0;
  std::vector<std::uint32_t> touched_;  // sources whose state changed at this sample
  std::int64_t t0_ns_ = 0, last_t_ns_ = 0;
  bool started_ = false;
  std::vector<Incident> active_, closed_;
  std::vector<std::uint32_t> active_source_;  // per active_ entry: its source
  AbsenceUpdate update_;
};

}  // namespace reveal
