// Streaming absence tracker; contract in include/reveal/absence_tracker.h.
#include "reveal/absence_tracker.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "reveal/absence.h"

namespace reveal {
namespace {
constexpr std::size_t kMaxClosed = 100;
}  // namespace

AbsenceTracker::AbsenceTracker(std::vector<ChannelInfo> channels, std::size_t min_samples, double interval_s,
                               int top_channels)
    : channels_(std::move(channels)),
      min_samples_(std::max<std::size_t>(min_samples, 1)),
      interval_s_(interval_s),
      top_channels_(top_channels) {
  const std::size_t nc = channels_.size();
  std::map<std::string, std::uint32_t> index;
  source_of_.resize(nc);
  for (std::size_t c = 0; c < nc; ++c) {
    const std::string& name = channels_[c].name;
    const auto colon = name.find(':');
    const std::string src = colon == std::string::npos ? std::string() : name.substr(0, colon);
    auto [it, fresh] = index.try_emplace(src, std::uint32_t(sources_.size()));
    if (fresh) {
      sources_.push_back(src);
      by_source_.emplace_back();
    }
    source_of_[c] = it->second;
    by_source_[it->second].channels.push_back(c);
  }
  for (Source& s : by_source_) {
    s.members.reserve(s.channels.size());
    s.last_values.reserve(s.channels.size());
  }
  opened_total_.assign(sources_.size(), 0);
  seen_.assign(nc, 0);
  finite_.assign(nc, 0);
  gap_.assign(nc, 0);
  gap_start_ns_.assign(nc, 0);
  last_.assign(nc, __builtin_nan(""));
  absent_.assign(nc, 0);
  touched_.reserve(sources_.size());
  active_.reserve(sources_.size());
  active_source_.reserve(sources_.size());
}

AbsenceFacts AbsenceTracker::facts(const Source& s, std::size_t src, std::int64_t end_ns) const {
  AbsenceFacts f;
  f.source = sources_[src];
  f.channels = s.members;
  f.last_values = s.last_values;
  f.source_channels = s.channels.size();
  f.start_unix_ns = s.start_ns;
  f.end_unix_ns = end_ns;
  f.origin_unix_ns = t0_ns_;
  f.interval_s = interval_s_;
  return f;
}

void AbsenceTracker::rebuild(Source& s, std::size_t src, std::int64_t end_ns) {
  Incident inc = absence_incident(channels_, facts(s, src, end_ns), top_channels_);
  if (s.incident < 0) {
    s.incident = std::ptrdiff_t(active_.size());
    active_.push_back(std::move(inc));
    active_source_.push_back(std::uint32_t(src));
    ++opened_total_[src];
    ++update_.opened;
  } else {
    active_[std::size_t(s.incident)] = std::move(inc);
  }
}

const AbsenceUpdate& AbsenceTracker::push(std::int64_t t_unix_ns, std::span<const double> row) {
  update_ = {};
  if (row.size() != channels_.size())
    throw std::invalid_argument("AbsenceTracker: sample has " + std::to_string(row.size()) + " values for " +
                                std::to_string(channels_.size()) + " channels");
  if (started_ && t_unix_ns <= last_t_ns_) return update_;
  if (!started_) {
    started_ = true;
    t0_ns_ = t_unix_ns;
  }
  last_t_ns_ = t_unix_ns;

  // Channels: reporting, gaps, absence.
  touched_.clear();
  for (std::size_t c = 0; c < row.size(); ++c) {
    const double v = row[c];
    if (std::isfinite(v)) {
      if (absent_[c]) {
        absent_[c] = 0;
        --n_absent_;
        --by_source_[source_of_[c]].absent;
      }
      ++seen_[c];
      ++finite_[c];
      gap_[c] = 0;
      last_[c] = v;
      continue;
    }
    if (seen_[c] == 0) continue;  // not reporting yet
    ++seen_[c];
    if (gap_[c]++ == 0) gap_start_ns_[c] = t_unix_ns;
    // find_absences' rule, checked once, when the gap reaches the length (the counts before
    // the gap do not change during it): reporting in at least half of the samples before.
    if (gap_[c] != min_samples_) continue;
    const std::uint64_t before = seen_[c] - gap_[c];
    if (finite_[c] == 0 || 2 * finite_[c] < before) continue;
    absent_[c] = 1;
    ++n_absent_;
    const std::uint32_t src = source_of_[c];
    Source& s = by_source_[src];
    ++s.absent;
    if (s.members.empty()) s.start_ns = gap_start_ns_[c];
    if (std::find(s.members.begin(), s.members.end(), c) == s.members.end()) {
      s.members.push_back(c);       // capacity: the source's channel count
      s.last_values.push_back(last_[c]);
      if (!s.joined) {
        s.joined = true;
        touched_.push_back(src);    // capacity: the number of sources
      }
    }
  }

  // Sources: open or grow the incidents that gained a channel.
  for (std::uint32_t src : touched_) rebuild(by_source_[src], src, t_unix_ns);
  // Open incidents: extend those with a channel still absent, close the others (they ended
  // at the previous sample, where the last update left their end).
  for (std::size_t k = 0; k < active_.size();) {
    const std::uint32_t src = active_source_[k];
    Source& s = by_source_[src];
    if (s.joined) {
      s.joined = false;
      ++k;
      continue;
    }
    if (s.absent > 0) {
      update_absence_end(active_[k], channels_, facts(s, src, t_unix_ns));
      ++k;
      continue;
    }
    closed_.push_back(std::move(active_[k]));
    if (closed_.size() > kMaxClosed) closed_.erase(closed_.begin());
    active_.erase(active_.begin() + std::ptrdiff_t(k));
    active_source_.erase(active_source_.begin() + std::ptrdiff_t(k));
    for (Source& o : by_source_)
      if (o.incident > std::ptrdiff_t(k)) --o.incident;
    s.incident = -1;
    s.members.clear();
    s.last_values.clear();
    ++update_.closed;
  }
  update_.changed = !touched_.empty() || update_.closed > 0;
  return update_;
}

}  // namespace reveal
