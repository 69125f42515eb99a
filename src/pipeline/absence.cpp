// Absence detection; contract in include/reveal/absence.h.
#include "reveal/absence.h"

#include <algorithm>
#include <cmath>
#include <iterator>
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
  std::vector<double> last(span.channels.size(), __builtin_nan(""));
  for (std::size_t k = 0; k < span.channels.size() && int(k) < top_channels; ++k)
    for (std::size_t r = span.first_row; r-- > 0;)
      if (const double v = run.values(r, span.channels[k]); std::isfinite(v)) { last[k] = v; break; }
  AbsenceFacts f;
  f.source = span.source;
  f.channels = span.channels;
  f.last_values = last;
  f.source_channels = span.source_channels;
  f.start_unix_ns = run.t_unix_ns[span.first_row];
  f.end_unix_ns = run.t_unix_ns[span.last_row];
  f.origin_unix_ns = run.t_unix_ns.front();
  f.interval_s = run.meta.interval_s;
  return absence_incident(run.channels, f, top_channels);
}

Incident absence_incident(std::span<const ChannelInfo> channels, const AbsenceFacts& f, int top_channels) {
  Incident inc;
  inc.kind = "absence";
  inc.start_unix_ns = f.start_unix_ns;
  inc.start_s = double(inc.start_unix_ns - f.origin_unix_ns) * 1e-9;
  std::map<Subsystem, std::size_t> per;
  std::map<std::string, std::size_t> labels;
  for (std::size_t c : f.channels) {
    ++per[channels[c].subsystem];
    ++labels[channel_label(channels[c].name)];
  }
  for (const auto& [s, k] : per) inc.subsystem_shares.emplace_back(s, double(k) / double(f.channels.size()));
  std::stable_sort(inc.subsystem_shares.begin(), inc.subsystem_shares.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  inc.subsystem = inc.subsystem_shares.front().first;
  inc.confidence = inc.subsystem_shares.front().second;
  if (labels.size() == 1 && !labels.begin()->first.empty()) {
    inc.focus = labels.begin()->first;
    inc.focus_share = 1.0;
  }
  for (std::size_t k = 0; k < f.channels.size(); ++k) {
    if (int(inc.top.size()) >= top_channels) break;
    const ChannelInfo& ch = channels[f.channels[k]];
    inc.top.push_back({ch.name, ch.unit, ch.subsystem, __builtin_nan(""), f.last_values[k], 0.0});
  }
  update_absence_end(inc, channels, f);
  return inc;
}

void update_absence_end(Incident& inc, std::span<const ChannelInfo> channels, const AbsenceFacts& f) {
  inc.end_unix_ns = f.end_unix_ns;
  inc.end_s = double(inc.end_unix_ns - f.origin_unix_ns) * 1e-9;
  inc.action.clear();
  auto out = std::back_inserter(inc.action);
  if (f.channels.size() == f.source_channels)
    fmt::format_to(out, "all {} channels of {}", f.source_channels, f.source);
  else
    fmt::format_to(out, "{} of {} channels of {}", f.channels.size(), f.source_channels, f.source);
  fmt::format_to(out,
                 " stopped reporting for {:.0f} s (e.g. {}): check that the device or interface is still there and "
                 "healthy (dmesg, nvidia-smi -q, ip -s link, ibstat) and the probe's own errors (reveal probes; "
                 "reveal_probe_up on the agent)",
                 inc.end_s - inc.start_s + f.interval_s, channels[f.channels.front()].name);
}

}  // namespace reveal
