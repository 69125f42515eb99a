#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "reveal/streaming.h"
#include "reveal/tenants.h"

namespace reveal {
namespace {

constexpr std::int64_t kT0 = std::int64_t(1'700'000'000) * 1'000'000'000;
constexpr std::int64_t kS = 1'000'000'000;



// Tenant scans every 5 s: "job" uses 1 core throughout; "hog" idles, then uses 2 cores over
// [hog_from, hog_to) seconds.
TenantTimeline scans(double hog_from, double hog_to, int seconds) {
  TenantTimeline tl;
  tl.paths = {"job", "hog"};
  double job_us = 0, hog_us = 0;
  for (int t = 0; t <= seconds; t += 5) {
    TenantScan s;
    s.t_unix_ns = kT0 + std::int64_t(t) * kS;
    s.ids = {0, 1};
    s.counters.resize(2);
    s.counters[0].cpu_usage_us = job_us;
    s.counters[1].cpu_usage_us = hog_us;
    for (auto& c : s.counters) c.cpu_some_us = c.memory_some_us = c.io_some_us = 0;
    tl.scans.push_back(s);
    for (int k = t; k < t + 5; ++k) {
      job_us += 1e6;
      if (k >= hog_from && k < hog_to) hog_us += 2e6;
    }
  }
  return tl;
}

// The tenants a closed incident names are those of its final start and end, as `reveal
// detect` judges them on the same scans (judge_tenants), fed one sample at a time as the agent
// does. (The case where the open incident's end had run past onset + kTenantAfterS before the
// close took it back is checked on real cgroups by tests/cli/e2e_tenants_test.sh: live and the
// replay name the same CPU use.)
TEST(TenantFeed, AClosedIncidentsTenantsAreThoseOfItsFinalSpan) {
  std::vector<ChannelInfo> ch = {{"test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                 {"test:mem_used", "%", Kind::gauge, Subsystem::memory}};
  RunMetadata meta;
  meta.cores = 4;
  StreamingOptions o;
  o.warmup_samples = 60;
  o.refit_samples = 30;
  o.history_samples = 300;
  o.workload_changes = false;
  StreamingDetector d(meta, ch, o);
  TenantFeed feed;
  const std::size_t onset = 150, end = 178;  // the shift; the hog runs over the same seconds
  const TenantTimeline tl = scans(double(onset), double(end), 260);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (std::size_t i = 0; i < 260; ++i) {
    const bool fault = i >= onset && i < end;
    const std::vector<double> row = {50 + 3 * noise(rng), 40 + 2 * noise(rng) + (fault ? 30 : 0)};
    const std::int64_t t = kT0 + std::int64_t(i) * kS;
    const StreamUpdate& u = d.push(t, row);
    feed.after_push(d, u, tl, t);
  }
  ASSERT_EQ(d.closed().size(), 1u);
  const Incident& inc = d.closed()[0];
  ASSERT_LT(inc.end_unix_ns, inc.start_unix_ns + 30 * kS) << "the test needs an end inside the after span";
  const TenantFinding want = judge_tenants(tl, inc.start_unix_ns, inc.end_unix_ns);
  ASSERT_EQ(want.aggressors.size(), 1u);
  ASSERT_EQ(inc.aggressors.size(), 1u);
  EXPECT_EQ(inc.aggressors[0].cgroup, "hog");
  EXPECT_DOUBLE_EQ(inc.aggressors[0].after, want.aggressors[0].after);
  EXPECT_EQ(inc.aggressors[0].text, want.aggressors[0].text);
}

// The detector's options for the tests below, which tell workload changes apart (and so
// transients and drifts): a 60-s warm-up, a 30-s relearn.
StreamingOptions telling_changes() {
  StreamingOptions o;
  o.warmup_samples = 60;
  o.refit_samples = 120;
  o.history_samples = 600;
  o.relearn_samples = 30;
  return o;
}

// A transient (an incident whose symptoms ended before min_duration) names the tenants of the
// span it ended with, as `reveal detect` and the replay judge it: a 4-s stall in a 14-s load
// shift while a hog ran. While it was open, its end followed the load, and the hog's 2 cores
// named it; the final span ends at the last symptom and so holds no full scan interval after
// the onset: nothing can be judged over it.
TEST(TenantFeed, ATransientsTenantsAreThoseOfTheSpanItEndedWith) {
  std::vector<ChannelInfo> ch = {{"test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                 {"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu}};
  StreamingDetector d({}, ch, telling_changes());
  TenantFeed feed;
  const std::size_t onset = 150, stall_end = 154, load_end = 164;
  const TenantTimeline tl = scans(double(onset), double(load_end), 220);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 1.0);
  bool named_while_open = false;
  for (std::size_t i = 0; i < 220; ++i) {
    const bool stall = i >= onset && i < stall_end, load = i >= onset && i < load_end;
    const std::vector<double> row = {(load ? 95 : 60) + 2 * noise(rng),
                                     std::max(0.0, (stall ? 30 : 1) + 0.5 * noise(rng))};
    const std::int64_t t = kT0 + std::int64_t(i) * kS;
    const StreamUpdate& u = d.push(t, row);
    feed.after_push(d, u, tl, t);
    if (const Incident* a = d.active_for_evidence()) named_while_open |= !a->aggressors.empty();
  }
  ASSERT_TRUE(d.closed().empty());
  ASSERT_EQ(d.transients_total(), 1u);
  const auto it = std::find_if(d.workload_changes().begin(), d.workload_changes().end(),
                               [](const Incident& c) { return c.kind == "transient"; });
  ASSERT_NE(it, d.workload_changes().end());
  const Incident& tr = *it;
  EXPECT_TRUE(named_while_open) << "the test needs a finding while open that the final span does not hold";
  const TenantFinding want = judge_tenants(tl, tr.start_unix_ns, tr.end_unix_ns);
  EXPECT_EQ(tr.aggressors.size(), want.aggressors.size());
  EXPECT_EQ(tr.victims.size(), want.victims.size());
  EXPECT_TRUE(tr.aggressors.empty());
}

// A job starts in a new cgroup on an otherwise idle host (its load moves, no symptom: a
// workload change) and leaks: the change keeps drifting and becomes an incident. Its onset was
// judged a change already, so the tenant scans do not withdraw it as a new workload starting
// (a leak in a job that just started is a leak), and `reveal detect` keeps it too.
TEST(TenantFeed, ALeakInAJobThatJustStartedIsNotWithdrawn) {
  std::vector<ChannelInfo> ch = {{"test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                 {"test:mem_used", "GiB", Kind::gauge, Subsystem::memory},
                                 {"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu}};
  constexpr double kSlope = 0.3;  // GiB/s: fast enough that the change never settles into a regime
  StreamingDetector d({}, ch, telling_changes());
  TenantFeed feed;
  TenantTimeline tl;  // "jobs/new" appears at 150 s and runs 1.5 cores
  tl.paths = {"jobs/new"};
  for (int t = 0; t <= 420; t += 5) {
    TenantScan s;
    s.t_unix_ns = kT0 + std::int64_t(t) * kS;
    if (t >= 150) {
      s.ids.push_back(0);
      s.counters.push_back({1.5e6 * (t - 150), 0, 0, 0});
    }
    tl.scans.push_back(std::move(s));
  }
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0.0, 1.0);
  bool opened = false;
  for (std::size_t i = 0; i < 420; ++i) {
    const bool job = i >= 150;
    const std::vector<double> row = {(job ? 75 : 40) + 2 * noise(rng),
                                     (job ? 4 + kSlope * double(i - 150) : 3) + 0.1 * noise(rng),
                                     std::max(0.0, 0.5 + 0.5 * noise(rng))};
    const std::int64_t t = kT0 + std::int64_t(i) * kS;
    const StreamUpdate& u = d.push(t, row);
    feed.after_push(d, u, tl, t);
    opened |= u.opened;
  }
  EXPECT_TRUE(opened);
  ASSERT_TRUE(d.active());
  EXPECT_TRUE(d.active()->drifted);
  EXPECT_LT(d.active()->start_unix_ns, kT0 + 160 * kS) << "the test needs the drift dated at the job's start";
  EXPECT_EQ(d.incidents_withdrawn_total(), 0u);
}

// A job starts in a new cgroup (its load moves, no symptom: a workload change that opens as
// one). The feed names the change's tenants while it is open (/incidents shows them), and the
// ended change keeps what the scans of its start said although the agent keeps only recent
// scans (here the last 100 s): judged again at its end over those, it would name nobody.
TEST(TenantFeed, AWorkloadChangeNamesItsTenantsFromTheScansOfItsStart) {
  std::vector<ChannelInfo> ch = {{"test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                 {"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu}};
  StreamingOptions o = telling_changes();
  o.relearn_samples = 150;  // a change that lasts longer than the scans kept
  StreamingDetector d({}, ch, o);
  TenantFeed feed;
  TenantTimeline all;  // "jobs/old" runs 0.2 cores throughout; "jobs/new" appears at 150 s with 1.5
  all.paths = {"jobs/old", "jobs/new"};
  for (int t = 0; t <= 500; t += 5) {
    TenantScan s;
    s.t_unix_ns = kT0 + std::int64_t(t) * kS;
    s.ids.push_back(0);
    s.counters.push_back({0.2e6 * t, 0, 0, 0});
    if (t >= 150) {
      s.ids.push_back(1);
      s.counters.push_back({1.5e6 * (t - 150), 0, 0, 0});
    }
    all.scans.push_back(std::move(s));
  }
  const auto recent = [&](std::int64_t now) {  // the scans of the last 100 s, as the agent keeps 150 s
    TenantTimeline tl;
    tl.paths = all.paths;
    for (const TenantScan& s : all.scans)
      if (s.t_unix_ns <= now && s.t_unix_ns >= now - 100 * kS) tl.scans.push_back(s);
    return tl;
  };
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0.0, 1.0);
  bool named_while_open = false;
  for (std::size_t i = 0; i < 500; ++i) {
    const std::vector<double> row = {(i >= 150 ? 75 : 40) + 2 * noise(rng), std::max(0.0, 0.5 + 0.5 * noise(rng))};
    const std::int64_t t = kT0 + std::int64_t(i) * kS;
    const StreamUpdate& u = d.push(t, row);
    feed.after_push(d, u, recent(t), t);
    if (const auto& c = d.active_change(); c && c->kind == "workload_change")
      for (const auto& a : c->aggressors) named_while_open |= a.cgroup == "jobs/new";
  }
  EXPECT_TRUE(d.closed().empty() && !d.active()) << "the test needs a workload change, not an incident";
  EXPECT_TRUE(named_while_open);
  const auto it = std::find_if(d.workload_changes().begin(), d.workload_changes().end(), [](const Incident& c) {
    return c.kind == "workload_change" && c.start_unix_ns >= kT0 + 145 * kS && c.start_unix_ns <= kT0 + 160 * kS;
  });
  ASSERT_NE(it, d.workload_changes().end());
  const Incident& c = *it;
  ASSERT_GT(c.end_unix_ns, c.start_unix_ns + 110 * kS) << "the test needs a change that outlasts the recent scans";
  EXPECT_TRUE(judge_tenants(recent(c.end_unix_ns), c.start_unix_ns, c.end_unix_ns).aggressors.empty())
      << "the test needs scans at the end that no longer hold the start";
  const TenantFinding want = judge_tenants(all, c.start_unix_ns, c.end_unix_ns);
  ASSERT_FALSE(want.aggressors.empty());
  ASSERT_EQ(c.aggressors.size(), want.aggressors.size());
  EXPECT_EQ(c.aggressors[0].cgroup, "jobs/new");
  EXPECT_EQ(c.aggressors[0].text, want.aggressors[0].text);
}

// The same leak fed with only the last 60 s of scans (a short-memory agent): the change that
// drifts into an incident about 90 s after the job's start keeps the tenants its follower
// judged from the scans of that start; judged again when it became an incident, it would have
// named nobody.
TEST(TenantFeed, AChangeThatDriftsIntoAnIncidentKeepsItsTenants) {
  std::vector<ChannelInfo> ch = {{"test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                 {"test:mem_used", "GiB", Kind::gauge, Subsystem::memory},
                                 {"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu}};
  constexpr double kSlope = 0.3;
  StreamingDetector d({}, ch, telling_changes());
  TenantFeed feed;
  TenantTimeline all;  // "jobs/old" 0.2 cores throughout; "jobs/new" appears at 150 s with 1.5
  all.paths = {"jobs/old", "jobs/new"};
  for (int t = 0; t <= 420; t += 5) {
    TenantScan s;
    s.t_unix_ns = kT0 + std::int64_t(t) * kS;
    s.ids.push_back(0);
    s.counters.push_back({0.2e6 * t, 0, 0, 0});
    if (t >= 150) {
      s.ids.push_back(1);
      s.counters.push_back({1.5e6 * (t - 150), 0, 0, 0});
    }
    all.scans.push_back(std::move(s));
  }
  const auto recent = [&](std::int64_t now) {
    TenantTimeline tl;
    tl.paths = all.paths;
    for (const TenantScan& s : all.scans)
      if (s.t_unix_ns <= now && s.t_unix_ns >= now - 60 * kS) tl.scans.push_back(s);
    return tl;
  };
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::int64_t drifted_at = 0;
  for (std::size_t i = 0; i < 420; ++i) {
    const bool job = i >= 150;
    const std::vector<double> row = {(job ? 75 : 40) + 2 * noise(rng),
                                     (job ? 4 + kSlope * double(i - 150) : 3) + 0.1 * noise(rng),
                                     std::max(0.0, 0.5 + 0.5 * noise(rng))};
    const std::int64_t t = kT0 + std::int64_t(i) * kS;
    const StreamUpdate& u = d.push(t, row);
    feed.after_push(d, u, recent(t), t);
    if (!drifted_at && d.active() && d.active()->drifted) drifted_at = t;
  }
  ASSERT_TRUE(d.active());
  ASSERT_TRUE(d.active()->drifted);
  const Incident& inc = *d.active();
  ASSERT_GT(drifted_at, inc.start_unix_ns + 70 * kS) << "the test needs a drift declared after the start's scans are gone";
  EXPECT_TRUE(judge_tenants(recent(drifted_at), inc.start_unix_ns, inc.end_unix_ns).aggressors.empty())
      << "the test needs scans at the drift that no longer hold the start";
  const TenantFinding want = judge_tenants(all, inc.start_unix_ns, inc.end_unix_ns);
  ASSERT_FALSE(want.aggressors.empty());
  ASSERT_EQ(inc.aggressors.size(), want.aggressors.size());
  EXPECT_EQ(inc.aggressors[0].cgroup, "jobs/new");
  EXPECT_EQ(d.incidents_withdrawn_total(), 0u);
}

}  // namespace
}  // namespace reveal
