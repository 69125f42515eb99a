// Continuing the agent's store after a restart; contract in restart.h.
#include "agent/restart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "reveal/streaming.h"

namespace reveal::agent {

std::string continuation_note(const StoreContinuation& c, std::int64_t now_unix_ns) {
  char gap[32];
  std::snprintf(gap, sizeof gap, "%.1f", double(now_unix_ns - c.last_t_unix_ns) * 1e-9);
  std::string s = "continuing the store: " + std::to_string(c.samples_before) + " samples, the last " + gap + " s ago";
  if (c.recovered) s += "; " + std::to_string(c.recovered) + " recovered from the head log (the previous agent did not stop cleanly)";
  if (c.channels_added) s += "; " + std::to_string(c.channels_added) + " channels new to it";
  if (c.channels_absent) s += "; " + std::to_string(c.channels_absent) + " of its channels no longer sampled";
  return s;
}

Priming prime_from_store(StreamingDetector& detector, const std::filesystem::path& store,
                         const std::vector<ChannelInfo>& channels, std::int64_t last_t_unix_ns,
                         std::int64_t now_unix_ns, std::chrono::nanoseconds history) {
  Priming out;
  if (last_t_unix_ns <= 0) return out;
  if (now_unix_ns - last_t_unix_ns > history.count()) {
    out.skipped = "the stored history ended more than the history length ago";
    return out;
  }
  std::unordered_map<std::string_view, std::size_t> mine;
  for (std::size_t i = 0; i < channels.size(); ++i) mine.emplace(channels[i].name, i);
  LoadOptions opt;
  opt.start_unix_ns = last_t_unix_ns - history.count();
  opt.keep_channel = [&](const ChannelInfo& c) { return mine.count(c.name) != 0; };
  const Recording rec = load_recording(store, opt);
  // Stored column k is the detector's channel at[k].
  std::vector<std::size_t> at(rec.channels.size());
  for (std::size_t k = 0; k < rec.channels.size(); ++k) at[k] = mine.at(rec.channels[k].name);
  std::vector<double> row(channels.size());
  for (std::size_t i = 0; i < rec.t_unix_ns.size(); ++i) {
    std::fill(row.begin(), row.end(), std::numeric_limits<double>::quiet_NaN());
    const auto src = rec.values.row(i);
    for (std::size_t k = 0; k < at.size(); ++k) row[at[k]] = src[k];
    detector.prime(rec.t_unix_ns[i], row);
  }
  out.rows = detector.finish_priming();
  return out;
}

}  // namespace reveal::agent
