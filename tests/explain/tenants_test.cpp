#include "reveal/tenants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

namespace reveal {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

// A timeline of scans every 5 s from 0 to 200 s; `fill(t_s, id)` gives tenant id's counters at
// t_s, or nullopt when it does not exist then.
TenantTimeline timeline(const std::vector<std::string>& paths,
                        const std::function<std::optional<TenantCounters>(double, std::uint32_t)>& fill) {
  TenantTimeline tl;
  tl.paths = paths;
  for (int t = 0; t <= 200; t += 5) {
    TenantScan s;
    s.t_unix_ns = std::int64_t(t) * kS;
    for (std::uint32_t id = 0; id < paths.size(); ++id)
      if (auto c = fill(double(t), id)) {
        s.ids.push_back(id);
        s.counters.push_back(*c);
      }
    tl.scans.push_back(s);
  }
  return tl;
}

// Counters integrating a rate (cores, stall %) that steps from `a` to `b` at `at_s`.
double integral(double t, double at_s, double a, double b) {
  return 1e6 * (t < at_s ? a * t : a * at_s + b * (t - at_s));
}

// job: 1.6 cores and 2 % cpu pressure, then 0.9 cores and 55 % from 100 s; newcomer: appears at
// 102 s using 1.2 cores; steady: 0.5 cores throughout, no change.
TenantTimeline newcomer_timeline() {
  return timeline({"jobs/job", "jobs/newcomer", "system.slice/steady.service"}, [](double t, std::uint32_t id)
                                                                                   -> std::optional<TenantCounters> {
    TenantCounters c;
    if (id == 0) {
      c.cpu_usage_us = integral(t, 100, 1.6, 0.9);
      c.cpu_some_us = integral(t, 100, 0.02, 0.55);
      c.memory_some_us = c.io_some_us = 0;
    } else if (id == 1) {
      if (t < 102) return std::nullopt;
      c.cpu_usage_us = 1.2e6 * (t - 102);
      c.cpu_some_us = 0.3e6 * (t - 102);
    } else {
      c.cpu_usage_us = integral(t, 0, 0.5, 0.5);
      c.cpu_some_us = 0;
    }
    return c;
  });
}

TEST(Tenants, NamesTheJobHurtAndTheNewcomerUsingTheCpu) {
  const auto tl = newcomer_timeline();
  const TenantFinding f = judge_tenants(tl, 100 * kS, 160 * kS);
  ASSERT_EQ(f.victims.size(), 1u);
  EXPECT_EQ(f.victims[0].cgroup, "jobs/job");
  EXPECT_EQ(f.victims[0].resource, "cpu");
  EXPECT_EQ(f.victims[0].unit, "%");
  EXPECT_NEAR(f.victims[0].before, 2, 0.01);
  // After: the scans from 100 s to 130 s (the interval 95..100 s, which holds the onset, counts
  // for neither span).
  EXPECT_NEAR(f.victims[0].after, 55, 0.01);
  EXPECT_EQ(f.victims[0].text, "jobs/job cpu pressure 2 % -> 55 %");
  ASSERT_EQ(f.aggressors.size(), 1u);
  EXPECT_EQ(f.aggressors[0].cgroup, "jobs/newcomer");
  EXPECT_TRUE(f.aggressors[0].appeared);
  EXPECT_EQ(f.aggressors[0].before, 0);
  EXPECT_NEAR(f.aggressors[0].after, 1.2, 1e-9);
  EXPECT_EQ(f.aggressors[0].text, "jobs/newcomer CPU 0.00 -> 1.20 cores (new)");
}

// Impact (issue #22): the running tenants' CPU use before vs after, for the same timeline as
// above: the job kept 0.9 of its 1.6 cores, the steady service all of its 0.5; the newcomer (an
// aggressor, and new) is not judged.
TEST(TenantImpact, TheRunningTenantsSpeedFromTheirCpuTime) {
  const auto tl = newcomer_timeline();
  Incident inc;
  inc.subsystem = Subsystem::cpu;
  inc.start_unix_ns = 100 * kS;
  inc.end_unix_ns = 160 * kS;
  attach_tenants(inc, tl);
  const IncidentImpact& m = inc.impact;
  ASSERT_TRUE(m.measured);
  ASSERT_EQ(m.tenants.size(), 2u);
  EXPECT_EQ(m.tenants[0].cgroup, "jobs/job");
  EXPECT_NEAR(m.tenants[0].cores_before, 1.6, 1e-9);
  EXPECT_NEAR(m.tenants[0].cores_after, 0.9, 1e-9);
  EXPECT_NEAR(m.tenants[0].throughput, 0.9 / 1.6, 1e-9);
  EXPECT_EQ(m.tenants[1].cgroup, "system.slice/steady.service");
  EXPECT_NEAR(m.tenants[1].throughput, 1.0, 1e-9);
  ASSERT_TRUE(m.known());
  EXPECT_NEAR(m.slowdown, 1 - 0.9 / 1.6, 1e-9);
  EXPECT_NEAR(m.slowdown_lo, 0.0, 1e-9);
  EXPECT_NEAR(m.slowdown_hi, 1 - 0.9 / 1.6, 1e-9);
  EXPECT_NEAR(m.job_seconds_lost, (1 - 0.9 / 1.6) * 60, 1e-6);
  EXPECT_EQ(impact_text(m),
            "jobs/job ran at 56 % of its speed (slowdown 44 %; 2 tenants: slowdown 0-44 %), about 26 job-seconds lost");
  EXPECT_NE(m.basis.find("jobs/job 1.60 -> 0.90 cores"), std::string::npos) << m.basis;
  // The duration grows, the finding stays: job_seconds_lost follows (the agent's open incident).
  inc.end_unix_ns = 220 * kS;
  EXPECT_NEAR(job_seconds_lost(inc.impact, inc), (1 - 0.9 / 1.6) * 120, 1e-6);

  // CPU time is no measure of a GPU job's progress or of throttled clocks: unknown, with why.
  for (Subsystem s : {Subsystem::gpu, Subsystem::power_thermal}) {
    Incident g = inc;
    g.subsystem = s;
    attach_tenants(g, tl);
    EXPECT_TRUE(g.impact.measured);
    EXPECT_FALSE(g.impact.known());
    EXPECT_TRUE(std::isnan(g.impact.job_seconds_lost));
    EXPECT_EQ(impact_text(g.impact).rfind("unknown: CPU time does not measure", 0), 0u) << impact_text(g.impact);
  }
}

TEST(TenantImpact, UnknownWithoutARunningTenantAndAbsentWithoutScans) {
  // Only a newcomer: measured (scans on both sides), but nobody whose speed could be judged.
  const auto tl = timeline({"jobs/newcomer"}, [](double t, std::uint32_t) -> std::optional<TenantCounters> {
    if (t < 102) return std::nullopt;
    TenantCounters c;
    c.cpu_usage_us = 1.2e6 * (t - 102);
    return c;
  });
  Incident inc;
  inc.start_unix_ns = 100 * kS;
  inc.end_unix_ns = 160 * kS;
  attach_tenants(inc, tl);
  EXPECT_TRUE(inc.impact.measured);
  EXPECT_FALSE(inc.impact.known());
  EXPECT_EQ(impact_text(inc.impact).rfind("unknown: no tenant ran 0.25 cores or more", 0), 0u) << impact_text(inc.impact);
  // No scans at all: nothing measured, nothing shown.
  Incident none;
  none.start_unix_ns = 100 * kS;
  none.end_unix_ns = 160 * kS;
  attach_tenants(none, TenantTimeline{});
  EXPECT_FALSE(none.impact.measured);
  EXPECT_EQ(impact_text(none.impact), "");
}

TEST(Tenants, ProcessesOutsideEveryCgroupAreNamedAsTheNeighbour) {
  // A build in an admin's shell (no cgroup of its own): "/" from 0.05 to 1.1 cores at 100 s,
  // the job's CPU use 1.9 -> 0.9 cores and its cpu pressure 3 % -> 85 %.
  const auto tl = timeline({"jobs/job", std::string(kOutsideTenants)}, [](double t, std::uint32_t id)
                                                                           -> std::optional<TenantCounters> {
    TenantCounters c;
    if (id == 0) {
      c.cpu_usage_us = integral(t, 100, 1.9, 0.9);
      c.cpu_some_us = integral(t, 100, 0.03, 0.85);
      c.memory_some_us = c.io_some_us = 0;
    } else {
      c.cpu_usage_us = integral(t, 100, 0.05, 1.1);  // no pressure totals
    }
    return c;
  });
  const TenantFinding f = judge_tenants(tl, 100 * kS, 160 * kS);
  ASSERT_EQ(f.victims.size(), 1u);
  EXPECT_EQ(f.victims[0].cgroup, "jobs/job");
  ASSERT_EQ(f.aggressors.size(), 1u);
  EXPECT_EQ(f.aggressors[0].cgroup, "/");
  EXPECT_FALSE(f.aggressors[0].appeared);
  EXPECT_NEAR(f.aggressors[0].before, 0.05, 1e-9);
  EXPECT_NEAR(f.aggressors[0].after, 1.1, 1e-9);
  EXPECT_EQ(f.aggressors[0].text.rfind("processes outside every cgroup scanned (/", 0), 0u) << f.aggressors[0].text;
  EXPECT_NE(f.aggressors[0].text.find("CPU 0.05 -> 1.10 cores"), std::string::npos) << f.aggressors[0].text;

  // Scans of "/" that begin after the onset (an agent restarted meanwhile): it is not new, so
  // it names nothing.
  TenantTimeline late = tl;
  for (auto& sc : late.scans)
    if (sc.t_unix_ns < 100 * kS) {
      sc.ids.resize(1);
      sc.counters.resize(1);
    }
  const TenantFinding g = judge_tenants(late, 100 * kS, 160 * kS);
  EXPECT_TRUE(g.aggressors.empty());
  EXPECT_EQ(g.victims.size(), 1u);
}

TEST(Tenants, SmallRisesAndSteadyTenantsNameNobody) {
  // cpu pressure +8 points (under the 10-point step); CPU use +0.2 cores (under 0.25) and a
  // busy tenant +0.3 cores on 2.0 (not half again its level).
  const auto tl = timeline({"a", "b"}, [](double t, std::uint32_t id) -> std::optional<TenantCounters> {
    TenantCounters c;
    if (id == 0) {
      c.cpu_usage_us = integral(t, 100, 0.1, 0.3);
      c.cpu_some_us = integral(t, 100, 0.01, 0.09);
    } else {
      c.cpu_usage_us = integral(t, 100, 2.0, 2.3);
    }
    return c;
  });
  const TenantFinding f = judge_tenants(tl, 100 * kS, 190 * kS);
  EXPECT_TRUE(f.victims.empty());
  EXPECT_TRUE(f.aggressors.empty());
}

TEST(Tenants, MemoryOrIoPressureNamesItsResource) {
  const auto tl = timeline({"db"}, [](double t, std::uint32_t) -> std::optional<TenantCounters> {
    TenantCounters c;
    c.cpu_usage_us = integral(t, 0, 1, 1);
    c.cpu_some_us = integral(t, 100, 0.01, 0.05);
    c.memory_some_us = integral(t, 100, 0.0, 0.15);
    c.io_some_us = integral(t, 100, 0.0, 0.6);
    return c;
  });
  const TenantFinding f = judge_tenants(tl, 100 * kS, 200 * kS);
  ASSERT_EQ(f.victims.size(), 1u);
  EXPECT_EQ(f.victims[0].resource, "io");
}

TEST(Tenants, ARestartedCgroupOrMissingCountersNameNothing) {
  // Same path, counters back to 0 at 112 s (a container restarted within the after span): no
  // rate across the restart; "blind": every counter NaN.
  const auto tl = timeline({"svc", "blind"}, [](double t, std::uint32_t id) -> std::optional<TenantCounters> {
    TenantCounters c;
    if (id == 0) {
      c.cpu_usage_us = t < 112 ? 1e6 * t : 2e6 * (t - 112);
      c.cpu_some_us = t < 112 ? 1e4 * t : 6e5 * (t - 112);
    }
    return c;
  });
  const TenantFinding f = judge_tenants(tl, 100 * kS, 200 * kS);
  EXPECT_TRUE(f.victims.empty());
  EXPECT_TRUE(f.aggressors.empty());
}

TEST(Tenants, ACgroupRestartedAcrossTheOnsetIsANewTenant) {
  // Restarted at 97 s, between the before span's last scan and the after span's first: not a
  // victim of its own restart; its CPU use counts from 0, as a new container's.
  const auto tl = timeline({"svc"}, [](double t, std::uint32_t) -> std::optional<TenantCounters> {
    TenantCounters c;
    c.cpu_usage_us = t < 97 ? 1e6 * t : 2e6 * (t - 97);
    c.cpu_some_us = t < 97 ? 1e4 * t : 6e5 * (t - 97);
    return c;
  });
  const TenantFinding f = judge_tenants(tl, 100 * kS, 200 * kS);
  EXPECT_TRUE(f.victims.empty());
  ASSERT_EQ(f.aggressors.size(), 1u);
  EXPECT_TRUE(f.aggressors[0].appeared);
  EXPECT_EQ(f.aggressors[0].before, 0);
}

TEST(Tenants, AnIdleCgroupIsNoVictim) {
  // A cgroup that existed but ran nothing before the onset: its stall share then says nothing.
  const auto tl = timeline({"idle-then-busy"}, [](double t, std::uint32_t) -> std::optional<TenantCounters> {
    TenantCounters c;
    c.cpu_usage_us = integral(t, 100, 0.0, 0.8);
    c.cpu_some_us = integral(t, 100, 0.0, 0.9);
    return c;
  });
  const TenantFinding f = judge_tenants(tl, 100 * kS, 200 * kS);
  EXPECT_TRUE(f.victims.empty());
  ASSERT_EQ(f.aggressors.size(), 1u);
  EXPECT_FALSE(f.aggressors[0].appeared);
}

TEST(Tenants, NoScansBeforeOrAfterTheOnsetNameNothing) {
  const auto tl = timeline({"a"}, [](double t, std::uint32_t) -> std::optional<TenantCounters> {
    TenantCounters c;
    c.cpu_usage_us = integral(t, 3, 0, 2);
    c.cpu_some_us = integral(t, 3, 0, 0.9);
    return c;
  });
  EXPECT_TRUE(judge_tenants(tl, 3 * kS, 60 * kS).aggressors.empty());       // nothing before the onset
  EXPECT_TRUE(judge_tenants(tl, 400 * kS, 460 * kS).aggressors.empty());    // nothing after it
  EXPECT_TRUE(judge_tenants(TenantTimeline{}, 100 * kS, 160 * kS).victims.empty());
}

TEST(Tenants, AtMostThreeOfEachLargestRiseFirstAndTheAfterSpanEndsWithTheIncident) {
  std::vector<std::string> paths;
  for (int k = 0; k < 5; ++k) paths.push_back("hog" + std::to_string(k));
  const auto tl = timeline(paths, [](double t, std::uint32_t id) -> std::optional<TenantCounters> {
    TenantCounters c;
    c.cpu_usage_us = integral(t, 100, 0.0, 0.5 + 0.1 * id);
    c.cpu_some_us = 0;
    return c;
  });
  const TenantFinding f = judge_tenants(tl, 100 * kS, 200 * kS);
  ASSERT_EQ(f.aggressors.size(), kTenantMax);
  EXPECT_EQ(f.aggressors[0].cgroup, "hog4");
  EXPECT_EQ(f.aggressors[2].cgroup, "hog2");
  // An incident that ended 3 s after its onset: one scan after the onset (100 s), no rate.
  EXPECT_TRUE(judge_tenants(tl, 100 * kS, 103 * kS).aggressors.empty());
}

TEST(Tenants, AttachCopiesTheFindingIntoTheIncident) {
  const auto tl = timeline({"x"}, [](double t, std::uint32_t) -> std::optional<TenantCounters> {
    TenantCounters c;
    c.cpu_usage_us = integral(t, 100, 0.1, 1.9);
    return c;
  });
  Incident inc;
  inc.start_unix_ns = 100 * kS;
  inc.end_unix_ns = 150 * kS;
  inc.victims.push_back({});  // stale evidence is replaced
  attach_tenants(inc, tl);
  EXPECT_TRUE(inc.victims.empty());
  ASSERT_EQ(inc.aggressors.size(), 1u);
  EXPECT_EQ(inc.aggressors[0].cgroup, "x");
  EXPECT_FALSE(inc.aggressors[0].appeared);
}

// judge_workload_start: tenants 0 "system.slice/sshd.service" (0.1 cores throughout), 1
// "jobs/new" (appears at `new_at` using 1.5 cores, 20 % of the time stalled), 2 "jobs/old"
// (`old_cores` until `old_until`, its stall share stepping from 2 % to `old_psi` at 100 s).
struct StartCase {
  double new_at = 99, old_cores = 0, old_until = 1e9, old_psi = 2, new_low_until = -1, new_low_cores = 0.1;
};
TenantTimeline start_case(const StartCase& c) {
  return timeline({"system.slice/sshd.service", "jobs/new", "jobs/old"},
                  [c](double t, std::uint32_t id) -> std::optional<TenantCounters> {
                    TenantCounters k;
                    k.memory_some_us = k.io_some_us = 0;
                    if (id == 0) {
                      k.cpu_usage_us = integral(t, 0, 0.1, 0.1);
                      k.cpu_some_us = integral(t, 0, 0.01, 0.01);
                    } else if (id == 1) {
                      if (t < c.new_at) return std::nullopt;
                      // new_low_cores (loading) until new_low_until, then 1.5
                      const double s = t - c.new_at, lo = std::max(0.0, c.new_low_until - c.new_at), l = c.new_low_cores;
                      k.cpu_usage_us = 1e6 * (s < lo ? l * s : l * lo + 1.5 * (s - lo));
                      k.cpu_some_us = 0.2e6 * s;
                    } else {
                      if (c.old_cores <= 0 || t > c.old_until) return std::nullopt;
                      k.cpu_usage_us = integral(t, 0, c.old_cores, c.old_cores);
                      k.cpu_some_us = integral(t, 100, 0.02, c.old_psi / 100);
                    }
                    return k;
                  });
}

// `tl` with the pseudo-tenant "/" in every scan, its usage (us) at t seconds `usage_us(t)`.
TenantTimeline plus_outside(TenantTimeline tl, const std::function<double(double)>& usage_us) {
  const auto id = std::uint32_t(tl.paths.size());
  tl.paths.emplace_back(kOutsideTenants);
  for (auto& sc : tl.scans) {
    TenantCounters c;
    c.cpu_usage_us = usage_us(double(sc.t_unix_ns) / double(kS));
    sc.ids.push_back(id);
    sc.counters.push_back(c);
  }
  return tl;
}

TEST(WorkloadStart, ANewCgroupOnAHostRunningNoOtherJobIsAStartDecidedAtTheSecondScanAfterTheOnset) {
  const auto tl = start_case({});
  // Scans every 5 s; onset 100 s: the before span ends at 95 s, the interval 95–100 s holds the
  // onset, the decisive scan is 105 s.
  EXPECT_EQ(judge_workload_start(tl, 100 * kS, 104 * kS).state, WorkloadStartVerdict::pending);
  const auto v = judge_workload_start(tl, 100 * kS, 105 * kS);
  EXPECT_EQ(v.state, WorkloadStartVerdict::start);
  EXPECT_EQ(v.decided_unix_ns, 105 * kS);
  EXPECT_NE(v.text.find("jobs/new 1.50 cores"), std::string::npos) << v.text;
  // Later calls give the same verdict (the after span ends at the decisive scan).
  const auto later = judge_workload_start(tl, 100 * kS, 190 * kS);
  EXPECT_EQ(later.state, WorkloadStartVerdict::start);
  EXPECT_EQ(later.text, v.text);
}

TEST(WorkloadStart, NotBesideAJobThatRunsOnNorWhenSomeoneIsHurt) {
  // Another job at 1 core before and after: the newcomer could slow it down (a cache thief
  // shows no stall): an incident.
  EXPECT_EQ(judge_workload_start(start_case({.old_cores = 1.0}), 100 * kS, 200 * kS).state,
            WorkloadStartVerdict::not_start);
  // The same job stopping before the onset (a job switch): nothing left to hurt.
  EXPECT_EQ(judge_workload_start(start_case({.old_cores = 1.0, .old_until = 92}), 100 * kS, 200 * kS).state,
            WorkloadStartVerdict::start);
  // A small tenant (0.1 cores, below a job's 0.25) whose stall share rises 2 -> 40 %: a victim.
  EXPECT_EQ(judge_workload_start(start_case({.old_cores = 0.1, .old_psi = 40}), 100 * kS, 200 * kS).state,
            WorkloadStartVerdict::not_start);
  // ... and the same tenant not hurt: a start.
  EXPECT_EQ(judge_workload_start(start_case({.old_cores = 0.1}), 100 * kS, 200 * kS).state,
            WorkloadStartVerdict::start);
}

TEST(WorkloadStart, NotBesideBusyProcessesOutsideEveryCgroup) {
  // The start case plus "/" at `outside` cores throughout: a build running beside it is a job
  // the newcomer could slow down; the host's own few percent are not.
  const auto with_outside = [](double outside) {
    return plus_outside(start_case({}), [outside](double t) { return integral(t, 0, outside, outside); });
  };
  EXPECT_EQ(judge_workload_start(with_outside(0.03), 100 * kS, 200 * kS).state, WorkloadStartVerdict::start);
  EXPECT_EQ(judge_workload_start(with_outside(1.0), 100 * kS, 200 * kS).state, WorkloadStartVerdict::not_start);
}

TEST(WorkloadStart, TheKernelsWorkForANewJobIsNoOlderAggressor) {
  // "/" at 0.05 cores, rising at the onset by `rise` cores with the newcomer's 1.5: reclaim and
  // kworkers for the new job (less than it uses) leave it a start; an outsider rising by as much
  // as the newcomer uses (a build started with it) does not.
  const auto with_rise = [](double rise) {
    return plus_outside(start_case({}), [rise](double t) { return integral(t, 99, 0.05, 0.05 + rise); });
  };
  const auto f = judge_tenants(with_rise(0.4), 100 * kS, 160 * kS);
  ASSERT_EQ(f.aggressors.size(), 2u);  // named all the same: the newcomer first
  EXPECT_EQ(f.aggressors[0].cgroup, "jobs/new");
  EXPECT_EQ(f.aggressors[1].cgroup, "/");
  EXPECT_EQ(judge_workload_start(with_rise(0.4), 100 * kS, 200 * kS).state, WorkloadStartVerdict::start);
  EXPECT_EQ(judge_workload_start(with_rise(1.6), 100 * kS, 200 * kS).state, WorkloadStartVerdict::not_start);
}

TEST(WorkloadStart, TheNewcomerMustBeYoung) {
  // Created at 72 s, loading at 0.1 cores, busy from 99 s: absent from the last scan 30 s
  // before the onset (70 s), so young: a start.
  EXPECT_EQ(judge_workload_start(start_case({.new_at = 72, .new_low_until = 99}), 100 * kS, 200 * kS).state,
            WorkloadStartVerdict::start);
  // Created at 20 s: there all along, a phase of an old job: not this rule's.
  EXPECT_EQ(judge_workload_start(start_case({.new_at = 20, .new_low_until = 99}), 100 * kS, 200 * kS).state,
            WorkloadStartVerdict::not_start);
  // Busy since its creation at 80 s (no rise across the onset: no aggressor), its own stalls
  // opening a later incident of its start: still young, still a start. Created at 65 s: not.
  EXPECT_EQ(judge_workload_start(start_case({.new_at = 80}), 100 * kS, 200 * kS).state, WorkloadStartVerdict::start);
  EXPECT_EQ(judge_workload_start(start_case({.new_at = 65}), 100 * kS, 200 * kS).state,
            WorkloadStartVerdict::not_start);
  // An empty cgroup there all along (0 cores) whose job starts at 99 s: as new as a new one.
  EXPECT_EQ(judge_workload_start(start_case({.new_at = 0, .new_low_until = 99, .new_low_cores = 0}), 100 * kS, 200 * kS).state,
            WorkloadStartVerdict::start);
  // No aggressor at all (nothing new used the CPU): not a start.
  EXPECT_EQ(judge_workload_start(start_case({.new_at = 1e9}), 100 * kS, 200 * kS).state,
            WorkloadStartVerdict::not_start);
}

TEST(WorkloadStart, UndecidableWithoutHistoryOrScans) {
  auto tl = start_case({});
  // Scans that stop at the onset: pending for kTenantAfterS, then not a start.
  TenantTimeline cut = tl;
  cut.scans.resize(21);  // 0 .. 100 s
  EXPECT_EQ(judge_workload_start(cut, 100 * kS, 120 * kS).state, WorkloadStartVerdict::pending);
  EXPECT_EQ(judge_workload_start(cut, 100 * kS, 131 * kS).state, WorkloadStartVerdict::not_start);
  // Scans that began 20 s before the onset: youth cannot be judged.
  TenantTimeline young = tl;
  young.scans.erase(young.scans.begin(), young.scans.begin() + 16);  // from 80 s
  EXPECT_EQ(judge_workload_start(young, 100 * kS, 200 * kS).state, WorkloadStartVerdict::not_start);
  // No scan before the onset, or none at all.
  EXPECT_EQ(judge_workload_start(tl, -10 * kS, 200 * kS).state, WorkloadStartVerdict::not_start);
  EXPECT_EQ(judge_workload_start(TenantTimeline{}, 100 * kS, 200 * kS).state, WorkloadStartVerdict::not_start);
}

}  // namespace
}  // namespace reveal
