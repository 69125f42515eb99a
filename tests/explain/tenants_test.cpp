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

TEST(Tenants, NamesTheJobHurtAndTheNewcomerUsingTheCpu) {
  // job: 1.6 cores and 2 % cpu pressure, then 0.9 cores and 55 % from 100 s; newcomer: appears at
  // 102 s using 1.2 cores; steady: 0.5 cores throughout, no change.
  const auto tl = timeline({"jobs/job", "jobs/newcomer", "system.slice/steady.service"}, [](double t, std::uint32_t id)
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

}  // namespace
}  // namespace reveal
