// The tenant scans' part of live detection (agent and replay); contract in
// include/reveal/streaming.h (TenantFeed).
#include <algorithm>

#include "reveal/streaming.h"
#include "reveal/tenants.h"

namespace reveal {

bool TenantFeed::after_push(StreamingDetector& detector, const StreamUpdate& u, const TenantTimeline& tenants,
                            std::int64_t now) {
  const auto& scans = tenants.scans;
  const auto it = std::upper_bound(scans.begin(), scans.end(), now,
                                   [](std::int64_t t, const TenantScan& s) { return t < s.t_unix_ns; });
  if (it == scans.begin()) return false;  // no scan taken yet
  const std::int64_t latest = std::prev(it)->t_unix_ns;
  const auto apply = [&](Incident& inc) {
    if (inc.start_unix_ns != onset_) {  // a new incident (or one re-dated by a restart)
      onset_ = inc.start_unix_ns;
      frozen_ = false;
      impact_valid_ = false;
      start_decided_ = false;
    }
    // The after span ends at min(end, onset + kTenantAfterS): judged again whenever that moves
    // (the open incident grows; a closing incident's end goes back to its last anomalous
    // window), so the finding is a function of the incident's start and end alone, whenever
    // the close was decided; frozen once the scans cover the whole span.
    const std::int64_t after_end = std::min(inc.end_unix_ns, inc.start_unix_ns + std::int64_t(kTenantAfterS * 1e9));
    if (!frozen_ || after_end != judged_end_) {
      finding_ = judge_tenants(tenants, inc.start_unix_ns, inc.end_unix_ns);
      judged_end_ = after_end;
      frozen_ = latest >= after_end;
      impact_valid_ = false;
    }
    // The cost (incident_impact()): computed again only when the finding was, or the incident
    // moved to or from a subsystem CPU time cannot measure; copied in (into the buffers the
    // incident holds already) with the duration it has now.
    const bool cpu_measures = inc.subsystem != Subsystem::gpu && inc.subsystem != Subsystem::power_thermal;
    if (!impact_valid_ || cpu_measures != impact_cpu_measures_) {
      impact_ = incident_impact(finding_, inc);
      impact_cpu_measures_ = cpu_measures;
      impact_valid_ = true;
    }
    inc.impact = impact_;
    inc.impact.job_seconds_lost = job_seconds_lost(inc.impact, inc);
    inc.victims = finding_.victims;
    inc.aggressors = finding_.aggressors;
  };
  if (u.closed)
    if (Incident* c = detector.last_closed_for_evidence()) apply(*c);
  // An incident that ended as a transient (or a withdrawn one that ended) is judged over the
  // span it ended with, as its close is: only the one being followed, so the open episode's
  // state is left alone.
  if (u.change_closed)
    if (Incident* c = detector.last_change_for_evidence(); c && c->start_unix_ns == onset_) apply(*c);
  Incident* a = detector.active_for_evidence();
  if (!a) return false;
  apply(*a);
  // A workload change that kept drifting is an incident as a whole: its start was a change
  // already, and a leak in a job that just started is still a leak.
  if (start_decided_ || a->drifted) return false;
  const WorkloadStartVerdict v = judge_workload_start(tenants, a->start_unix_ns, now);
  if (v.state == WorkloadStartVerdict::pending) return false;
  start_decided_ = true;
  return v.state == WorkloadStartVerdict::start && detector.withdraw_incident(a->start_unix_ns, v.text);
}

}  // namespace reveal
