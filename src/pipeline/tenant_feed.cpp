// The tenant scans' part of live detection (agent and replay); contract in
// include/reveal/streaming.h (TenantFeed).
#include <algorithm>

#include "reveal/streaming.h"
#include "reveal/tenants.h"

namespace reveal {

void TenantFeed::Follow::apply(Incident& inc, const TenantTimeline& tenants, std::int64_t latest) {
  if (inc.start_unix_ns != onset) {  // a new episode (or one re-dated by a restart)
    onset = inc.start_unix_ns;
    frozen = false;
    impact_valid = false;
    start_decided = false;
  }
  // The after span ends at min(end, onset + kTenantAfterS): judged again whenever that moves
  // (the open episode grows; a closing incident's end goes back to its last anomalous window),
  // so the finding is a function of the episode's start and end alone, whenever the close was
  // decided; frozen once the scans cover the whole span.
  const std::int64_t after_end = std::min(inc.end_unix_ns, inc.start_unix_ns + std::int64_t(kTenantAfterS * 1e9));
  if (!frozen || after_end != judged_end) {
    finding = judge_tenants(tenants, inc.start_unix_ns, inc.end_unix_ns);
    judged_end = after_end;
    frozen = latest >= after_end;
    impact_valid = false;
  }
  // The cost (incident_impact()): computed again only when the finding was, or the episode
  // moved to or from a subsystem CPU time cannot measure; copied in (into the buffers the
  // episode holds already) with the duration it has now.
  const bool cpu_measures = inc.subsystem != Subsystem::gpu && inc.subsystem != Subsystem::power_thermal;
  if (!impact_valid || cpu_measures != impact_cpu_measures) {
    impact = incident_impact(finding, inc);
    impact_cpu_measures = cpu_measures;
    impact_valid = true;
  }
  inc.impact = impact;
  inc.impact.job_seconds_lost = job_seconds_lost(inc.impact, inc);
  inc.victims = finding.victims;
  inc.aggressors = finding.aggressors;
}

bool TenantFeed::after_push(StreamingDetector& detector, const StreamUpdate& u, const TenantTimeline& tenants,
                            std::int64_t now) {
  const auto& scans = tenants.scans;
  const auto it = std::upper_bound(scans.begin(), scans.end(), now,
                                   [](std::int64_t t, const TenantScan& s) { return t < s.t_unix_ns; });
  if (it == scans.begin()) return false;  // no scan taken yet
  const std::int64_t latest = std::prev(it)->t_unix_ns;
  if (u.closed)
    if (Incident* c = detector.last_closed_for_evidence()) incident_.apply(*c, tenants, latest);
  // An ended workload change (a transient among them) is judged over the span it ended with,
  // by the follower that followed it: a withdrawn incident's by the incident's, so the open
  // incident's state is left alone when that is another; one never seen open (it began and
  // ended between two pushes that showed it) by the change's, from scratch.
  if (u.change_closed)
    if (Incident* c = detector.last_change_for_evidence()) {
      if (c->start_unix_ns == incident_.onset) incident_.apply(*c, tenants, latest);
      else change_.apply(*c, tenants, latest);
    }
  // The open workload change: followed like an incident, so that /incidents names its tenants
  // while it lasts and its close reuses what the scans of its start said (the agent keeps only
  // recent scans). A withdrawn incident's change goes on with the incident's follower.
  if (Incident* ch = detector.active_change_for_evidence())
    (ch->start_unix_ns == incident_.onset ? incident_ : change_).apply(*ch, tenants, latest);
  Incident* a = detector.active_for_evidence();
  if (!a) return false;
  // A change that kept drifting became this incident, with the change's start: it goes on with
  // what the change's follower judged from the scans of that start (the agent's recent scans
  // may hold them no more), and its start was judged a change already.
  if (a->start_unix_ns != incident_.onset && a->start_unix_ns == change_.onset) {
    incident_ = change_;
    incident_.start_decided = true;
  }
  incident_.apply(*a, tenants, latest);
  // A workload change that kept drifting is an incident as a whole: its start was a change
  // already, and a leak in a job that just started is still a leak.
  if (incident_.start_decided || a->drifted) return false;
  const WorkloadStartVerdict v = judge_workload_start(tenants, a->start_unix_ns, now);
  if (v.state == WorkloadStartVerdict::pending) return false;
  incident_.start_decided = true;
  return v.state == WorkloadStartVerdict::start && detector.withdraw_incident(a->start_unix_ns, v.text);
}

}  // namespace reveal
