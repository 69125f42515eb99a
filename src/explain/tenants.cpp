// Naming victims and likely aggressors among the cgroups around an incident's onset; the rule
// is documented in reveal/tenants.h.
#include "reveal/tenants.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

namespace reveal {
namespace {

// Rates of one tenant over a span: CPU use in cores, stall shares in % of wall time.
struct Rates {
  double cores = std::nan(""), cpu_pct = std::nan(""), memory_pct = std::nan(""), io_pct = std::nan("");
};

double rate(double a, double b, double dt_us) {
  if (!(std::isfinite(a) && std::isfinite(b)) || b < a) return std::nan("");  // gap or a restarted cgroup
  return (b - a) / dt_us;
}

Rates rates_between(const TenantCounters& a, const TenantCounters& b, double dt_us) {
  Rates r;
  r.cores = rate(a.cpu_usage_us, b.cpu_usage_us, dt_us);
  r.cpu_pct = 100.0 * rate(a.cpu_some_us, b.cpu_some_us, dt_us);
  r.memory_pct = 100.0 * rate(a.memory_some_us, b.memory_some_us, dt_us);
  r.io_pct = 100.0 * rate(a.io_some_us, b.io_some_us, dt_us);
  return r;
}

// Whether some counter went down from a to b: the cgroup was removed and created again.
bool went_down(const TenantCounters& a, const TenantCounters& b) {
  const auto down = [](double x, double y) { return std::isfinite(x) && std::isfinite(y) && y < x; };
  return down(a.cpu_usage_us, b.cpu_usage_us) || down(a.cpu_some_us, b.cpu_some_us) ||
         down(a.memory_some_us, b.memory_some_us) || down(a.io_some_us, b.io_some_us);
}

// A tenant over a span of scans: its first and last scan in it, and its rates between them
// (none for a tenant seen once in the span, or whose counters went down in it: a cgroup
// removed and created again under its path).
struct Seen {
  std::int64_t t0 = 0, t1 = 0;
  TenantCounters c0, c1;
  bool restarted = false;
  bool has_rates() const { return t1 > t0 && !restarted; }
  Rates rates() const { return rates_between(c0, c1, double(t1 - t0) * 1e-3); }
};

// Per tenant id, what it did between scans [first, last] of the timeline.
std::unordered_map<std::uint32_t, Seen> span_of(const std::vector<TenantScan>& scans, std::size_t first,
                                                std::size_t last) {
  std::unordered_map<std::uint32_t, Seen> seen;
  for (std::size_t s = first; s <= last; ++s) {
    const TenantScan& sc = scans[s];
    for (std::size_t k = 0; k < sc.ids.size() && k < sc.counters.size(); ++k) {
      auto [it, fresh] = seen.try_emplace(sc.ids[k]);
      if (fresh) {
        it->second.t0 = sc.t_unix_ns;
        it->second.c0 = sc.counters[k];
      } else if (went_down(it->second.c1, sc.counters[k])) {
        it->second.restarted = true;
      }
      it->second.t1 = sc.t_unix_ns;
      it->second.c1 = sc.counters[k];
    }
  }
  return seen;
}

// Index of the last scan stamped at or before t; npos when none.
std::size_t last_at_or_before(const std::vector<TenantScan>& scans, std::int64_t t) {
  auto it = std::upper_bound(scans.begin(), scans.end(), t,
                             [](std::int64_t v, const TenantScan& s) { return v < s.t_unix_ns; });
  return it == scans.begin() ? std::string::npos : std::size_t(it - scans.begin()) - 1;
}

std::string path_of(const TenantTimeline& tl, std::uint32_t id) {
  return id < tl.paths.size() && !tl.paths[id].empty() ? tl.paths[id] : fmt::format("cgroup #{}", id);
}

double or0(double v) { return std::isfinite(v) ? v : 0.0; }

// How an aggressor outside every tenant is named.
constexpr const char* kOutsideText = "processes outside every cgroup scanned (/: a shell, a build, a daemon, kernel threads)";

// The finding over the after span that ends at the last scan stamped at or before `after_end`,
// and what judge_workload_start() needs besides: whether some scan lies kTenantYoungS or more
// before the onset (youth is judged against it), the young tenants running a job after the
// onset, and whether an older tenant rose, was hurt or ran a job the newcomers could slow down.
struct Judged {
  TenantFinding f;
  bool judged = false;           // both spans exist
  bool history = false;          // a scan at or before onset − kTenantYoungS
  std::vector<std::string> young_jobs;  // young tenants using kTenantCpuStep cores or more after
  bool old_aggressor = false;    // an aggressor that is not young
  bool old_victim = false;       // a victim that is not young
  bool other_job = false;        // an older tenant used kTenantCpuStep cores before and still runs after
};

Judged judge(const TenantTimeline& tl, std::int64_t onset, std::int64_t after_end) {
  Judged out;
  TenantFinding& f = out.f;
  const auto& scans = tl.scans;
  if (scans.size() < 3) return out;
  const std::int64_t guard = std::int64_t(kTenantGuardS * 1e9);
  // Before: [b0, b1], the scans up to onset − guard; after: [a0, a1], the scans from the next
  // one on. The interval between b1 and a0 holds the onset and belongs to neither, so neither
  // span mixes the two states.
  const std::size_t b1 = last_at_or_before(scans, onset - guard);
  const std::size_t a1 = last_at_or_before(scans, after_end);
  if (b1 == std::string::npos || a1 == std::string::npos || a1 < b1 + 2) return out;
  const std::size_t a0 = b1 + 1;
  std::size_t b0 = b1;
  while (b0 > 0 && scans[b0 - 1].t_unix_ns >= onset - std::int64_t(kTenantBeforeS * 1e9)) --b0;
  if (b0 == b1) return out;  // nothing before the onset to compare with
  const auto before = span_of(scans, b0, b1);
  const auto after = span_of(scans, a0, a1);
  out.judged = true;
  const std::size_t y = last_at_or_before(scans, onset - std::int64_t(kTenantYoungS * 1e9));
  out.history = y != std::string::npos;
  // Not running kTenantYoungS before the onset: absent from scan y, or idle (under
  // kTenantActiveCores) over the interval that ends there — an empty cgroup created ahead of
  // its job (a pod's, a service's before it starts) is as new as one created with it.
  const auto counters_at = [&](std::size_t s, std::uint32_t id) -> const TenantCounters* {
    const auto& ids = scans[s].ids;
    const auto it = std::find(ids.begin(), ids.end(), id);
    const std::size_t k = std::size_t(it - ids.begin());
    return it == ids.end() || k >= scans[s].counters.size() ? nullptr : &scans[s].counters[k];
  };
  const auto absent_then = [&](std::uint32_t id) {
    if (!out.history) return false;
    const TenantCounters* at = counters_at(y, id);
    if (!at) return true;
    const TenantCounters* prev = y > 0 ? counters_at(y - 1, id) : nullptr;
    if (!prev || scans[y].t_unix_ns <= scans[y - 1].t_unix_ns) return false;
    const double cores = rate(prev->cpu_usage_us, at->cpu_usage_us, double(scans[y].t_unix_ns - scans[y - 1].t_unix_ns) * 1e-3);
    return std::isfinite(cores) && cores < kTenantActiveCores;
  };

  struct Ranked {
    double rise;
    TenantEvidence ev;
  };
  std::vector<Ranked> victims, aggressors;
  std::vector<TenantImpact> impacts;
  double outside_rise = 0.0, young_cores = 0.0;
  for (const auto& [id, seen_after] : after) {
    if (!seen_after.has_rates()) continue;
    const Rates a = seen_after.rates();
    const auto bs = before.find(id);
    std::optional<Rates> b;
    // Removed and created again across the onset (its counters went down from the before
    // span's last scan to the after span's first): a new tenant.
    if (bs != before.end() && bs->second.has_rates() &&
        !(bs->second.t1 == scans[b1].t_unix_ns && seen_after.t0 == scans[a0].t_unix_ns &&
          went_down(bs->second.c1, seen_after.c0)))
      b = bs->second.rates();
    const bool appeared = !b;
    const std::string path = path_of(tl, id);
    // Outside every tenant ("/"): the host's own processes are never new; without its rates
    // before the onset (scans began in between) it names nothing.
    const bool outside = path == kOutsideTenants;
    if (outside && appeared) continue;
    const bool is_young = !outside && (appeared || absent_then(id));
    if (!is_young && b && or0(b->cores) >= kTenantCpuStep) out.other_job = true;
    if (is_young && std::isfinite(a.cores) && a.cores >= kTenantCpuStep) {
      out.young_jobs.push_back(fmt::format("{} {:.2f} cores", path, a.cores));
      young_cores += a.cores;
    }
    if (!appeared && or0(b->cores) >= kTenantActiveCores) {  // victims: a running tenant, stalled more
      const std::pair<const char*, double> res[] = {{"cpu", a.cpu_pct - b->cpu_pct},
                                                    {"memory", a.memory_pct - b->memory_pct},
                                                    {"io", a.io_pct - b->io_pct}};
      const auto* best = &res[0];
      for (const auto& r : res)
        if (std::isfinite(r.second) && (!std::isfinite(best->second) || r.second > best->second)) best = &r;
      if (std::isfinite(best->second) && best->second >= kTenantVictimStep) {
        out.old_victim |= !is_young;
        const std::string resource = best->first;
        const double was = resource == "cpu" ? b->cpu_pct : resource == "memory" ? b->memory_pct : b->io_pct;
        const double now = resource == "cpu" ? a.cpu_pct : resource == "memory" ? a.memory_pct : a.io_pct;
        victims.push_back({best->second, {path, resource, "%", was, now, false,
                                          fmt::format("{} {} pressure {:.0f} % -> {:.0f} %", path, resource, was, now)}});
      }
    }
    const double was = appeared ? 0.0 : or0(b->cores);
    const bool rose = std::isfinite(a.cores) && a.cores - was >= kTenantCpuStep && a.cores >= 1.5 * was;
    // Impact: a tenant that ran a job before, is not new and did not take more CPU itself.
    if (!outside && !is_young && !rose && b && std::isfinite(b->cores) && b->cores >= kTenantCpuStep &&
        std::isfinite(a.cores))
      impacts.push_back({path, b->cores, a.cores, std::min(1.0, a.cores / b->cores)});
    if (rose) {
      if (outside)
        outside_rise = a.cores - was;  // judged against the young jobs below
      else
        out.old_aggressor |= !is_young;
      aggressors.push_back({a.cores - was, {path, "cpu", "cores", was, a.cores, appeared,
                                            fmt::format("{} CPU {:.2f} -> {:.2f} cores{}",
                                                        outside ? kOutsideText : path, was, a.cores,
                                                        appeared ? " (new)" : "")}});
    }
  }
  // Outsiders that rose by less than the young jobs use: the kernel's work for them (reclaim,
  // kworkers), or a neighbour too small to tell; not an older job rising.
  if (outside_rise > 0 && outside_rise >= young_cores) out.old_aggressor = true;
  const auto by_rise = [](const Ranked& x, const Ranked& y) {
    return x.rise != y.rise ? x.rise > y.rise : x.ev.cgroup < y.ev.cgroup;
  };
  std::sort(victims.begin(), victims.end(), by_rise);
  std::sort(aggressors.begin(), aggressors.end(), by_rise);
  for (std::size_t k = 0; k < victims.size() && k < kTenantMax; ++k) f.victims.push_back(std::move(victims[k].ev));
  for (std::size_t k = 0; k < aggressors.size() && k < kTenantMax; ++k) f.aggressors.push_back(std::move(aggressors[k].ev));
  std::sort(impacts.begin(), impacts.end(), [](const TenantImpact& x, const TenantImpact& y) {
    return x.cores_before != y.cores_before ? x.cores_before > y.cores_before : x.cgroup < y.cgroup;
  });
  if (impacts.size() > kTenantMax) impacts.resize(kTenantMax);
  f.impacts = std::move(impacts);
  f.measured = true;
  return out;
}

}  // namespace

TenantFinding judge_tenants(const TenantTimeline& tl, std::int64_t onset, std::int64_t end) {
  return judge(tl, onset, std::min(end, onset + std::int64_t(kTenantAfterS * 1e9))).f;
}

WorkloadStartVerdict judge_workload_start(const TenantTimeline& tl, std::int64_t onset, std::int64_t now) {
  WorkloadStartVerdict v;
  const auto& scans = tl.scans;
  const std::size_t b1 = last_at_or_before(scans, onset - std::int64_t(kTenantGuardS * 1e9));
  if (b1 == std::string::npos) {
    v.state = WorkloadStartVerdict::not_start;  // no scan before the onset: nothing to judge by
    return v;
  }
  // The decisive scan: the second after the interval that holds the onset.
  if (b1 + 2 >= scans.size() || scans[b1 + 2].t_unix_ns > now) {
    v.state = now > onset + std::int64_t(kTenantAfterS * 1e9) ? WorkloadStartVerdict::not_start
                                                              : WorkloadStartVerdict::pending;
    return v;
  }
  v.decided_unix_ns = scans[b1 + 2].t_unix_ns;
  const Judged j = judge(tl, onset, scans[b1 + 2].t_unix_ns);
  if (!j.judged || !j.history || j.young_jobs.empty() || j.old_aggressor || j.old_victim || j.other_job) {
    v.state = WorkloadStartVerdict::not_start;
    return v;
  }
  v.state = WorkloadStartVerdict::start;
  std::vector<std::string> jobs = j.young_jobs;
  std::sort(jobs.begin(), jobs.end());
  v.text = "a new workload started (";
  for (std::size_t k = 0; k < jobs.size() && k < kTenantMax; ++k) v.text += (k ? "; " : "") + jobs[k];
  if (jobs.size() > kTenantMax) v.text += fmt::format("; {} more", jobs.size() - kTenantMax);
  v.text += fmt::format(", cgroups created within {:.0f} s) on a host that ran no other job, and no older tenant was "
                        "hurt: not an incident", kTenantYoungS);
  return v;
}


double job_seconds_lost(const IncidentImpact& impact, const Incident& incident) {
  if (!impact.known()) return std::nan("");
  const double duration_s = double(std::max<std::int64_t>(0, incident.end_unix_ns - incident.start_unix_ns)) * 1e-9;
  double lost = 0;
  for (const auto& t : impact.tenants) lost += (1.0 - t.throughput) * duration_s;
  return lost;
}

IncidentImpact incident_impact(const TenantFinding& f, const Incident& incident) {
  IncidentImpact m;
  m.measured = f.measured;
  if (!f.measured) return m;
  m.tenants = f.impacts;
  if (m.tenants.empty()) {
    m.basis = fmt::format("unknown: no tenant ran {:.2f} cores or more before the onset (besides new ones and "
                          "those whose CPU use rose)",
                          kTenantCpuStep);
    return m;
  }
  if (incident.subsystem == Subsystem::gpu || incident.subsystem == Subsystem::power_thermal) {
    m.basis = "unknown: CPU time does not measure a job's progress on a GPU or on throttled clocks (an incident "
              "named gpu or power_thermal)";
    return m;
  }
  m.slowdown = 1.0 - m.tenants.front().throughput;
  m.slowdown_lo = m.slowdown_hi = m.slowdown;
  for (const auto& t : m.tenants) {
    m.slowdown_lo = std::min(m.slowdown_lo, 1.0 - t.throughput);
    m.slowdown_hi = std::max(m.slowdown_hi, 1.0 - t.throughput);
  }
  m.job_seconds_lost = job_seconds_lost(m, incident);
  m.basis = "CPU time over the first " + fmt::format("{:.0f}", kTenantAfterS) + " s against the minute before: ";
  for (std::size_t k = 0; k < m.tenants.size(); ++k)
    m.basis += fmt::format("{}{} {:.2f} -> {:.2f} cores", k ? "; " : "", m.tenants[k].cgroup, m.tenants[k].cores_before,
                           m.tenants[k].cores_after);
  m.basis += " (a fault that slows each CPU-second, such as a cache or memory-bandwidth thief, is not seen)";
  return m;
}

std::string impact_text(const IncidentImpact& m) {
  if (!m.measured) return {};
  if (!m.known()) return m.basis;
  std::string o = fmt::format("{} ran at {:.0f} % of its speed (slowdown {:.0f} %", m.tenants.front().cgroup,
                              100.0 * (1.0 - m.slowdown), 100.0 * m.slowdown);
  if (m.tenants.size() > 1)
    o += fmt::format("; {} tenants: slowdown {:.0f}-{:.0f} %", m.tenants.size(), 100.0 * m.slowdown_lo,
                     100.0 * m.slowdown_hi);
  o += fmt::format("), about {:.0f} job-seconds lost", m.job_seconds_lost);
  return o;
}

void attach_tenants(Incident& incident, const TenantTimeline& timeline) {
  TenantFinding f = judge_tenants(timeline, incident.start_unix_ns, incident.end_unix_ns);
  incident.impact = incident_impact(f, incident);
  incident.victims = std::move(f.victims);
  incident.aggressors = std::move(f.aggressors);
}

}  // namespace reveal
