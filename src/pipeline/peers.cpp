// Peers reference; the rule is documented in include/reveal/peers.h.
#include "reveal/peers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <numeric>

#include <fmt/format.h>

#include "fusion.h"
#include "reveal/baseline_model.h"
#include "reveal/store_reader.h"
#include "reveal/streaming.h"

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

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// What the first read keeps of a host: its sample times, and its reference contribution (the
// whole recording when it has at most R samples, else slices over it).
struct Kept {
  bool read = false;
  std::string hostname;
  std::vector<std::int64_t> t;
  Recording whole;
  std::vector<Recording> slices;
};

// A host against its reference model: detect(run, model); a host longer than
// kWholeRunMaxValues through the streaming driver against the same model (bounded memory; the
// model is fixed, nothing re-learned), or detect() when the host lacks a model channel, which
// the streaming driver requires.
DetectResult score_peer(const Recording& run, const std::shared_ptr<const BaselineModel>& model,
                        const DetectOptions& opts) {
  if (std::uint64_t(run.t_unix_ns.size()) * run.channels.size() > kWholeRunMaxValues) {
    StreamingOptions so;
    so.detect = opts;
    so.baseline = model;
    so.workload_changes = opts.workload_changes;
    // The model's window: warm-up and history must hold 4 of them (the driver checks).
    const WindowOptions& w = model->options().window;
    const std::size_t four = w.length + 3 * std::max<std::size_t>(w.stride, 1);
    so.warmup_samples = std::max(so.warmup_samples, four);
    so.history_samples = std::max(so.history_samples, so.warmup_samples);
    so.relearn_samples = std::max(so.relearn_samples, four);
    try {
      DetectResult r = detect_streaming(run, so);
      r.notes.insert(r.notes.begin(),
                     fmt::format("a long recording ({} samples × {} channels): scored against the peers' model by the "
                                 "streaming driver, in bounded memory",
                                 run.t_unix_ns.size(), run.channels.size()));
      return r;
    } catch (const DetectError&) {
      // a model channel the host lacks: the whole-run scoring treats it as missing
    }
  }
  return detect(run, *model, opts);
}

// Rows of `t` in [a, b]: {first, count}.
std::pair<std::size_t, std::size_t> rows_in(const std::vector<std::int64_t>& t, std::int64_t a, std::int64_t b) {
  const auto lo = std::lower_bound(t.begin(), t.end(), a), hi = std::upper_bound(t.begin(), t.end(), b);
  return {std::size_t(lo - t.begin()), std::size_t(std::max(hi, lo) - lo)};
}

}  // namespace

PeersResult compare_peers(const std::vector<Recording>& hosts, const std::vector<std::string>& names,
                          const DetectOptions& opts) {
  return compare_peers(
      hosts.size(), names,
      [&](const std::function<void(std::size_t, const Recording&)>& use) {
        for (std::size_t i = 0; i < hosts.size(); ++i) use(i, hosts[i]);
      },
      opts);
}

PeersResult compare_peers(std::size_t n, const std::vector<std::string>& names_in, const PeerReader& read_all,
                          const DetectOptions& opts, const PeerScored& on_scored) {
  if (n < 2) throw PeersError("peers need at least two hosts, got " + std::to_string(n));
  if (!names_in.empty() && names_in.size() != n)
    throw PeersError("peers: " + std::to_string(names_in.size()) + " names for " + std::to_string(n) + " hosts");
  const std::size_t need = std::max<std::size_t>(opts.window.length, 1) + 1;
  // Hosts of one job run the same workload: a host whose load alone differs from its peers'
  // (less traffic, less work done: a straggler) is the finding, not a workload change.
  DetectOptions peer_opts = opts;
  peer_opts.workload_changes = false;

  // First read: times and reference contributions (rule 2). A slice holds several windows
  // whatever --window is.
  const std::size_t slice_len = std::max(kPeersSliceSamples, 4 * need);
  const std::size_t per_host = std::max(slice_len, kPeersReferenceSamples / n);
  // Host i's slices are spread from its own phase: with one slice a host (a large fleet), the
  // hosts' slices cover the span instead of all sitting at its middle.
  const auto phase = [](std::size_t i) {
    const double p = 0.5 + double(i) * 0.6180339887498949;
    return p - std::floor(p);
  };
  std::vector<Kept> kept(n);
  read_all([&](std::size_t i, const Recording& r) {
    if (i >= n || kept[i].read) throw PeersError("peers: host " + std::to_string(i) + " read twice or out of range");
    Kept& k = kept[i];
    k.read = true;
    k.hostname = r.meta.hostname;
    k.t = r.t_unix_ns;
    const std::size_t rows = r.t_unix_ns.size();
    if (rows <= per_host) {
      k.whole = r;
      return;
    }
    for (const auto& [first, count] : spread_slices(rows, per_host, slice_len, phase(i)))
      k.slices.push_back(slice_recording(r, first, count));
  });
  std::vector<std::string> names = names_in;
  for (std::size_t i = 0; i < n; ++i) {
    if (!kept[i].read) throw PeersError("peers: host " + std::to_string(i) + " was not read");
    if (names_in.empty()) names.push_back(kept[i].hostname);
  }
  // A host without one window of samples (a fleet's host that stopped before the range, or
  // joined at its end) is left out, with a note, while two remain; host i is compared as
  // host index[i] from here on.
  const std::size_t n_all = n;
  std::vector<std::size_t> index(n_all, kNone), orig;  // listed → compared index, and back
  std::string left_out;
  {
    std::vector<Kept> k2;
    std::vector<std::string> names2;
    for (std::size_t i = 0; i < n_all; ++i) {
      if (kept[i].t.size() < need) {
        left_out += fmt::format("{}{} ({} samples)", left_out.empty() ? "" : ", ", names[i], kept[i].t.size());
        continue;
      }
      index[i] = k2.size();
      orig.push_back(i);
      k2.push_back(std::move(kept[i]));
      names2.push_back(names[i]);
    }
    if (k2.size() < 2)
      for (std::size_t i = 0; i < n_all; ++i)
        if (index[i] == kNone)
          throw PeersError(fmt::format("host {}: {} samples; peers need at least {} per host (one window of rates)",
                                       names[i], kept[i].t.size(), need));
    kept = std::move(k2);
    names = std::move(names2);
    n = kept.size();
  }
  const PeerReader read = [&](const std::function<void(std::size_t, const Recording&)>& use) {
    read_all([&](std::size_t i, const Recording& r) {
      if (i >= n_all) throw PeersError("peers: host " + std::to_string(i) + " out of range");
      if (index[i] != kNone) use(index[i], r);
    });
  };

  // 1. Alignment: the common span when every host has a window in it, else offsets from each
  //    run's own start over the shortest run. Each host is compared over [from[i], to[i]].
  PeersResult res;
  if (!left_out.empty())
    res.notes.push_back(fmt::format("left out, fewer than {} samples (one window of rates) in the range: {}", need,
                                    left_out));
  std::int64_t span_a = kept[0].t.front(), span_b = kept[0].t.back();
  for (const auto& k : kept) {
    span_a = std::max(span_a, k.t.front());
    span_b = std::min(span_b, k.t.back());
  }
  std::vector<std::int64_t> from(n), to(n);
  bool same_time = span_a <= span_b;
  for (std::size_t i = 0; same_time && i < n; ++i) same_time = rows_in(kept[i].t, span_a, span_b).second >= need;
  if (same_time) {
    res.alignment = "same time";
    res.start_unix_ns = span_a;
    res.end_unix_ns = span_b;
    res.span_s = double(span_b - span_a) * 1e-9;
    std::fill(from.begin(), from.end(), span_a);
    std::fill(to.begin(), to.end(), span_b);
    double longest = 0;
    for (const auto& k : kept) longest = std::max(longest, double(k.t.back() - k.t.front()) * 1e-9);
    if (res.span_s < 0.5 * longest)
      res.notes.push_back(fmt::format("the hosts overlap for {:.0f} s of the longest run's {:.0f} s; only the overlap "
                                      "is compared",
                                      res.span_s, longest));
  } else {
    res.alignment = "offset";
    std::int64_t shortest = std::numeric_limits<std::int64_t>::max();
    for (const auto& k : kept) shortest = std::min(shortest, k.t.back() - k.t.front());
    for (std::size_t i = 0; i < n; ++i) {
      from[i] = kept[i].t.front();
      to[i] = kept[i].t.front() + shortest;
      const std::size_t rows = rows_in(kept[i].t, from[i], to[i]).second;
      if (rows < need)
        throw PeersError(fmt::format("host {}: {} samples in the shortest run's {:.0f} s; peers need at least {}",
                                     names[i], rows, double(shortest) * 1e-9, need));
    }
    res.span_s = double(shortest) * 1e-9;
    res.notes.push_back(fmt::format("the hosts were not recorded at the same time; each is compared over its first "
                                    "{:.0f} s, by time since its own start",
                                    res.span_s));
  }

  // 2. References: each host's contribution cut to its compared span, then one model per fold.
  //    A sliced host compared over part of its recording is read once more, its slices spread
  //    over that part (the first read's were spread over all of it).
  // The budget a host of the hosts compared gets (more than the first read's when hosts were
  // left out: their sliced peers are read once more with it).
  const std::size_t budget = std::max(slice_len, kPeersReferenceSamples / n);
  std::vector<std::vector<Recording>> contrib(n);
  std::vector<char> reslice(n, 0);
  bool sliced = false;
  for (std::size_t i = 0; i < n; ++i) {
    Kept& k = kept[i];
    if (!k.whole.t_unix_ns.empty()) {
      const auto [first, count] = rows_in(k.whole.t_unix_ns, from[i], to[i]);
      contrib[i].push_back(slice_recording(k.whole, first, count));
    } else if (!k.slices.empty()) {
      sliced = true;
      const auto [first, count] = rows_in(k.t, from[i], to[i]);
      if (first != 0 || count != k.t.size() || budget != per_host) {
        reslice[i] = 1;
      } else {
        for (auto& sl : k.slices) contrib[i].push_back(std::move(sl));
      }
    }
    k.whole = Recording();
    std::vector<Recording>().swap(k.slices);
  }
  if (std::find(reslice.begin(), reslice.end(), 1) != reslice.end()) {
    std::mutex re_mu;
    read([&](std::size_t i, const Recording& r) {
      if (i >= n || !reslice[i]) return;
      const auto [first, count] = rows_in(r.t_unix_ns, from[i], to[i]);
      std::vector<Recording> got;
      for (const auto& [a, c] : spread_slices(count, budget, slice_len, phase(orig[i])))
        if (c >= need) got.push_back(slice_recording(r, first + a, c));
      std::lock_guard lock(re_mu);
      contrib[i] = std::move(got);
    });
  }
  for (std::size_t i = 0; i < n; ++i)
    for (auto& c : contrib[i]) c.meta.hostname = names[i];  // as a baseline, a peer is named as given
  const std::size_t folds = std::min(n, kPeersMaxFolds);
  std::vector<std::shared_ptr<const BaselineModel>> models(folds);
  for (std::size_t f = 0; f < folds; ++f) {
    // The other folds' contributions, at most about kPeersReferenceSamples samples of them
    // (taken evenly, in host order, when a large fleet's one slice a host adds up to more).
    std::vector<const Recording*> pool;
    std::size_t samples = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (j % folds != f)
        for (const auto& c : contrib[j]) {
          pool.push_back(&c);
          samples += c.t_unix_ns.size();
        }
    const std::size_t take =
        samples <= kPeersReferenceSamples
            ? pool.size()
            : std::max<std::size_t>(1, std::size_t(double(pool.size()) * double(kPeersReferenceSamples) / double(samples)));
    std::vector<Recording> refs;
    refs.reserve(take);
    for (std::size_t k = 0; k < pool.size(); ++k)
      if ((k + 1) * take / pool.size() > k * take / pool.size()) refs.push_back(*pool[k]);
    try {
      if (refs.empty()) throw DetectError("no sample of its peers in the compared span");
      models[f] = std::make_shared<const BaselineModel>(BaselineModel::train(refs, peer_opts));
    } catch (const DetectError& e) {
      throw PeersError("host " + names[f] + ": " + e.what());
    }
  }
  std::vector<std::vector<Recording>>().swap(contrib);

  // 3. Second read: each host against its fold's model; 4. its oddness score.
  std::vector<std::optional<PeerHost>> scored(n);
  std::mutex mu;
  std::size_t done = 0;
  DetectOptions score_opts = peer_opts;
  score_opts.progress = nullptr;  // `read` may score hosts on several threads at once
  read([&](std::size_t i, const Recording& r) {
    if (i >= n) throw PeersError("peers: host " + std::to_string(i) + " out of range");
    const auto [first, count] = rows_in(r.t_unix_ns, from[i], to[i]);
    // The compared span (metadata start and end at its samples, events within it), as before.
    const Recording run = slice_recording(r, first, count);  // keeps its own hostname
    PeerHost p;
    p.name = names[i];
    try {
      p.result = score_peer(run, models[i % folds], score_opts);
    } catch (const DetectError& e) {
      throw PeersError("host " + names[i] + ": " + e.what());
    }
    // A host's slices each name it once in the model's training list: once here.
    std::vector<std::string> peers;
    for (const auto& h : p.result.baseline_hosts)
      if (std::find(peers.begin(), peers.end(), h) == peers.end()) peers.push_back(h);
    p.result.baseline_hosts = peers;
    const char* when = same_time ? "at the same time" : "by time since start";
    if (!sliced && folds == n) {
      std::string list;
      for (const auto& h : peers) list += (list.empty() ? "" : ", ") + h;
      p.result.notes.insert(p.result.notes.begin(),
                            "peers: the baselines are the other hosts of the job (" + list + "), " + when);
    } else {
      p.result.notes.insert(p.result.notes.begin(),
                            fmt::format("peers: the baselines are {} other hosts of the job, {} (up to {} samples of "
                                        "each, in slices of {}; {} reference models for {} hosts)",
                                        peers.size(), when, per_host, slice_len, folds, n));
    }
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
    std::lock_guard lock(mu);
    if (scored[i]) throw PeersError("peers: host " + names[i] + " read twice");
    if (on_scored) on_scored(p);
    scored[i] = std::move(p);
    if (opts.progress) opts.progress->update("peers", ++done, n);
  });
  for (std::size_t i = 0; i < n; ++i) {
    if (!scored[i]) throw PeersError("peers: host " + names[i] + " was not read the second time");
    res.hosts.push_back(std::move(*scored[i]));
  }

  // 5. Ranking and the odd host.
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
