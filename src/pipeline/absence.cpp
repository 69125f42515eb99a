// Absence detection; contract in include/reveal/absence.h.
#include "reveal/absence.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace reveal {
namespace {

std::string source_of(const std::string& name) {
  const auto colon = name.find(':');
  return colon == std::string::npos ? std::string() : name.substr(0, colon);
}

struct ChannelGap {
  std::size_t channel, first, last;  // inclusive rows
};

}  // namespace

std::vector<AbsenceSpan> find_absences(const Recording& run, std::size_t min_samples) {
  const std::size_t n = run.values.rows(), nc = run.channels.size();
  min_samples = std::max<std::size_t>(min_samples, 1);
  std::map<std::string, std::vector<ChannelGap>> by_source;
  std::map<std::string, std::size_t> source_size;
  for (std::size_t c = 0; c < nc; ++c) {
    const std::string src = source_of(run.channels[c].name);
    ++source_size[src];
    std::size_t seen = 0, finite = 0;  // samples since the first finite one, and finite among them
    std::size_t gap_start = 0, gap_len = 0;
    auto close_gap = [&](std::size_t end_row) {
      // The gap [gap_start, end_row) counts when long enough and the channel had been reporting.
      const std::size_t before = seen - gap_len, finite_before = finite;
      if (gap_len >= min_samples && finite_before > 0 && 2 * finite_before >= before)
        by_source[src].push_back({c, gap_start, end_row - 1});
    };
    for (std::size_t r = 0; r < n; ++r) {
      const bool ok = std::isfinite(run.values(r, c));
      if (seen == 0 && !ok) continue;  // not reporting yet
      ++seen;
      if (ok) {
        if (gap_len) close_gap(r);
        gap_len = 0;
        ++finite;
      } else {
        if (gap_len++ == 0) gap_start = r;
      }
    }
    if (gap_len) close_gap(n);
  }
  std::vector<AbsenceSpan> out;
  for (auto& [src, gaps] : by_source) {
    std::sort(gaps.begin(), gaps.end(), [](const ChannelGap& a, const ChannelGap& b) { return a.first < b.first; });
    for (const auto& g : gaps) {
      if (!out.empty() && out.back().source == src && g.first <= out.back().last_row + 1) {
        AbsenceSpan& s = out.back();
        s.last_row = std::max(s.last_row, g.last);
        if (std::find(s.channels.begin(), s.channels.end(), g.channel) == s.channels.end()) s.channels.push_back(g.channel);
      } else {
        out.push_back({src, g.first, g.last, {g.channel}, source_size[src]});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const AbsenceSpan& a, const AbsenceSpan& b) { return a.first_row < b.first_row; });
  return out;
}

Incident absence_incident(const Recording& run, const AbsenceSpan& span, int top_channels) {
  Incident inc;
  inc.kind = "absence";
  inc.start_unix_ns = run.t_unix_ns[span.first_row];
  inc.end_unix_ns = run.t_unix_ns[span.last_row];
  inc.start_s = double(inc.start_unix_ns - run.t_unix_ns.front()) * 1e-9;
  inc.end_s = double(inc.end_unix_ns - run.t_unix_ns.front()) * 1e-9;
  std::map<Subsystem, std::size_t> per;
  std::map<std::string, std::size_t> labels;
  for (std::size_t c : span.channels) {
    ++per[run.channels[c].subsystem];
    ++labels[channel_label(run.channels[c].name)];
  }
  for (const auto& [s, k] : per) inc.subsystem_shares.emplace_back(s, double(k) / double(span.channels.size()));
  std::stable_sort(inc.subsystem_shares.begin(), inc.subsystem_shares.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  inc.subsystem = inc.subsystem_shares.front().first;
  inc.confidence = inc.subsystem_shares.front().second;
  if (labels.size() == 1 && !labels.begin()->first.empty()) {
    inc.focus = labels.begin()->first;
    inc.focus_share = 1.0;
  }
  for (std::size_t c : span.channels) {
    if (int(inc.top.size()) >= top_channels) break;
    double last = __builtin_nan("");
    for (std::size_t r = span.first_row; r-- > 0;)
      if (std::isfinite(run.values(r, c))) { last = run.values(r, c); break; }
    const ChannelInfo& ch = run.channels[c];
    inc.top.push_back({ch.name, ch.unit, ch.subsystem, __builtin_nan(""), last, 0.0});
  }
  const std::string what = span.channels.size() == span.source_channels
                               ? fmt::format("all {} channels of {}", span.source_channels, span.source)
                               : fmt::format("{} of {} channels of {}", span.channels.size(), span.source_channels,
                                             span.source);
  inc.action = fmt::format(
      "{} stopped reporting for {:.0f} s (e.g. {}): check that the device or interface is still there and "
      "healthy (dmesg, nvidia-smi -q, ip -s link, ibstat) and the probe's own errors (reveal probes; "
      "reveal_probe_up on the agent)",
      what, inc.end_s - inc.start_s + run.meta.interval_s, run.channels[span.channels.front()].name);
  return inc;
}

}  // namespace reveal
