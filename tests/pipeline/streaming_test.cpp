#include "reveal/streaming.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace reveal {
namespace {

// 1 Hz synthetic host: noisy gauges in four subsystems and one counter; between
// [fault_from, fault_to) the memory gauge shifts up by `shift` noise SDs.
struct Synth {
  std::vector<ChannelInfo> channels = {{"test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                       {"test:mem_used", "%", Kind::gauge, Subsystem::memory},
                                       {"test:rx_bytes", "bytes", Kind::counter, Subsystem::network},
                                       {"test:disk_util", "%", Kind::gauge, Subsystem::storage}};
  std::mt19937_64 rng;
  std::normal_distribution<double> noise{0.0, 1.0};
  double rx = 0;
  explicit Synth(std::uint64_t seed) : rng(seed) {}
  std::vector<double> row(bool fault, double shift) {
    rx += 5e6 + 2e5 * noise(rng);
    return {50 + 3 * noise(rng), 40 + 2 * noise(rng) + (fault ? shift * 2 : 0), rx, 10 + 2 * noise(rng)};
  }
};

constexpr std::int64_t kT0 = std::int64_t(1'700'000'000) * 1'000'000'000;

RunMetadata four_cores() {
  RunMetadata meta;
  meta.cores = 4;
  return meta;
}
// A minute of warm-up, refits every 30 s, 5 minutes of history.
StreamingOptions quick_options() {
  StreamingOptions o;
  o.warmup_samples = 60;
  o.refit_samples = 30;
  o.history_samples = 300;
  return o;
}

TEST(StreamingDetector, WarmsUpThenFindsALevelShiftWithinSecondsOnTheRightSubsystem) {
  Synth syn(3);
  const RunMetadata meta = four_cores();
  StreamingOptions o = quick_options();
  // Every run of anomalous windows is an incident here; workload_change_test.cpp covers the
  // telling of workload changes from faults (this shift moves a load channel only).
  o.workload_changes = false;
  StreamingDetector d(meta, syn.channels, o);
  const std::size_t onset = 150, end = 180;
  std::size_t opened_at = 0, closed_at = 0, scored = 0;
  for (std::size_t i = 0; i < 260; ++i) {
    const auto row = syn.row(i >= onset && i < end, 15.0);
    const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, row);
    if (i < 59) { EXPECT_FALSE(d.model_ready()) << i; }  // 60 rows: samples 0..59
    if (u.scored) {
      ++scored;
      EXPECT_TRUE(std::isfinite(u.fused));
      EXPECT_TRUE(std::isfinite(u.subsystem[std::size_t(Subsystem::memory)]));
    }
    if (u.opened) {
      EXPECT_EQ(opened_at, 0u) << "one incident only";
      opened_at = i;
      ASSERT_TRUE(d.active());
      EXPECT_EQ(d.active()->subsystem, Subsystem::memory);
      ASSERT_FALSE(d.active()->top.empty());
      EXPECT_EQ(d.active()->top[0].name, "test:mem_used");
      EXPECT_NEAR(double(d.active()->start_unix_ns - kT0) * 1e-9, double(onset), 3.0);
      EXPECT_FALSE(d.active()->action.empty());
    }
    if (u.closed) closed_at = i;
  }
  EXPECT_TRUE(d.model_ready());
  EXPECT_GT(scored, 150u);
  // Onset at sample 150: the first window lying wholly in the fault ends at 152 (the first
  // sustained one); the Isolation Forest may flag the two partial windows before it, and the
  // incident opens at 152 or 153 (≤ 4 s after onset at 1 Hz), already naming memory.
  EXPECT_GE(opened_at, onset + 2);
  EXPECT_LE(opened_at, onset + 3);
  EXPECT_GE(closed_at, end + 2);
  EXPECT_LE(closed_at, end + 8);
  ASSERT_EQ(d.closed().size(), 1u);
  EXPECT_FALSE(d.active());
  EXPECT_NEAR(double(d.closed()[0].end_unix_ns - kT0) * 1e-9, double(end), 3.0);
  EXPECT_GT(d.closed()[0].peak_score, 1.0);
  // The model was not refitted during the incident: the reference stays clean.
  EXPECT_GT(d.reference_windows(), 100u);
}

// The agent with a trail (`[detect] trail`, off by default): a moderate shift that holds (5
// noise SDs for 40 s) is found once the trailing mean has filled, while the same stream scored
// on its windows alone raises nothing; the trail's history is the detector's own ring.
// An incident longer than the history ring (300 rows here) keeps the start it opened with: its
// first rows leave the ring, its start does not move with the ring's oldest row (the tenant and
// GPU-pod followers would take every sample for a new incident).
TEST(StreamingDetector, AnIncidentLongerThanTheHistoryKeepsItsStart) {
  Synth syn(3);
  StreamingOptions o = quick_options();
  o.workload_changes = false;
  StreamingDetector d(four_cores(), syn.channels, o);
  const std::size_t onset = 150, end = 700;
  std::int64_t start = 0;
  std::size_t checked = 0;
  for (std::size_t i = 0; i < 760; ++i) {
    const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, syn.row(i >= onset && i < end, 15.0));
    if (u.opened && !start) start = d.active()->start_unix_ns;
    if (d.active() && start && i > onset + 400 && i < end) {
      EXPECT_EQ(d.active()->start_unix_ns, start) << "at sample " << i;
      ++checked;
    }
  }
  ASSERT_GT(start, 0);
  EXPECT_GT(checked, 100u) << "the test needs an incident open past the ring";
  ASSERT_FALSE(d.closed().empty());
  EXPECT_EQ(d.closed().front().start_unix_ns, start);
  EXPECT_GT(d.closed().front().end_unix_ns, kT0 + std::int64_t(onset + 400) * 1'000'000'000);
}

TEST(StreamingDetector, ATrailFindsAModerateShiftThatHolds) {
  auto run = [](std::size_t trail) {
    Synth syn(5);
    RunMetadata meta;
    meta.cores = 4;
    StreamingOptions o;
    o.warmup_samples = 90;
    o.refit_samples = 60;
    o.history_samples = 300;
    o.workload_changes = false;
    o.detect.window.trail = trail;
    StreamingDetector d(meta, syn.channels, o);
    std::size_t opened_at = 0;
    for (std::size_t i = 0; i < 260; ++i) {
      const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, syn.row(i >= 150 && i < 190, 5.0));
      if (u.opened && opened_at == 0) {
        opened_at = i;
        EXPECT_EQ(d.active()->subsystem, Subsystem::memory);
      }
    }
    return opened_at;
  };
  const std::size_t with = run(10), without = run(0);
  EXPECT_GE(with, 150u);
  EXPECT_LE(with, 170u);  // the trail full of the shift (+10 s), then k windows (16 s here)
  EXPECT_EQ(without, 0u);
}

// A qdisc that never throttled starts throttling (a rate limit put on the job's link): the
// channel was flat at 0 through the whole history, yet it is scored and opens a network
// incident; the same flat channel of a load (bytes) is not scored.
TEST(StreamingDetector, AFailureCounterFlatAtZeroIsScoredWhenItStartsCounting) {
  Synth syn(5);
  std::vector<ChannelInfo> ch = syn.channels;
  ch.push_back({"tc.qdisc:overlimits", "count", Kind::counter, Subsystem::network});
  const RunMetadata meta = four_cores();
  StreamingOptions o = quick_options();
  StreamingDetector d(meta, ch, o);
  double overlimits = 0;
  std::size_t opened_at = 0;
  for (std::size_t i = 0; i < 200; ++i) {
    auto row = syn.row(false, 0);
    if (i >= 150) overlimits += 600;  // 600 throttle events per second
    row.push_back(overlimits);
    const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, row);
    if (u.opened && !opened_at) {
      opened_at = i;
      ASSERT_TRUE(d.active());
      EXPECT_EQ(d.active()->subsystem, Subsystem::network);
      EXPECT_EQ(d.active()->top[0].name, "tc.qdisc:overlimits");
    }
  }
  EXPECT_GE(opened_at, 150u);
  EXPECT_LE(opened_at, 155u + 10);  // reported once it lasted IncidentRule::min_duration_s
}

// A leak (MemAvailable falling 128 MiB/s on a 24 GiB host with 20 GiB available) opens a memory
// incident led by the memory fill pace about 15 s in, although the pace sat flat at 0 through
// the whole history; a job filling 2 GiB in two seconds earlier did not (a workload change at
// most: the pace stays 0 for a burst).
TEST(StreamingDetector, AMemoryLeakOpensAMemoryIncidentAJobsAllocationBurstDoesNot) {
  Synth syn(7);
  std::vector<ChannelInfo> ch = syn.channels;
  ch.push_back({"proc.meminfo:MemTotal", "kB", Kind::gauge, Subsystem::memory});
  ch.push_back({"proc.meminfo:MemAvailable", "kB", Kind::gauge, Subsystem::memory});
  const RunMetadata meta = four_cores();
  StreamingOptions o = quick_options();
  StreamingDetector d(meta, ch, o);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0.0, 2000.0);  // kB
  const std::size_t burst = 90, leak = 180;
  double avail = 20.0 * 1024 * 1024;
  std::size_t opened_at = 0;
  for (std::size_t i = 0; i < 240; ++i) {
    if (i == burst || i == burst + 1) avail -= 1024.0 * 1024;  // a job's 2 GiB at start-up
    if (i >= leak) avail -= 128.0 * 1024;                      // 128 MiB per second
    auto row = syn.row(false, 0);
    row.push_back(24.0 * 1024 * 1024);
    row.push_back(avail + noise(rng));
    const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, row);
    if (u.opened && !opened_at) {
      opened_at = i;
      ASSERT_TRUE(d.active());
      EXPECT_EQ(d.active()->subsystem, Subsystem::memory);
      ASSERT_FALSE(d.active()->top.empty());
      EXPECT_EQ(d.active()->top[0].name, "derived:mem_fill_pct_per_min");
    }
  }
  EXPECT_GE(opened_at, leak + 15);
  EXPECT_LE(opened_at, leak + 20 + 10);  // reported once it lasted IncidentRule::min_duration_s
}

// Someone writes /proc/sys/vm/drop_caches every 2 s for 30 s (a cron job or a tuning script gone
// wrong): /proc/vmstat drop_pagecache was flat through the whole history and now rises by one
// every other sample. A memory incident opens within seconds, led by the drops counted over the
// last minute, its action naming the writer to look for rather than a leak; it ends when the
// last drop has left the minute.
TEST(StreamingDetector, WritesToDropCachesOpenAMemoryIncidentNamingThem) {
  Synth syn(13);
  std::vector<ChannelInfo> ch = syn.channels;
  ch.push_back({"proc.vmstat:drop_pagecache", "count", Kind::counter, Subsystem::memory});
  const RunMetadata meta = four_cores();
  StreamingOptions o = quick_options();
  StreamingDetector d(meta, ch, o);
  const std::size_t onset = 150, end = 180;
  double drops = 5;  // writes since boot, before the agent started
  std::size_t opened_at = 0;
  for (std::size_t i = 0; i < 320; ++i) {
    if (i >= onset && i < end && i % 2 == 0) drops += 1;
    auto row = syn.row(false, 0);
    row.push_back(drops);
    const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, row);
    if (u.opened && !opened_at) opened_at = i;
  }
  EXPECT_GE(opened_at, onset);
  EXPECT_LE(opened_at, onset + 6 + 10);  // reported once it lasted IncidentRule::min_duration_s
  ASSERT_EQ(d.closed().size(), 1u);
  const Incident& inc = d.closed()[0];
  EXPECT_EQ(inc.subsystem, Subsystem::memory);
  EXPECT_EQ(inc.symptom.name, "derived:drop_caches_per_min");
  EXPECT_NE(inc.action.find("/proc/sys/vm/drop_caches"), std::string::npos) << inc.action;
  EXPECT_NEAR(double(inc.end_unix_ns - kT0) * 1e-9, double(end) + 20.0, 6.0) << "the last drop leaves the 20 s";
}

TEST(StreamingDetector, CleanStreamRaisesNothing) {
  Synth syn(11);
  StreamingOptions o;
  o.warmup_samples = 60;
  o.refit_samples = 60;
  o.history_samples = 600;
  StreamingDetector d({}, syn.channels, o);
  std::size_t high = 0, scored = 0;
  for (std::size_t i = 0; i < 900; ++i) {
    const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, syn.row(false, 0));
    EXPECT_FALSE(u.opened) << "false incident at " << i;
    if (u.scored) { ++scored; high += u.fused >= 1.0; }
  }
  EXPECT_GT(scored, 800u);
  EXPECT_LT(high, scored / 100 + 2);
  EXPECT_TRUE(d.closed().empty());
}

TEST(StreamingDetector, GapsOldSamplesAndBadRowsAreHandled) {
  Synth syn(5);
  StreamingOptions o;
  o.warmup_samples = 30;
  o.history_samples = 100;
  StreamingDetector d({}, syn.channels, o);
  for (std::size_t i = 0; i < 80; ++i) {
    auto row = syn.row(false, 0);
    if (i % 7 == 3) row[1] = std::nan("");  // gaps
    if (i % 13 == 5) row[2] = 0;           // counter reset
    d.push(kT0 + std::int64_t(i) * 1'000'000'000, row);
  }
  EXPECT_TRUE(d.model_ready());
  const auto before = d.windows_scored();
  // A sample not newer than the last one is ignored (clock stepped back).
  EXPECT_FALSE(d.push(kT0, syn.row(false, 0)).scored);
  EXPECT_EQ(d.windows_scored(), before);
  EXPECT_THROW(d.push(kT0 + 1000LL * 1'000'000'000, std::vector<double>(2, 1.0)), DetectError);
  // History shrinks at the next fit, keeping the newest rows, and scoring goes on.
  d.set_history_samples(40);
  d.set_refit_samples(1);
  for (std::size_t i = 80; i < 100; ++i) d.push(kT0 + std::int64_t(i) * 1'000'000'000, syn.row(false, 0));
  EXPECT_TRUE(d.model_ready());
  EXPECT_GT(d.windows_scored(), before + 15);
}

TEST(StreamingDetector, RejectsOptionsThatCannotWork) {
  Synth syn(1);
  StreamingOptions o;
  o.detect.window.length = 1;
  EXPECT_THROW(StreamingDetector({}, syn.channels, o), DetectError);
  o = {};
  o.warmup_samples = 4;
  EXPECT_THROW(StreamingDetector({}, syn.channels, o), DetectError);
  o = {};
  o.history_samples = 10;
  EXPECT_THROW(StreamingDetector({}, syn.channels, o), DetectError);
}

}  // namespace
}  // namespace reveal

namespace reveal {
namespace {

TEST(StreamingDetector, SettleSamplesStayOutOfTheReference) {
  Synth syn(2);
  StreamingOptions o;
  o.warmup_samples = 30;
  o.settle_samples = 20;
  StreamingDetector d({}, syn.channels, o);
  std::size_t ready_at = 0;
  for (std::size_t i = 0; i < 80 && !ready_at; ++i) {
    // The start-up transient: the first 20 samples are wildly off and must not be learned.
    auto row = syn.row(i < 20, 200.0);
    d.push(kT0 + std::int64_t(i) * 1'000'000'000, row);
    if (d.model_ready()) ready_at = i;
  }
  // 20 ignored, then 30 rows (the first sample's row holds its gauges and no rate yet).
  EXPECT_EQ(ready_at, 20u + 30u - 1u);
  EXPECT_GT(d.reference_windows(), 20u);
}

}  // namespace
}  // namespace reveal

namespace reveal {
namespace {

// fit_due() names exactly the pushes that fit the model (first fit and refits), so that the
// agent can run them at normal priority: with settle samples, warm-up, refits, and an incident
// (no refit while one is open).
TEST(StreamingDetector, FitDueNamesExactlyThePushesThatFit) {
  Synth syn(5);
  RunMetadata meta;
  meta.cores = 4;
  StreamingOptions o;
  o.settle_samples = 3;
  o.warmup_samples = 40;
  o.refit_samples = 25;
  o.history_samples = 200;
  StreamingDetector d(meta, syn.channels, o);
  std::size_t fits = 0, during_incident = 0;
  for (std::size_t i = 0; i < 240; ++i) {
    const bool due = d.fit_due();
    const bool was_active = d.active().has_value();
    const bool episode = was_active || d.active_change().has_value();
    const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, syn.row(i >= 120 && i < 150, 15.0));
    // Every fit was announced; outside an episode exactly the fits were (inside one, a push
    // old enough to re-learn is announced whether or not its window re-learns).
    if (u.refitted) {
      EXPECT_TRUE(due) << "sample " << i;
    }
    if (!episode) {
      EXPECT_EQ(due, u.refitted) << "sample " << i;
    }
    fits += u.refitted;
    during_incident += was_active;
  }
  EXPECT_GE(fits, 5u);
  EXPECT_GT(during_incident + d.workload_changes_total(), 0u) << "the stream must hold an episode";
}

}  // namespace
}  // namespace reveal

namespace reveal {
namespace {

// A restarted agent primes the detector with the history its store holds: the model is ready
// before the first live sample, no window is scored and nothing opens while priming, the new
// process's start-up still settles, and a fault after the restart is found as by a detector
// that never stopped.
TEST(StreamingDetector, PrimedFromStoredHistoryItIsReadyAtOnceAndStillFindsAFault) {
  Synth syn(5);
  const RunMetadata meta = four_cores();
  StreamingOptions o = quick_options();
  o.workload_changes = false;
  o.settle_samples = 5;
  StreamingDetector d(meta, syn.channels, o);
  EXPECT_EQ(d.finish_priming(), 0u);  // nothing primed: nothing changes
  const auto t = [](std::size_t i) { return kT0 + std::int64_t(i) * 1'000'000'000; };
  for (std::size_t i = 0; i < 200; ++i) {
    const auto row = syn.row(false, 0);
    d.prime(t(i), row);
    if (i == 100) d.prime(t(50), row);  // not newer: ignored
  }
  EXPECT_FALSE(d.model_ready());  // fitted only when priming ends
  EXPECT_EQ(d.finish_priming(), 200u);
  EXPECT_TRUE(d.model_ready());
  EXPECT_EQ(d.windows_scored(), 0u);
  EXPECT_FALSE(d.active());
  EXPECT_GT(d.reference_windows(), 100u);
  // 30 s nobody sampled (the counter went on meanwhile); no rate spans the gap.
  for (int k = 0; k < 30; ++k) syn.row(false, 0);
  std::size_t first_scored = 0, opened_at = 0;
  const std::size_t live0 = 230, onset = 300, end = 330;
  for (std::size_t i = live0; i < 380; ++i) {
    const auto row = syn.row(i >= onset && i < end, 15.0);
    const StreamUpdate& u = d.push(t(i), row);
    if (i < live0 + 5) { EXPECT_FALSE(u.scored) << i; }  // the settle
    if (u.scored && !first_scored) first_scored = i;
    if (u.opened && !opened_at) opened_at = i;
  }
  EXPECT_GE(first_scored, live0 + 5);
  EXPECT_LE(first_scored, live0 + 8);
  ASSERT_GT(opened_at, 0u);
  EXPECT_GE(opened_at, onset + 2);
  EXPECT_LE(opened_at, onset + 3);
  ASSERT_FALSE(d.closed().empty());
  EXPECT_EQ(d.closed().size(), 1u) << "the restart itself opened an incident";
  EXPECT_EQ(d.closed().back().subsystem, Subsystem::memory);
  EXPECT_THROW(d.prime(t(400), std::vector<double>{1.0}), DetectError);
}

// Too little stored history: priming fills what there is and the warm-up completes live.
TEST(StreamingDetector, PrimedWithLessThanTheWarmUpItFitsOnceLiveRowsComplete) {
  Synth syn(6);
  StreamingOptions o = quick_options();  // warm-up 60 rows
  StreamingDetector d(four_cores(), syn.channels, o);
  for (std::size_t i = 0; i < 40; ++i) d.prime(kT0 + std::int64_t(i) * 1'000'000'000, syn.row(false, 0));
  EXPECT_EQ(d.finish_priming(), 40u);
  EXPECT_FALSE(d.model_ready());
  std::size_t ready_at = 0;
  for (std::size_t i = 40; i < 100 && !ready_at; ++i) {
    d.push(kT0 + std::int64_t(i) * 1'000'000'000, syn.row(false, 0));
    if (d.model_ready()) ready_at = i;
  }
  EXPECT_EQ(ready_at, 59u);  // 40 primed + 20 live rows
}

// The agent stops while an incident is open: end_segment() closes it, the agent's last word
// (the pending and workload-change cases: workload_change_test.cpp).
TEST(StreamingDetector, EndingASegmentClosesTheOpenIncident) {
  const auto t = [](std::size_t i) { return kT0 + std::int64_t(i) * 1'000'000'000; };
  Synth syn(7);
  StreamingOptions o = quick_options();
  o.workload_changes = false;
  StreamingDetector d(four_cores(), syn.channels, o);
  for (std::size_t i = 0; i < 150; ++i) d.push(t(i), syn.row(i >= 120, 15.0));
  ASSERT_TRUE(d.active());
  EXPECT_FALSE(d.pending()) << "reported: active, no longer pending";
  const StreamUpdate& u = d.end_segment();
  EXPECT_TRUE(u.closed);
  EXPECT_FALSE(d.active());
  ASSERT_EQ(d.closed().size(), 1u);
  EXPECT_NE(d.closed().back().action.find("(ended: the agent stopped)"), std::string::npos) << d.closed().back().action;
  EXPECT_LE(d.closed().back().end_unix_ns, t(149));
  EXPECT_FALSE(d.end_segment().closed) << "nothing open: nothing closes";
  EXPECT_TRUE(d.model_ready()) << "the model stays";
}

}  // namespace
}  // namespace reveal
