// detect_streaming (`reveal detect --streaming`): a recording replayed through the agent's
// detector gives what pushing it sample by sample gives, with incidents, workload changes and
// absences, timed from the recording's first sample.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "reveal/recording_feed.h"
#include "reveal/streaming.h"
#include "reveal/tenants.h"

namespace reveal {
namespace {

constexpr std::int64_t kT0 = std::int64_t(1'700'000'000) * 1'000'000'000;

// 1 Hz synthetic host: CPU busy % (load), memory used % (load), CPU pressure stall % (symptom),
// a received-bytes counter (load), and a GPU power gauge that stops reporting at `gpu_lost`.
Recording host_day(std::size_t n, std::size_t job_at, std::size_t stall_at, std::size_t stall_len, std::size_t gpu_lost) {
  Recording r;
  r.meta.hostname = "test";
  r.meta.cores = 2;
  r.meta.interval_s = 1.0;
  r.channels = {{"derived_src:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                {"test:mem_used", "%", Kind::gauge, Subsystem::memory},
                {"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu},
                {"test:rx_bytes", "bytes", Kind::counter, Subsystem::network},
                {"nvml:power_usage.gpu0", "W", Kind::gauge, Subsystem::gpu}};
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0.0, 1.0);
  r.values = Matrix(n, r.channels.size(), 0.0);
  double rx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    r.t_unix_ns.push_back(kT0 + std::int64_t(i) * 1'000'000'000);
    const bool job = i >= job_at, stall = i >= stall_at && i < stall_at + stall_len;
    rx += (job ? 2e7 : 5e6) + 2e5 * noise(rng);
    auto row = r.values.row(i);
    row[0] = (job ? 75 : 20) + 2 * noise(rng);
    row[1] = (job ? 55 : 30) + noise(rng);
    row[2] = std::max(0.0, (stall ? 40 : 0.5) + 0.5 * noise(rng));
    row[3] = rx;
    row[4] = i >= gpu_lost ? std::nan("") : 300 + noise(rng);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  return r;
}

// The agent's options at 1 Hz (reveal/agent_config.h streaming_options), with a shorter warm-up.
StreamingOptions options() {
  StreamingOptions o;
  o.warmup_samples = 60;
  o.settle_samples = 10;
  o.refit_samples = 120;
  o.history_samples = 600;
  return o;
}

TEST(DetectStreaming, MatchesPushingSampleBySample) {
  const Recording rec = host_day(700, 200, 450, 40, 100000);
  const StreamingOptions o = options();
  const DetectResult r = detect_streaming(rec, o);

  StreamingDetector d(rec.meta, rec.channels, o);
  std::vector<Incident> incidents, changes;
  std::size_t scored = 0;
  for (std::size_t i = 0; i < rec.t_unix_ns.size(); ++i) {
    const StreamUpdate& u = d.push(rec.t_unix_ns[i], rec.values.row(i));
    scored += u.scored;
    if (u.closed) incidents.push_back(d.closed().back());
    if (u.change_closed) changes.push_back(d.workload_changes().back());
  }
  if (d.active()) incidents.push_back(*d.active());
  if (d.active_change()) changes.push_back(*d.active_change());

  EXPECT_EQ(r.mode, "streaming");
  EXPECT_EQ(r.n_samples, 700u);
  EXPECT_EQ(r.fused.size(), scored);
  ASSERT_EQ(r.incidents.size(), incidents.size());
  for (std::size_t k = 0; k < incidents.size(); ++k) {
    EXPECT_EQ(r.incidents[k].start_unix_ns, incidents[k].start_unix_ns);
    EXPECT_EQ(r.incidents[k].end_unix_ns, incidents[k].end_unix_ns);
    EXPECT_EQ(r.incidents[k].subsystem, incidents[k].subsystem);
  }
  ASSERT_EQ(r.workload_changes.size(), changes.size());
  // The job start is a workload change, the stall an incident at its onset.
  ASSERT_GE(r.workload_changes.size(), 1u);
  EXPECT_EQ(r.workload_changes[0].kind, "workload_change");
  EXPECT_NEAR(r.workload_changes[0].start_s, 200.0, 4.0);
  ASSERT_EQ(r.incidents.size(), 1u);
  EXPECT_NEAR(r.incidents[0].start_s, 450.0, 4.0);
  EXPECT_EQ(r.incidents[0].subsystem, Subsystem::cpu);
  // Seconds count from the recording's first sample, not the detector's first row (it skips
  // the agent's 10 s start-up).
  EXPECT_DOUBLE_EQ(r.incidents[0].start_s, double(r.incidents[0].start_unix_ns - kT0) * 1e-9);
  EXPECT_EQ(r.origin_unix_ns, kT0);
}

TEST(DetectStreaming, ReportsAbsencesAndWhatIsStillOpenAtTheEnd) {
  // The GPU stops reporting at 300; a stall starts at 680 and lasts past the end (700).
  const DetectResult r = detect_streaming(host_day(700, 100000, 680, 100, 300), options());
  std::size_t absences = 0, anomalies = 0;
  for (const auto& inc : r.incidents) {
    absences += inc.kind == "absence";
    anomalies += inc.kind == "anomaly";
  }
  EXPECT_EQ(absences, 1u);
  ASSERT_EQ(anomalies, 1u);
  const Incident& last = r.incidents.back();
  EXPECT_EQ(last.kind, "anomaly");
  EXPECT_NEAR(last.start_s, 680.0, 4.0);
  EXPECT_NEAR(last.end_s, 699.0, 1.0);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("still open") != std::string::npos;
  EXPECT_TRUE(noted);
}

// The agent restarted during a stall (an agent_restart event in the store): the replay ends the
// incident where the stopped agent's samples end, as the agent did when it stopped
// (StreamingDetector::end_segment), and goes on as the restarted agent did: a reference fitted
// on the history at once (StreamingDetector::restart), no rate across the gap, a new settle.
TEST(DetectStreaming, AnAgentRestartEndsWhatWasOpenAndStartsAsTheRestartedAgentDid) {
  Recording rec = host_day(700, 200, 450, 100, 100000);
  const auto t = [](std::size_t i) { return kT0 + std::int64_t(i) * 1'000'000'000; };
  rec.events = {{t(480) + 500'000'000, "agent", "agent_restart", 0.5, "continuing the store"}};
  const StreamingOptions o = options();
  const DetectResult r = detect_streaming(rec, o);

  StreamingDetector d(rec.meta, rec.channels, o);
  std::vector<Incident> incidents;
  const auto take = [&](const StreamUpdate& u) {
    if (u.closed) incidents.push_back(d.closed().back());
  };
  for (std::size_t i = 0; i < rec.t_unix_ns.size(); ++i) {
    if (i == 481) {
      take(d.end_segment());
      d.restart(t(480) - std::int64_t(o.history_samples) * 1'000'000'000);  // the agent's history before its last sample
    }
    take(d.push(rec.t_unix_ns[i], rec.values.row(i)));
  }
  if (d.active()) incidents.push_back(*d.active());

  std::vector<const Incident*> anomalies;
  for (const auto& inc : r.incidents)
    if (inc.kind == "anomaly") anomalies.push_back(&inc);
  ASSERT_EQ(anomalies.size(), incidents.size());
  for (std::size_t k = 0; k < incidents.size(); ++k) {
    EXPECT_EQ(anomalies[k]->start_unix_ns, incidents[k].start_unix_ns);
    EXPECT_EQ(anomalies[k]->end_unix_ns, incidents[k].end_unix_ns);
    EXPECT_EQ(anomalies[k]->action, incidents[k].action);
  }
  ASSERT_FALSE(anomalies.empty());
  EXPECT_NEAR(anomalies[0]->start_s, 450.0, 4.0);
  EXPECT_LE(anomalies[0]->end_unix_ns, t(480));
  EXPECT_NE(anomalies[0]->action.find("(ended: the agent stopped)"), std::string::npos) << anomalies[0]->action;
}

// Tenant scans every 5 s: an ssh service at 0.1 cores throughout and, from `new_at`, a job
// cgroup using 1.5 cores; `other` adds a job at 1 core running all along.
TenantTimeline scans(std::size_t n, double new_at, bool other) {
  TenantTimeline tl;
  tl.paths = {"system.slice/sshd.service", "jobs/new", "jobs/other"};
  for (std::size_t i = 0; i < n; i += 5) {
    const double t = double(i);
    TenantScan s;
    s.t_unix_ns = kT0 + std::int64_t(i) * 1'000'000'000;
    s.ids.push_back(0);
    s.counters.push_back({0.1e6 * t, 0.001e6 * t, 0, 0});
    if (t >= new_at) {
      s.ids.push_back(1);
      s.counters.push_back({1.5e6 * (t - new_at), 0.3e6 * (t - new_at), 0, 0});
    }
    if (other) {
      s.ids.push_back(2);
      s.counters.push_back({1e6 * t, 0.01e6 * t, 0, 0});
    }
    tl.scans.push_back(std::move(s));
  }
  return tl;
}

// A job that starts with stalls of its own (40 % of the time waiting) on a host running
// nothing else opens an incident; the tenant scans show a new cgroup alone, nobody hurt: the
// replay withdraws it as the agent does (TenantFeed) and reports a workload change. Beside
// another running job, or without scans, it stays an incident.
TEST(DetectStreaming, WithdrawsANewWorkloadsIncidentAsTheAgentDoes) {
  Recording rec = host_day(500, 200, 200, 1000, 100000);
  const auto count = [](const DetectResult& r, const char* kind) {
    std::size_t k = 0;
    for (const auto& inc : r.incidents) k += inc.kind == kind;
    return k;
  };
  const DetectResult plain = detect_streaming(rec, options());
  ASSERT_GE(count(plain, "anomaly"), 1u) << "the job's start opens no incident: the test proves nothing";

  rec.tenants = scans(500, 199, false);
  const DetectResult r = detect_streaming(rec, options());
  EXPECT_EQ(count(r, "anomaly"), 0u);
  std::size_t withdrawn = 0;
  for (const auto& c : r.workload_changes) {
    if (c.withdrawn.empty()) continue;
    ++withdrawn;
    EXPECT_NEAR(c.start_s, 200.0, 4.0);
    // decided at the second scan after the onset's interval: 5-10 s after the onset
    EXPECT_GE(double(c.withdrawn_unix_ns - c.start_unix_ns) * 1e-9, 4.0);
    EXPECT_LE(double(c.withdrawn_unix_ns - c.start_unix_ns) * 1e-9, 12.0);
    EXPECT_NE(c.withdrawn.find("jobs/new"), std::string::npos) << c.withdrawn;
    ASSERT_FALSE(c.aggressors.empty());
    EXPECT_EQ(c.aggressors[0].cgroup, "jobs/new");
  }
  EXPECT_EQ(withdrawn, 1u);

  rec.tenants = scans(500, 199, true);
  EXPECT_EQ(count(detect_streaming(rec, options()), "anomaly"), count(plain, "anomaly"));
}

// Read in blocks of 7 samples (a store's chunks are 128), with the tenant scans kept only near
// the samples pushed (reveal/streaming.h): an hour in which a neighbour's job starts at 2495 s
// beside a running job whose CPU stalls from 2500 s. The incidents and workload changes are
// those of the default blocks, and each names the tenants that attach_tenants() names over the
// whole run's scans.
TEST(DetectStreaming, ReadInSmallBlocksNamesTheTenantsTheWholeRunNames) {
  Recording rec = host_day(3600, 200, 2500, 60, 100000);
  rec.tenants.paths = {"system.slice/sshd.service", "jobs/main", "jobs/neighbour"};
  for (std::size_t i = 0; i < 3600; i += 5) {
    const double t = double(i);
    TenantScan s;
    s.t_unix_ns = kT0 + std::int64_t(i) * 1'000'000'000;
    s.ids = {0, 1};
    const double stalled = std::clamp(t - 2500, 0.0, 60.0);  // the job's stall: 80 % of its time
    s.counters = {{0.1e6 * t, 0.001e6 * t, 0, 0}, {1e6 * t, 0.01e6 * t + 0.8e6 * stalled, 0, 0}};
    if (t >= 2495) {
      s.ids.push_back(2);
      s.counters.push_back({1.5e6 * (t - 2495), 0.01e6 * (t - 2495), 0, 0});
    }
    rec.tenants.scans.push_back(std::move(s));
  }
  const DetectResult whole = detect_streaming(rec, options());
  MemoryFeed feed(rec, 7);
  const DetectResult r = detect_streaming(feed, options());
  ASSERT_EQ(r.incidents.size(), whole.incidents.size());
  ASSERT_EQ(r.workload_changes.size(), whole.workload_changes.size());
  EXPECT_EQ(r.fused, whole.fused);
  std::size_t named = 0;
  const auto names = [](const std::vector<TenantEvidence>& v) {
    std::vector<std::string> out;
    for (const auto& e : v) out.push_back(e.cgroup);
    return out;
  };
  for (std::size_t k = 0; k < r.incidents.size(); ++k) {
    const Incident& got = r.incidents[k];
    EXPECT_EQ(got.start_unix_ns, whole.incidents[k].start_unix_ns);
    EXPECT_EQ(got.end_unix_ns, whole.incidents[k].end_unix_ns);
    if (got.kind == "absence") continue;
    Incident want = got;
    attach_tenants(want, rec.tenants);
    EXPECT_EQ(names(got.victims), names(want.victims)) << "incident at " << got.start_s;
    EXPECT_EQ(names(got.aggressors), names(want.aggressors)) << "incident at " << got.start_s;
    named += !got.aggressors.empty() && got.start_s > 2400;
  }
  for (const Incident& c : r.workload_changes) {
    Incident want = c;
    attach_tenants(want, rec.tenants);
    EXPECT_EQ(names(c.aggressors), names(want.aggressors)) << "change at " << c.start_s;
  }
  EXPECT_GE(named, 1u) << "no incident late in the hour names the neighbour: the test proves nothing";
}

TEST(DetectStreaming, TooShortOrBadOptionsAreDetectErrors) {
  EXPECT_THROW(detect_streaming(host_day(1, 0, 0, 0, 10), options()), DetectError);
  StreamingOptions bad = options();
  bad.warmup_samples = 3;
  EXPECT_THROW(detect_streaming(host_day(100, 0, 0, 0, 1000), bad), DetectError);
  // Shorter than the warm-up: nothing scored, said in a note, no crash.
  const DetectResult r = detect_streaming(host_day(40, 1000, 1000, 0, 1000), options());
  EXPECT_TRUE(r.incidents.empty());
  EXPECT_TRUE(r.fused.empty());
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("no reference model") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace reveal
