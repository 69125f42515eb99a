// Workload change vs fault tests; contract in workload_change.h.
#include "workload_change.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "reveal/robust_z.h"

namespace reveal::pipeline {

void make_transient(Incident& inc, const IncidentRule& rule, std::int64_t decided_unix_ns, double interval_s) {
  inc.kind = "transient";
  inc.withdrawn = transient_text(rule, inc, interval_s);
  inc.withdrawn_unix_ns = decided_unix_ns;
  inc.action = kTransientAction;
}
namespace {

// The smallest rise of a symptom channel that is operationally material, by unit.
double material_rise(const std::string& name, const std::string& unit) {
  if (name == "proc.stat:processes") return 200.0;  // processes created per second
  // Major page faults per second (a page read from storage while a thread waits): a job
  // starting maps its libraries and data in (up to 250/s on the recorded host days); memory
  // pressure is the operators' rate(node_vmstat_pgmajfault[1m]) > 1000 (GitLab's
  // HighMemoryPressure rule, node-exporter's HostMemoryUnderMemoryPressure).
  if (name == "proc.vmstat:pgmajfault") return 1000.0;
  if (unit == "s/s") return 1.0;                    // run-queue wait per CPU: one more task waiting
  if (unit == "%") return 10.0;
  if (unit == "us/s" || unit == "us") return 1e5;
  if (unit == "ms/s" || unit == "ms") return 100.0;
  if (unit == "ms/op") return 5.0;  // I/O latency per request
  // Memory used up at a pace that empties it within 5 minutes (20 %/min; the channel reads 0
  // below it): a page-now pace. Slower leaks are the drift rule's (kDriftRelearns).
  if (unit == "%/min") return 20.0;
  if (unit == "seconds" || unit == "s") return 0.5;
  return 0.0;  // counts of errors, drops, retransmits, stalls: any significant rise
}

}  // namespace

bool ambient_symptom(const std::string& name) { return hypervisor_steal(name); }

std::vector<char> ambient_mask(const std::vector<const ChannelInfo*>& chans) {
  std::vector<char> out(chans.size());
  for (std::size_t j = 0; j < chans.size(); ++j) out[j] = ambient_symptom(chans[j]->name) ? 1 : 0;
  return out;
}

void RecentPeaks::reset(std::size_t n, std::size_t span, std::size_t lag) {
  n_ = n;
  per_bucket_ = std::max<std::size_t>(1, (std::max<std::size_t>(span, 1) + kBuckets - 1) / kBuckets);
  in_bucket_ = 0;
  head_ = 0;
  max_.assign(kBuckets * n_, -INFINITY);
  lag_ = lag;
  pushed_ = 0;
  delay_.assign(lag_ * n_, NAN);
}

void RecentPeaks::enter(const double* level) {
  if (in_bucket_ == per_bucket_) {  // the oldest bucket leaves the span
    head_ = (head_ + 1) % kBuckets;
    std::fill_n(max_.begin() + std::ptrdiff_t(head_ * n_), n_, -INFINITY);
    in_bucket_ = 0;
  }
  double* row = max_.data() + head_ * n_;
  for (std::size_t i = 0; i < n_; ++i)
    if (level[i] > row[i]) row[i] = level[i];  // NaN never compares greater
  ++in_bucket_;
}

void RecentPeaks::push(std::span<const double> level) {
  if (n_ == 0 || level.size() < n_) return;
  if (lag_ == 0) return enter(level.data());
  double* slot = delay_.data() + (pushed_ % lag_) * n_;
  if (pushed_ >= lag_) enter(slot);  // the level pushed lag_ windows ago
  std::copy_n(level.data(), n_, slot);
  ++pushed_;
}

double RecentPeaks::peak(std::size_t i) const {
  if (i >= n_) return NAN;
  double m = -INFINITY;
  for (std::size_t b = 0; b < kBuckets; ++b) m = std::max(m, max_[b * n_ + i]);
  return std::isfinite(m) ? m : NAN;
}

void SymptomGate::reset(const std::vector<const ChannelInfo*>& chans, int cores) {
  idx_.clear();
  material_.clear();
  beyond_.clear();
  ambient_.clear();
  cores_ = cores > 0 ? double(cores) : 0.0;
  for (std::size_t j = 0; j < chans.size(); ++j) {
    const ChannelRole role = channel_role(chans[j]->name);
    if (role == ChannelRole::load) continue;
    double beyond = NAN, material = material_rise(chans[j]->name, chans[j]->unit);
    if (role == ChannelRole::saturation && chans[j]->name == "derived:mem_used_pct") {  // memory in use
      beyond = kMemoryFullPct;
      material = kMemoryBeyondStep;
    } else if (role == ChannelRole::saturation && chans[j]->unit != "s/s") {  // runnable tasks
      if (cores_ <= 0) continue;
      beyond = 1.0 + cores_;  // the reader itself is one runnable task
      material = cores_;
    }
    idx_.push_back(j);
    material_.push_back(material);
    beyond_.push_back(beyond);
    ambient_.push_back(ambient_symptom(chans[j]->name));
  }
}

double SymptomGate::rise_of(std::size_t k, std::span<const double> median, std::span<const double> low) const {
  const std::size_t j = idx_[k];
  if (j >= median.size() || j >= low.size() || !std::isfinite(median[j]) || !std::isfinite(low[j])) return NAN;
  if (std::isnan(beyond_[k])) return low[j] - median[j];
  const double b = beyond_[k];
  return std::max(0.0, low[j] - b) - std::max(0.0, median[j] - b);
}

double SymptomGate::rise(std::size_t j, std::span<const double> median, std::span<const double> low) const {
  const auto it = std::lower_bound(idx_.begin(), idx_.end(), j);  // idx_ ascends
  if (it != idx_.end() && *it == j) return rise_of(std::size_t(it - idx_.begin()), median, low);
  return j < median.size() && j < low.size() ? low[j] - median[j] : NAN;
}

std::ptrdiff_t SymptomGate::strongest(std::span<const double> z, std::span<const double> median,
                                      std::span<const double> low, std::span<const double> seen,
                                      std::span<const double> accepted) const {
  return pick(z, median, low, seen, false, accepted);
}

std::ptrdiff_t SymptomGate::stepped(std::span<const double> z, std::span<const double> median,
                                     std::span<const double> low, std::span<const double> recent) const {
  return pick(z, median, low, recent, true);
}

std::ptrdiff_t SymptomGate::pick(std::span<const double> z, std::span<const double> median, std::span<const double> low,
                                 std::span<const double> peak, bool step, std::span<const double> accepted) const {
  std::ptrdiff_t best = -1;
  double best_ratio = 0;
  for (std::size_t k = 0; k < idx_.size(); ++k) {
    const std::size_t j = idx_[k];
    if ((step && ambient_[k]) || j >= z.size() || !(z[j] >= kSymptomZ)) continue;
    const double r = rise_of(k, median, low);
    if (!(r >= material_[k])) continue;
    const bool has_peak = j < peak.size() && std::isfinite(peak[j]);
    if (step && has_peak && !(rise_of(k, peak, low) >= material_[k])) continue;  // no step from the recent past
    // A level the current workload is known to hold: only a material step above it counts.
    if (j < accepted.size() && std::isfinite(accepted[j]) && !(rise_of(k, accepted, low) >= material_[k])) continue;
    // A level of an ambient symptom the host reached recently is known: only a material step
    // above it counts.
    if (!step && ambient_[k] && has_peak && peak[j] > median[j] && !(low[j] - peak[j] >= material_[k])) continue;
    const double ratio = material_[k] > 0 ? r / material_[k] : z[j] / kSymptomZ;
    if (best < 0 || ratio > best_ratio) {
      best = std::ptrdiff_t(j);
      best_ratio = ratio;
    }
  }
  return best;
}

std::pair<std::size_t, std::size_t> step_peaks_span(double stride_s) {
  const double s = stride_s > 0 ? stride_s : 1.0;
  return {std::max<std::size_t>(1, std::size_t(std::ceil(kStepSpanS / s))),
          std::max<std::size_t>(1, std::size_t(std::ceil(kStepLagS / s)))};
}

bool smoothed_average(const std::string& name) {
  const std::size_t colon = name.find(':');
  if (colon == std::string::npos) return false;
  const std::string_view source(name.data(), colon), field(name.data() + colon + 1, name.size() - colon - 1);
  if (source == "proc.loadavg") return field.rfind("load", 0) == 0;
  // proc.pressure:cpu_some_avg10; the cgroup probe's cgroup:cpu_pressure_some_avg10.<cgroup>
  const bool psi = source.find("pressure") != std::string_view::npos || field.find("_pressure_") != std::string_view::npos;
  return psi && field.find("_avg") != std::string_view::npos;
}

bool settled(std::uint64_t r0, std::uint64_t r1, const std::function<std::span<const double>(std::uint64_t)>& row,
             const std::vector<int>& cols, std::span<const double> floor, std::span<const double> zbar) {
  if (r1 < r0 + 8 || zbar.size() != cols.size()) return false;
  std::vector<std::size_t> order(cols.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t n_top = std::min(kDriftChannels, order.size());
  std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(n_top), order.end(),
                    [&](std::size_t a, std::size_t b) { return std::fabs(zbar[a]) > std::fabs(zbar[b]); });
  const std::uint64_t mid = r0 + (r1 - r0) / 2;
  std::vector<double> all, first, second;
  double moved = 0, drifting = 0;  // |zbar| of the channels that moved, and of those drifting
  for (std::size_t i = 0; i < n_top; ++i) {
    const std::size_t j = order[i];
    if (!(std::fabs(zbar[j]) >= kMovedZ)) break;  // did not move: says nothing about the regime
    all.clear();
    first.clear();
    second.clear();
    for (std::uint64_t r = r0; r < r1; ++r) {
      const double v = row(r)[std::size_t(cols[j])];
      if (!std::isfinite(v)) continue;
      all.push_back(v);
      (r < mid ? first : second).push_back(v);
    }
    if (first.size() < 4 || second.size() < 4) continue;
    const double med = median_of(all);
    const double scale = std::max(1.4826 * mad_of(all, med), j < floor.size() ? floor[j] : 0.0);
    if (!(scale > 0)) continue;
    moved += std::fabs(zbar[j]);
    if (std::fabs(median_of(second) - median_of(first)) / scale > kDriftMax) drifting += std::fabs(zbar[j]);
  }
  return !(drifting >= kDriftingShare * moved && drifting > 0);
}

void fresh_movers(std::span<const double> onset, std::span<const double> znow, std::vector<double>& out) {
  out.resize(znow.size());
  for (std::size_t j = 0; j < znow.size(); ++j) {
    const bool moved = j < onset.size() && std::fabs(onset[j]) >= kMovedZ;  // NaN: unmoved
    out[j] = moved || !std::isfinite(znow[j]) ? 0.0 : znow[j];
  }
}

std::vector<EpisodePart> episodes(std::span<const bool> anomalous, std::span<const bool> sustained,
                                  std::span<const bool> symptomatic, IncidentRule rule, bool changes,
                                  std::size_t L, std::size_t stride, std::uint64_t relearn,
                                  std::uint64_t drift_relearns,
                                  const std::function<std::span<const double>(std::size_t)>& z,
                                  const std::function<bool(std::uint64_t, std::uint64_t, std::span<const double>)>& settled) {
  std::vector<EpisodePart> out;
  IncidentTracker t(rule);
  const std::size_t K = std::size_t(std::max(rule.min_windows, 1)) + 1;
  enum class Ep { none, change, incident } ep = Ep::none;
  std::size_t first = 0, run = 0, zn = 0, sym_from = 0;
  std::uint64_t row0 = 0, last_symptom_row = 0;
  std::int64_t from_row = -1;  // the open episode's first row when it starts before its first window
  bool settled_once = false, had_symptom = false;
  std::vector<double> zsum, zbar, fresh, onset;  // onset: the incident's mean z when it opened
  const auto flag = [](std::span<const bool> f, std::size_t k, bool dflt) { return f.empty() ? dflt : k < f.size() && f[k]; };
  const auto sym = [&](std::size_t k) { return anomalous[k] && flag(symptomatic, k, false); };
  const auto add_z = [&](std::size_t k) {
    const std::span<const double> zk = z(k);
    if (zsum.size() != zk.size()) zsum.assign(zk.size(), 0.0);
    for (std::size_t j = 0; j < zk.size(); ++j) zsum[j] += zk[j];
    ++zn;
  };
  // An episode's evidence (its anomalous windows' mean z) and symptoms from window f to l, as
  // the streaming detector rebuilds them from its rings when an episode opens or is cut.
  const auto restart_evidence = [&](std::size_t f, std::size_t l) {
    zsum.clear();
    zn = 0;
    had_symptom = false;
    for (std::size_t k = f; k <= l; ++k) {
      if (anomalous[k]) add_z(k);
      if (sym(k)) {
        had_symptom = true;
        last_symptom_row = std::uint64_t(k) * stride + L - 1;
      }
    }
    row0 = std::uint64_t(f) * stride;
    run = 0;
  };
  const auto mean_z = [&]() -> std::span<const double> {
    zbar.assign(zsum.size(), 0.0);
    for (std::size_t j = 0; j < zsum.size() && zn; ++j) zbar[j] = zsum[j] / double(zn);
    return zbar;
  };
  const auto note_onset = [&] {
    const std::span<const double> m = mean_z();
    onset.assign(m.begin(), m.end());
  };
  for (std::size_t w = 0; w < anomalous.size(); ++w) {
    switch (t.push(w, anomalous[w], flag(sustained, w, true))) {
      case IncidentTracker::Change::opened: {
        first = t.first();
        bool any = false;
        for (std::size_t k = first; k <= w; ++k) any = any || sym(k);
        ep = (!changes || any) ? Ep::incident : Ep::change;
        settled_once = false;
        sym_from = first;
        restart_evidence(first, w);
        if (ep == Ep::incident) note_onset();
        break;
      }
      case IncidentTracker::Change::extended:
        add_z(w);
        break;
      case IncidentTracker::Change::closed:
        out.push_back({ep == Ep::incident, first, t.last(), -1, false, from_row, sym_from});
        ep = Ep::none;
        from_row = -1;
        break;
      case IncidentTracker::Change::none:
        break;
    }
    if (!changes || ep == Ep::none) continue;
    const std::uint64_t rows = std::uint64_t(w) * stride + L;
    if (ep == Ep::incident) {
      if (sym(w)) {
        had_symptom = true;
        last_symptom_row = rows - 1;
      }
      // Its symptoms gone for kSymptomGoneWindows windows, or, without a symptom ever, `relearn`
      // rows that settled while the load stayed different: it ended.
      const bool gone = had_symptom && rows >= last_symptom_row + 1 + kSymptomGoneWindows * stride;
      const std::uint64_t quiet_from = had_symptom ? last_symptom_row + 1 : row0 + L;
      if (!gone && rows < quiet_from + relearn) continue;
      if (!gone) {
        fresh_movers(onset, z(w), fresh);
        if (!settled(quiet_from, rows, mean_z()) || !settled(quiet_from, rows, fresh)) continue;
      }
      out.push_back({true, first, t.last(), had_symptom ? std::int64_t(last_symptom_row) : -1, true, from_row, sym_from});
      from_row = -1;
      if (t.open() && t.last() == w) {  // the load that stays: a workload change from here on
        from_row = std::int64_t(had_symptom ? last_symptom_row + 1 : rows - L);
        t.restart(w, w);
        first = w;
        sym_from = w;
        ep = Ep::change;
        settled_once = false;
        restart_evidence(w, w);
      } else {
        t.reset();
        ep = Ep::none;
      }
      continue;
    }
    run = sym(w) ? run + 1 : 0;
    if (run + 1 >= K) {  // symptoms rose during the change: an incident from them on
      const std::size_t last = t.last(), f = last + 1 - std::min(run, K);
      out.push_back({false, first, f > first ? f - 1 : first,
                     std::int64_t(std::max<std::uint64_t>(std::uint64_t(f) * stride, row0)), false, from_row});
      from_row = -1;
      t.restart(f, last);
      first = f;
      sym_from = f;
      ep = Ep::incident;
      restart_evidence(f, last);
      note_onset();
      continue;
    }
    const std::uint64_t r0 = row0 + L;
    if (rows < r0 + relearn || settled_once) continue;
    if (settled(rows - relearn, rows, mean_z())) {
      settled_once = true;
      continue;
    }
    if (rows >= r0 + drift_relearns * relearn) {  // still drifting: a leak, a runaway ramp
      ep = Ep::incident;
      sym_from = w + 1;
      note_onset();
    }
  }
  if (t.open()) out.push_back({ep == Ep::incident, first, t.last(), -1, false, from_row, sym_from});
  return out;
}

}  // namespace reveal::pipeline
