// Peers reference; the rule is documented in include/reveal/peers.h.
#include "reveal/peers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "fusion.h"

namespace reveal {

Recording slice_recording(const Recording& r, std::size_t first, std::size_t count) {
  first = std::min(first, r.t_unix_ns.size());
  count = std::min(count, r.t_unix_ns.size() - first);
  Recording out;
  out.meta = r.meta;
  out.channels = r.channels;
  out.config = r.config;
  out.t_unix_ns.assign(r.t_unix_ns.begin() + std::ptrdiff_t(first), r.t_unix_ns.begin() + std::ptrdiff_t(first + count));
  out.values = Matrix(count, r.channels.size());
  for (std::size_t k = 0; k < count; ++k) {
    const auto src = r.values.row(first + k);
    std::copy(src.begin(), src.end(), out.values.row(k).begin());
  }
  if (count) {
    const std::int64_t a = out.t_unix_ns.front(), b = out.t_unix_ns.back();
    out.meta.start_unix_ns = a;
    out.meta.end_unix_ns = b;
    for (const auto& e : r.events)
      if (e.t_unix_ns >= a && e.t_unix_ns <= b) out.events.push_back(e);
    for (const auto& c : r.config_changes)
      if (c.t_unix_ns >= a && c.t_unix_ns <= b) out.config_changes.push_back(c);
  }
  return out;
}

PeersResult compare_peers(const std::vector<Recording>& hosts, const std::vector<std::string>& names_in,
                          const DetectOptions& opts) {
  const std::size_t n = hosts.size();
  if (n < 2) throw PeersError("peers need at least two hosts, got " + std::to_string(n));
  if (!names_in.empty() && names_in.size() != n)
    throw PeersError("peers: " + std::to_string(names_in.size()) + " names for " + std::to_string(n) + " hosts");
  std::vector<std::string> names = names_in;
  if (names.empty())
    for (const auto& h : hosts) names.push_back(h.meta.hostname);
  const std::size_t need = std::max<std::size_t>(opts.window.length, 1) + 1;
  // Hosts of one job run the same workload: a host whose load alone differs from its peers'
  // (less traffic, less work done: a straggler) is the finding, not a workload change.
  DetectOptions peer_opts = opts;
  peer_opts.workload_changes = false;
  for (std::size_t i = 0; i < n; ++i)
    if (hosts[i].t_unix_ns.size() < need)
      throw PeersError(fmt::format("host {}: {} samples; peers need at least {} per host (one window of rates)",
                                   names[i], hosts[i].t_unix_ns.size(), need));

  // 1. Alignment: the common span when every host has a window in it, else offsets from each
  //    run's own start over the shortest run.
  PeersResult res;
  std::int64_t span_a = hosts[0].t_unix_ns.front(), span_b = hosts[0].t_unix_ns.back();
  for (const auto& h : hosts) {
    span_a = std::max(span_a, h.t_unix_ns.front());
    span_b = std::min(span_b, h.t_unix_ns.back());
  }
  std::vector<std::pair<std::size_t, std::size_t>> rows(n);  // first, count
  bool same_time = span_a <= span_b;
  for (std::size_t i = 0; same_time && i < n; ++i) {
    const auto& t = hosts[i].t_unix_ns;
    const auto lo = std::lower_bound(t.begin(), t.end(), span_a), hi = std::upper_bound(t.begin(), t.end(), span_b);
    rows[i] = {std::size_t(lo - t.begin()), std::size_t(hi - lo)};
    same_time = rows[i].second >= need;
  }
  if (same_time) {
    res.alignment = "same time";
    res.start_unix_ns = span_a;
    res.end_unix_ns = span_b;
    res.span_s = double(span_b - span_a) * 1e-9;
    double longest = 0;
    for (const auto& h : hosts) longest = std::max(longest, double(h.t_unix_ns.back() - h.t_unix_ns.front()) * 1e-9);
    if (res.span_s < 0.5 * longest)
      res.notes.push_back(fmt::format("the hosts overlap for {:.0f} s of the longest run's {:.0f} s; only the overlap "
                                      "is compared",
                                      res.span_s, longest));
  } else {
    res.alignment = "offset";
    std::int64_t shortest = std::numeric_limits<std::int64_t>::max();
    for (const auto& h : hosts) shortest = std::min(shortest, h.t_unix_ns.back() - h.t_unix_ns.front());
    for (std::size_t i = 0; i < n; ++i) {
      const auto& t = hosts[i].t_unix_ns;
      const auto hi = std::upper_bound(t.begin(), t.end(), t.front() + shortest);
      rows[i] = {0, std::size_t(hi - t.begin())};
      if (rows[i].second < need)
        throw PeersError(fmt::format("host {}: {} samples in the shortest run's {:.0f} s; peers need at least {}",
                                     names[i], rows[i].second, double(shortest) * 1e-9, need));
    }
    res.span_s = double(shortest) * 1e-9;
    res.notes.push_back(fmt::format("the hosts were not recorded at the same time; each is compared over its first "
                                    "{:.0f} s, by time since its own start",
                                    res.span_s));
  }
  std::vector<Recording> cut(n);
  for (std::size_t i = 0; i < n; ++i) {
    cut[i] = slice_recording(hosts[i], rows[i].first, rows[i].second);
    cut[i].meta.hostname = names[i];  // as a baseline, a peer is named as given
  }

  // 2. Each host against the others.
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<Recording> others;
    others.reserve(n - 1);
    for (std::size_t j = 0; j < n; ++j)
      if (j != i) others.push_back(cut[j]);
    Recording run = slice_recording(hosts[i], rows[i].first, rows[i].second);  // keeps its own hostname
    PeerHost p;
    p.name = names[i];
    try {
      p.result = detect(run, others, peer_opts);
    } catch (const DetectError& e) {
      throw PeersError("host " + names[i] + ": " + e.what());
    }
    std::string peers;
    for (const auto& o : others) peers += (peers.empty() ? "" : ", ") + o.meta.hostname;
    p.result.notes.insert(p.result.notes.begin(), "peers: the baselines are the other hosts of the job (" + peers +
                                                       "), " + (same_time ? "at the same time" : "by time since start"));
    // 3. Oddness score.
    const auto& f = p.result.fused;
    p.windows = f.size();
    for (double x : f) {
      if (pipeline::is_anomalous(x)) ++p.anomalous_windows;
      if (std::isfinite(x)) p.peak = std::max(p.peak, x);
    }
    for (const auto& inc : p.result.incidents) {
      const std::size_t w = inc.last_window - inc.first_window + 1;
      p.incident_windows += w;
      p.score += double(w) / double(std::max<std::size_t>(p.windows, 1)) * std::min(inc.peak_score, kOddPeakCap);
    }
    res.hosts.push_back(std::move(p));
  }

  // 4. Ranking and the odd host.
  std::stable_sort(res.hosts.begin(), res.hosts.end(), [](const PeerHost& a, const PeerHost& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.anomalous_windows > b.anomalous_windows;
  });
  for (const auto& h : res.hosts)
    if (!h.result.incidents.empty()) res.flagged.push_back(h.name);
  if (res.hosts[0].score > 0 && res.hosts[0].score >= kOddMargin * res.hosts[1].score) {
    res.odd = 0;
    std::map<std::string, ChannelEvidence> best;
    for (const auto& inc : res.hosts[0].result.incidents)
      for (const auto& ev : inc.top) {
        auto [it, fresh] = best.try_emplace(ev.name, ev);
        if (!fresh && std::fabs(ev.z) > std::fabs(it->second.z)) it->second = ev;
      }
    for (auto& [name, ev] : best) res.odd_channels.push_back(std::move(ev));
    std::stable_sort(res.odd_channels.begin(), res.odd_channels.end(),
                     [](const ChannelEvidence& a, const ChannelEvidence& b) { return std::fabs(a.z) > std::fabs(b.z); });
    if (res.odd_channels.size() > std::size_t(std::max(opts.top_channels, 1)))
      res.odd_channels.resize(std::size_t(std::max(opts.top_channels, 1)));
  }
  return res;
}

}  // namespace reveal
