#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "pipeline/workload_change.h"
#include "reveal/offline.h"

namespace reveal {
namespace {

// The synthetic faults below move load channels only (no stall, error or wait channel), which
// detect() reports as workload changes by default: these tests, about the anomaly machinery,
// ask for every anomalous interval as an incident.
DetectOptions anomalies() {
  DetectOptions o;
  o.workload_changes = false;
  return o;
}

// A synthetic 1 Hz recording: a few noisy gauges in different subsystems and one counter.
// Between [fault_from, fault_to) the cpu gauge shifts up by `shift` noise SDs.
Recording synth(std::size_t n, std::size_t fault_from, std::size_t fault_to, double shift, std::uint64_t seed) {
  Recording r;
  r.meta.hostname = "synthetic";
  r.meta.interval_s = 1.0;
  r.channels = {{"derived.test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                {"test:mem_used", "%", Kind::gauge, Subsystem::memory},
                {"test:rx_bytes", "bytes", Kind::counter, Subsystem::network},
                {"test:disk_util", "%", Kind::gauge, Subsystem::storage}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  double rx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool fault = i >= fault_from && i < fault_to;
    rx += 5e6 + 2e5 * noise(rng);
    const double row[] = {50 + 3 * noise(rng) + (fault ? shift * 3 : 0), 40 + 2 * noise(rng), rx,
                          10 + 2 * noise(rng)};
    r.values.append_row(row);
    r.t_unix_ns.push_back(std::int64_t(1'700'000'000) * 1'000'000'000 + std::int64_t(i) * 1'000'000'000);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  return r;
}

TEST(Detect, LevelShiftBecomesOneIncidentOnTheRightSubsystem) {
  const Recording run = synth(120, 50, 80, 12.0, 1);
  DetectResult res = detect(run, {}, anomalies());
  EXPECT_EQ(res.mode, "self");
  ASSERT_EQ(res.incidents.size(), 1u);
  const Incident& inc = res.incidents[0];
  EXPECT_EQ(inc.subsystem, Subsystem::cpu);
  EXPECT_GT(inc.confidence, 0.5);
  EXPECT_LE(inc.start_s, 52.0);
  EXPECT_GE(inc.start_s, 47.0);
  EXPECT_GE(inc.end_s, 77.0);
  EXPECT_LE(inc.end_s, 82.0);
  ASSERT_FALSE(inc.top.empty());
  EXPECT_EQ(inc.top[0].name, "derived.test:cpu_busy");
  EXPECT_NEAR(inc.top[0].value, 50 + 36, 3.0);
  EXPECT_NEAR(inc.top[0].reference, 50, 3.0);
  EXPECT_GT(inc.peak_score, 1.0);
  EXPECT_FALSE(inc.action.empty());
}

// Labelled channels: a 16-CPU host where, from +50 s to +80 s, one core goes from idle to
// busy (a per-CPU channel) while a GPU's tensor activity and memory clock both rise. One core
// of sixteen must not outvote the GPU, and the GPU is the incident's focus.
Recording gpu_and_one_core(std::uint64_t seed) {
  Recording r;
  r.meta.hostname = "synthetic";
  r.meta.interval_s = 1.0;
  r.meta.cores = 16;
  r.channels = {{"t:busy_pct.cpu3", "%", Kind::gauge, Subsystem::cpu},
                {"t:tensor_util.gpu0", "%", Kind::gauge, Subsystem::gpu},
                {"t:dram_util.gpu0", "%", Kind::gauge, Subsystem::gpu},
                {"t:mem_used_pct", "%", Kind::gauge, Subsystem::memory}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (std::size_t i = 0; i < 120; ++i) {
    const bool fault = i >= 50 && i < 80;
    const double row[] = {fault ? 95 + noise(rng) : 0.5 + 0.2 * std::fabs(noise(rng)),
                          fault ? 50 + noise(rng) : 25 + noise(rng), fault ? 60 + noise(rng) : 40 + noise(rng),
                          40 + noise(rng)};
    r.values.append_row(row);
    r.t_unix_ns.push_back(std::int64_t(1'700'000'000) * 1'000'000'000 + std::int64_t(i) * 1'000'000'000);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  return r;
}

TEST(Detect, OneCoreOfManyDoesNotOutvoteTheGpu) {
  const DetectResult res = detect(gpu_and_one_core(3), {}, anomalies());
  ASSERT_EQ(res.incidents.size(), 1u);
  const Incident& inc = res.incidents[0];
  EXPECT_EQ(inc.subsystem, Subsystem::gpu) << to_string(inc.subsystem);
  EXPECT_EQ(inc.focus, "gpu0");
  EXPECT_GT(inc.focus_share, 0.5);
}

TEST(Detect, HostWideEvidenceHasNoFocus) {
  const DetectResult res = detect(synth(120, 50, 80, 12.0, 1), {}, anomalies());
  ASSERT_EQ(res.incidents.size(), 1u);
  EXPECT_EQ(res.incidents[0].focus, "");
  EXPECT_EQ(res.incidents[0].focus_share, 0.0);
}

TEST(Detect, CleanRunHasNoIncident) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const Recording run = synth(300, 0, 0, 0.0, seed);
    EXPECT_TRUE(detect(run, {}, {}).incidents.empty()) << "seed " << seed;
  }
}

// The kernel's smoothed averages (PSI avg10, loadavg) of a job that started just before the
// recording decay for minutes; they repeat channels scored through their totals' rates, so the
// self reference leaves them out (as the streaming detector does): no incident from the decay,
// and they are not among the channels used.
TEST(Detect, KernelSmoothedAveragesAreNotScoredInSelfMode) {
  const Recording clean = synth(120, 0, 0, 0.0, 4);
  Recording run;
  run.meta = clean.meta;
  run.t_unix_ns = clean.t_unix_ns;
  run.channels = clean.channels;
  run.channels.push_back({"proc.pressure:cpu_some_avg10", "%", Kind::gauge, Subsystem::cpu});
  run.channels.push_back({"proc.loadavg:load1", "count", Kind::gauge, Subsystem::cpu});
  for (std::size_t i = 0; i < clean.values.rows(); ++i) {
    std::vector<double> row(clean.values.row(i).begin(), clean.values.row(i).end());
    row.push_back(5 + 85 * std::exp(-double(i) / 20.0));
    row.push_back(1 + 6 * std::exp(-double(i) / 60.0));
    run.values.append_row(row);
  }
  const DetectResult res = detect(run, {}, {});
  EXPECT_EQ(res.n_channels_used, clean.channels.size());
  EXPECT_TRUE(res.incidents.empty()) << res.incidents.size() << " incidents";
}

// A fault covering a quarter of the run, and short marginal blips in another channel all over
// it: dropping every suspicious window (each widened by a window length) would leave less than
// half of the reference. The fault's windows, the most suspicious, still leave it, so the fault
// is scored against the rest and not against itself.
TEST(Detect, SelfReferenceDropsTheStrongestSuspectsFirst) {
  Recording run = synth(120, 45, 75, 20.0, 5);
  run.channels.push_back({"test:softirq_rate", "count/s", Kind::gauge, Subsystem::network});
  Matrix values(0, run.channels.size());
  std::mt19937_64 rng(6);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (std::size_t i = 0; i < run.values.rows(); ++i) {
    std::vector<double> row(run.values.row(i).begin(), run.values.row(i).end());
    const bool blip = (i < 45 || i >= 75) && i % 14 < 4;
    row.push_back(100 + 5 * noise(rng) + (blip ? 40.0 : 0.0));
    values.append_row(row);
  }
  run.values = std::move(values);
  const DetectResult res = detect(run, {}, anomalies());
  const std::size_t windows = res.fused.size();
  EXPECT_LE(res.reference_windows + 30, windows) << "the fault stayed in its own reference";
  EXPECT_GE(res.reference_windows * 2, windows - 8);
  bool found = false;
  for (const Incident& inc : res.incidents) found = found || (inc.start_s <= 55 && inc.end_s >= 65 && inc.subsystem == Subsystem::cpu);
  EXPECT_TRUE(found) << res.incidents.size() << " incidents";
}

// Offline detection tells workload changes from incidents as the agent does: a load channel
// moving alone is a change; a material rise of a symptom (stall share) makes the same interval
// an incident; --all-anomalies (workload_changes off) reports every anomalous interval.
// `run` with a stall-share channel (a symptom, proc.pressure-like) that moves by `stall` points
// in [from, to).
Recording with_stall(Recording run, std::size_t from, std::size_t to, double stall, double sd = 1.0) {
  run.channels.push_back({"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu});
  Matrix values(0, run.channels.size());
  std::mt19937_64 rng(8);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (std::size_t i = 0; i < run.values.rows(); ++i) {
    std::vector<double> row(run.values.row(i).begin(), run.values.row(i).end());
    row.push_back(std::max(0.0, 2 + sd * noise(rng) + (i >= from && i < to ? stall : 0.0)));
    values.append_row(row);
  }
  run.values = std::move(values);
  return run;
}

TEST(Detect, ALoadShiftWithoutASymptomIsAWorkloadChange) {
  const Recording run = with_stall(synth(120, 50, 80, 12.0, 1), 0, 0, 0.0);
  const DetectResult res = detect(run, {}, {});
  EXPECT_TRUE(res.incidents.empty()) << res.incidents.size() << " incidents";
  ASSERT_EQ(res.workload_changes.size(), 1u);
  const Incident& ch = res.workload_changes[0];
  EXPECT_EQ(ch.kind, "workload_change");
  EXPECT_EQ(ch.subsystem, Subsystem::cpu);
  EXPECT_NEAR(ch.start_s, 50.0, 3.0);
  EXPECT_TRUE(ch.symptom.name.empty());
  DetectOptions all;
  all.workload_changes = false;
  const DetectResult raw = detect(run, {}, all);
  ASSERT_EQ(raw.incidents.size(), 1u);
  EXPECT_TRUE(raw.workload_changes.empty());
  EXPECT_EQ(raw.incidents[0].start_s, ch.start_s);
  // Without any symptom channel nothing can tell them apart: every anomaly is an incident.
  const DetectResult blind = detect(synth(120, 50, 80, 12.0, 1), {}, {});
  ASSERT_EQ(blind.incidents.size(), 1u);
  EXPECT_TRUE(blind.workload_changes.empty());
  ASSERT_FALSE(blind.notes.empty());
  EXPECT_NE(blind.notes.back().find("workload changes are not told apart"), std::string::npos);
}

TEST(Detect, AStallRiseMakesTheShiftAnIncidentAndIsItsSymptom) {
  const Recording run = with_stall(synth(120, 50, 80, 12.0, 1), 50, 80, 40.0);
  const DetectResult res = detect(run, {}, {});
  ASSERT_EQ(res.incidents.size(), 1u);
  EXPECT_TRUE(res.workload_changes.empty());
  const Incident& inc = res.incidents[0];
  EXPECT_EQ(inc.symptom.name, "test.pressure:cpu_some_pct");
  EXPECT_NEAR(inc.symptom.value, 40.0, 5.0);
  EXPECT_NEAR(inc.symptom.reference, 2.0, 1.5);
  EXPECT_GE(inc.symptom.z, 6.0);
}

// A stall of 5 s (a neighbour's build forking its compilers) is a transient: listed with the
// workload changes, not an incident; with min_duration 0 it is an incident.
TEST(Detect, AShortStallIsATransientNotAnIncident) {
  const Recording run = with_stall(synth(120, 50, 55, 12.0, 1), 50, 55, 40.0);
  const DetectResult res = detect(run, {}, {});
  EXPECT_TRUE(res.incidents.empty()) << res.incidents.size() << " incidents";
  ASSERT_EQ(res.workload_changes.size(), 1u);
  EXPECT_EQ(res.workload_changes[0].kind, "transient");
  EXPECT_NEAR(res.workload_changes[0].start_s, 50.0, 3.0);
  EXPECT_NE(res.workload_changes[0].withdrawn.find("a transient: its symptoms lasted"), std::string::npos);
  DetectOptions every;
  every.incident.min_duration_s = 0;
  const DetectResult all = detect(run, {}, every);
  ASSERT_EQ(all.incidents.size(), 1u);
  EXPECT_EQ(all.incidents[0].symptom.name, "test.pressure:cpu_some_pct");
  EXPECT_TRUE(all.workload_changes.empty());
}

// A symptom's material step leads its windows (DetectOptions::symptom_windows): with the fused
// threshold out of reach (1e-6 false incidents per day, whose EVT quantiles lie beyond what the
// streams can score, and robust-SD cuts of 1000), a stall share that steps from 2 to 22 %
// is still an incident, dated from the step, which the fused score alone does not find. A step
// leads for 30 s at most (it is then part of the minute it is judged against): a stall held for
// 60 s is an incident of about 30 s, not of 60.
DetectOptions fused_out_of_reach() {
  DetectOptions o;
  o.false_per_day = 1e-6;
  o.z_cut = o.if_cut = o.pca_cut = 1000;
  return o;
}

TEST(Detect, AStallStepLeadsItsWindowsWhereTheFusedScoreDoesNot) {
  DetectOptions o = fused_out_of_reach();
  const Recording run = with_stall(synth(200, 0, 0, 0.0, 4), 100, 160, 20.0);
  const DetectResult res = detect(run, {}, o);
  ASSERT_EQ(res.incidents.size(), 1u);
  const Incident& inc = res.incidents[0];
  EXPECT_NEAR(inc.start_s, 100.0, 3.0);
  EXPECT_LE(inc.end_s, 100.0 + pipeline::kStepLagS + 6);
  EXPECT_EQ(inc.symptom.name, "test.pressure:cpu_some_pct");
  ASSERT_EQ(res.window_symptom.size(), res.fused.size());
  std::size_t led = 0;
  for (std::size_t k = 0; k < res.fused.size(); ++k) {
    if (res.window_symptom[k].empty()) continue;
    ++led;
    EXPECT_EQ(res.window_symptom[k], "test.pressure:cpu_some_pct");
    EXPECT_LT(res.fused[k], 1.0) << "a window the fused score flags is not led";
  }
  EXPECT_GE(led, 20u);
  o.symptom_windows = false;
  const DetectResult off = detect(run, {}, o);
  EXPECT_TRUE(off.incidents.empty()) << "the fused score alone flags the stall: the test proves nothing";
  for (const std::string& c : off.window_symptom) EXPECT_TRUE(c.empty());
  // Hypervisor steal never leads a window: it is judged by the level it held recently.
  Recording steal = run;
  steal.channels.back().name = "derived:cpu_steal_pct";
  o.symptom_windows = true;
  EXPECT_TRUE(detect(steal, {}, o).incidents.empty());
  // A step of less than the unit's material 10 points leads nothing.
  EXPECT_TRUE(detect(with_stall(synth(200, 0, 0, 0.0, 4), 100, 160, 8.0), {}, o).incidents.empty());
}

// A leak: memory climbs for the rest of the run against a clean baseline, no symptom. It never
// settles, so it stays an incident (the agent's drift rule), not a workload change.
TEST(Detect, ALoadThatKeepsDriftingStaysAnIncident) {
  Recording run = with_stall(synth(240, 0, 0, 0.0, 11), 0, 0, 0.0);
  for (std::size_t i = 30; i < run.values.rows(); ++i) run.values(i, 1) += 1.0 * double(i - 30);
  const Recording good = with_stall(synth(200, 0, 0, 0.0, 12), 0, 0, 0.0);
  const DetectResult res = detect(run, {good}, {});
  ASSERT_EQ(res.incidents.size(), 1u) << res.workload_changes.size() << " workload changes";
  EXPECT_EQ(res.incidents[0].subsystem, Subsystem::memory);
  EXPECT_TRUE(res.workload_changes.empty());
}

TEST(Detect, BaselineModeFindsAPersistentShift) {
  // The whole run is shifted: invisible to self reference, obvious against a good baseline.
  const Recording run = synth(120, 0, 120, 12.0, 2);
  EXPECT_TRUE(detect(run, {}, anomalies()).incidents.empty());
  const Recording good = synth(200, 0, 0, 0.0, 3);
  DetectResult res = detect(run, {good}, anomalies());
  EXPECT_EQ(res.mode, "baseline");
  ASSERT_FALSE(res.incidents.empty());
  EXPECT_EQ(res.incidents[0].subsystem, Subsystem::cpu);
  EXPECT_LE(res.incidents[0].start_s, 3.0);
}

TEST(Detect, WindowZIsKeptOnlyWhenAskedAndNamesTheShiftedChannel) {
  const Recording run = synth(120, 50, 80, 12.0, 5);
  const Recording good = synth(200, 0, 0, 0.0, 6);
  EXPECT_EQ(detect(run, {good}, {}).window_z.rows(), 0u);
  DetectOptions o;
  o.window_z = true;
  const DetectResult res = detect(run, {good}, o);
  ASSERT_EQ(res.window_z.rows(), res.fused.size());
  ASSERT_EQ(res.window_z.cols(), res.scored_channels.size());
  std::size_t cpu = res.scored_channels.size();
  for (std::size_t j = 0; j < res.scored_channels.size(); ++j)
    if (res.scored_channels[j] == "derived.test:cpu_busy") cpu = j;
  ASSERT_LT(cpu, res.scored_channels.size());
  // The row agrees with the per-window top channel, and the shifted channel leads inside the fault.
  for (std::size_t k = 0; k < res.fused.size(); ++k) {
    double best = 0;
    for (std::size_t j = 0; j < res.window_z.cols(); ++j)
      if (std::fabs(res.window_z(k, j)) > std::fabs(best)) best = res.window_z(k, j);
    EXPECT_EQ(best, res.window_top_z[k]) << "window " << k;
  }
  for (std::size_t k = 0; k < res.fused.size(); ++k)
    if (res.window_start_s[k] >= 52 && res.window_end_s[k] <= 78) {
      EXPECT_GT(res.window_z(k, cpu), 6.0) << "window " << k;
      EXPECT_EQ(res.window_top_channel[k], "derived.test:cpu_busy");
    }
}

TEST(Detect, DeterministicForASeed) {
  const Recording run = synth(120, 50, 80, 8.0, 4);
  DetectOptions o;
  o.seed = 7;
  DetectResult a = detect(run, {}, o), b = detect(run, {}, o);
  ASSERT_EQ(a.fused.size(), b.fused.size());
  for (std::size_t k = 0; k < a.fused.size(); ++k) EXPECT_EQ(a.fused[k], b.fused[k]);
}

TEST(Detect, TooShortOrEmptyInputIsAClearError) {
  const Recording run = synth(3, 0, 0, 0.0, 5);
  EXPECT_THROW(detect(run, {}, {}), DetectError);
  Recording flat = synth(50, 0, 0, 0.0, 6);
  for (std::size_t r = 0; r < flat.values.rows(); ++r)
    for (std::size_t c = 0; c < flat.values.cols(); ++c) flat.values(r, c) = 1.0;
  EXPECT_THROW(detect(flat, {}, {}), DetectError);
}

// Calibrated fusion (offline.h): fused = max over the fused detectors of ln(D·p_d) / ln q, so a
// window is anomalous exactly when some tail probability is ≤ q / D.
TEST(Detect, FusedScoreIsTheBonferroniLevelOfTheTailProbabilities) {
  const Recording run = synth(240, 100, 140, 12.0, 11);
  const DetectResult res = detect(run, {}, {});
  ASSERT_EQ(res.fused_detectors, 3u);  // robust z, its trailing mean, the forest
  EXPECT_NEAR(res.window_false_rate, 1.0 / 86400.0, 1e-9);
  const double log_q = std::log(res.window_false_rate);
  std::size_t checked = 0;
  for (std::size_t k = 0; k < res.fused.size(); ++k) {
    double expect = 0;
    bool ok = true;
    for (const auto& d : res.detectors) {
      if (!d.fused) continue;
      ok = ok && std::isfinite(d.tail_p[k]) && d.tail_p[k] > 1e-300;
      if (ok) expect = std::max(expect, std::log(3.0 * d.tail_p[k]) / log_q);
    }
    if (!ok) continue;
    ++checked;
    EXPECT_NEAR(res.fused[k], expect, 1e-9) << "window " << k;
  }
  EXPECT_GT(checked, res.fused.size() / 2);
  // Each detector's threshold is where its tail probability is q / D.
  for (const auto& d : res.detectors) {
    if (d.fused) {
      EXPECT_TRUE(std::isfinite(d.threshold)) << d.name;
    }
  }
}

// The knob: expected false incidents per host-day sets the per-window false-alarm rate. On a
// clean run scored against another clean run of the same process, the default (1 a day, q ≈
// 1.2e-5) raises nothing, and a knob of 8640 a day (q = 0.1 per 1 s window) flags some windows,
// but not more than q of them (the EVT tails with γ ≥ 0 are conservative on these light,
// Gaussian tails), and every threshold falls as the knob rises.
TEST(Detect, FalseIncidentsPerDaySetsTheWindowFalseAlarmRate) {
  const Recording good = synth(3000, 0, 0, 0.0, 21), run = synth(3000, 0, 0, 0.0, 22);
  DetectOptions o;
  const DetectResult strict = detect(run, {good}, o);
  o.false_per_day = 8640;
  const DetectResult loose = detect(run, {good}, o);
  EXPECT_NEAR(loose.window_false_rate, 0.1, 1e-6);
  const auto share = [](const DetectResult& r) {
    std::size_t n = 0;
    for (double f : r.fused) n += f >= 1.0;
    return double(n) / double(r.fused.size());
  };
  EXPECT_EQ(share(strict), 0.0);
  EXPECT_TRUE(strict.incidents.empty());
  EXPECT_GT(share(loose), 0.002);
  EXPECT_LE(share(loose), 0.1);
  for (std::size_t d = 0; d < 2; ++d)
    EXPECT_LT(loose.detectors[d].threshold, strict.detectors[d].threshold) << strict.detectors[d].name;
  o.false_per_day = 0;
  EXPECT_THROW(detect(run, {good}, o), DetectError);
}

TEST(Detect, GapsDoNotBreakScoring) {
  Recording run = synth(120, 50, 80, 12.0, 8);
  for (std::size_t r = 10; r < 120; r += 7) run.values(r, 1) = std::nan("");
  DetectResult res = detect(run, {}, anomalies());
  ASSERT_EQ(res.incidents.size(), 1u);
  for (double f : res.fused) EXPECT_TRUE(std::isfinite(f));
}

}  // namespace
}  // namespace reveal

namespace reveal {
namespace {

// Two gauges that move together (b follows a) until, in [from, to), b mirrors a instead: each
// stays within its usual range, only their correlation breaks — the PCA residual's case.
Recording broken_correlation(std::size_t n, std::size_t from, std::size_t to, std::uint64_t seed) {
  Recording r;
  r.meta.hostname = "synthetic";
  r.meta.interval_s = 1.0;
  r.channels = {{"test:rx_rate", "count/s", Kind::gauge, Subsystem::network},
                {"test:softirq_pct", "%", Kind::gauge, Subsystem::cpu},
                {"test:disk_util", "%", Kind::gauge, Subsystem::storage}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::bernoulli_distribution flip(0.5);
  double level = 150;  // a is high or low for 10 s stretches, never near its mean for long
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 10 == 0) level = flip(rng) ? 150 : -150;
    const double a = 500 + level + 20 * noise(rng);
    const double b = (i >= from && i < to) ? 50 - (a - 500) / 10 : 50 + (a - 500) / 10;
    const double row[] = {a, b + 0.5 * noise(rng), 10 + 2 * noise(rng)};
    r.values.append_row(row);
    r.t_unix_ns.push_back(std::int64_t(1'700'000'000) * 1'000'000'000 + std::int64_t(i) * 1'000'000'000);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  return r;
}

const DetectorTrace& trace(const DetectResult& r, const std::string& name) {
  for (const auto& d : r.detectors)
    if (d.name == name) return d;
  throw std::runtime_error("no trace " + name);
}

TEST(Detect, PcaResidualSeesABrokenCorrelationAndJoinsFusionOnlyWhenAsked) {
  // Against a good run (the model plane holds the gauges' correlation), the same run with the
  // correlation broken for 40 s: the same random draws, so only b's sign differs in the span.
  const Recording good = broken_correlation(240, 240, 240, 7);
  const Recording run = broken_correlation(240, 120, 160, 7);
  DetectOptions o = anomalies();
  const DetectResult report = detect(run, {good}, o);
  o.pca = PcaUse::off;
  const DetectResult off = detect(run, {good}, o);
  o.pca = PcaUse::fuse;
  const DetectResult fuse = detect(run, {good}, o);
  // report: the same fused score as without PCA, plus the two PCA traces.
  EXPECT_EQ(report.fused, off.fused);
  EXPECT_EQ(off.detectors.size(), 3u);  // robust_z, robust_z_trail, iforest
  ASSERT_EQ(report.detectors.size(), 5u);
  const DetectorTrace& spe = trace(fuse, "pca_spe");
  EXPECT_EQ(trace(report, "pca_t2").raw.size(), report.fused.size());
  // The residual stream is above its robust cut inside the broken span and below it elsewhere.
  std::size_t in_hi = 0, in_n = 0, out_hi = 0, out_n = 0;
  for (std::size_t k = 0; k < spe.calibrated.size(); ++k) {
    const double t = report.window_start_s[k];
    const bool hi = spe.calibrated[k] >= spe.cut;
    if (t >= 121 && t <= 156) { in_hi += hi; ++in_n; }
    else if (t < 115 || t > 162) { out_hi += hi; ++out_n; }
  }
  EXPECT_GT(double(in_hi), 0.8 * double(in_n)) << in_hi << "/" << in_n;
  EXPECT_LT(double(out_hi), 0.03 * double(out_n)) << out_hi << "/" << out_n;
  // The marginal detectors miss it; fused with PCA, one incident covers the span.
  EXPECT_TRUE(off.incidents.empty());
  ASSERT_EQ(fuse.incidents.size(), 1u);
  const Incident& inc = fuse.incidents[0];
  EXPECT_LE(inc.start_s, 125.0);
  EXPECT_GE(inc.end_s, 155.0);
  // Attribution comes from the detector that raised it: the PCA residual blames the two gauges
  // whose correlation broke (network and cpu), not the unrelated disk gauge.
  const Incident::DetectorView* pca = nullptr;
  for (const auto& d : inc.detectors)
    if (d.detector == "pca_spe") pca = &d;
  ASSERT_NE(pca, nullptr);
  EXPECT_GE(pca->peak_level, 1.0);
  EXPECT_NE(inc.subsystem, Subsystem::storage);
  EXPECT_TRUE(inc.subsystem == Subsystem::network || inc.subsystem == Subsystem::cpu) << to_string(inc.subsystem);
  double storage = 0;
  for (const auto& [sub, v] : inc.subsystem_shares)
    if (sub == Subsystem::storage) storage = v;
  EXPECT_LT(storage, 0.2);
}

}  // namespace
}  // namespace reveal

namespace reveal {
namespace {

// The robust-z detector's trailing-mean stream (window_model.h): a shift of 5 noise SDs held
// for 30 s scores about 3–4 robust SDs in a 3-sample window — under the window stream's EVT
// threshold, so the window stream alone mostly misses it — but the 10-sample trailing mean's
// spread is narrower by about √10/√3, so the trail stream finds it. Clean runs stay clean
// either way.
TEST(Detect, TheTrailingMeanFindsAModerateShiftThatHolds) {
  int with = 0, without = 0, clean = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const Recording run = synth(120, 50, 80, 5.0, seed);
    DetectOptions o = anomalies();
    const DetectResult a = detect(run, {}, o);
    for (const Incident& inc : a.incidents) {
      EXPECT_GE(inc.start_s, 45.0) << "seed " << seed;
      EXPECT_LE(inc.end_s, 85.0) << "seed " << seed;
      EXPECT_EQ(inc.subsystem, Subsystem::cpu) << "seed " << seed;
    }
    with += !a.incidents.empty();
    ASSERT_NO_THROW((void)trace(a, "robust_z_trail"));
    o.window.trail = 0;  // not longer than the window: no trail stream
    const DetectResult b = detect(run, {}, o);
    EXPECT_THROW((void)trace(b, "robust_z_trail"), std::runtime_error);
    EXPECT_EQ(b.fused_detectors, 2u);
    without += !b.incidents.empty();
    clean += int(detect(synth(120, 0, 0, 0, seed + 100), {}, anomalies()).incidents.size());
  }
  EXPECT_GE(with, 6);
  EXPECT_LE(without, 3);
  EXPECT_EQ(clean, 0);
}

// Hypervisor steal is judged by the level it held recently (workload_change.h), not by a run's
// narrow trailing means: the trail stream leaves it out, so the same held shift that the trail
// finds on another channel leaves it quiet when the channel is steal.
TEST(Detect, TheTrailStreamLeavesHypervisorStealOut) {
  double held = 0, steal = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    Recording run = synth(120, 50, 80, 5.0, seed);
    const DetectResult a = detect(run, {}, anomalies());
    run.channels[0].name = "derived:cpu_steal_pct";
    const DetectResult b = detect(run, {}, anomalies());
    for (std::size_t k = 0; k < a.fused.size(); ++k) {
      const double la = trace(a, "robust_z_trail").level[k], lb = trace(b, "robust_z_trail").level[k];
      if (std::isfinite(la)) held = std::max(held, la);
      if (std::isfinite(lb)) steal = std::max(steal, lb);
    }
  }
  EXPECT_GE(held, 1.0);
  EXPECT_LT(steal, 0.5);
}

// A burst shorter than the trail is the window stream's: the trail stream counts a channel only
// while every sample of its trail lies on one side of the reference median.
TEST(Detect, ABurstShorterThanTheTrailLeavesTheTrailStreamQuiet) {
  const Recording run = synth(120, 60, 64, 12.0, 3);
  const DetectResult res = detect(run, {}, anomalies());
  ASSERT_EQ(res.incidents.size(), 1u);
  const DetectorTrace& z = trace(res, "robust_z");
  const DetectorTrace& t = trace(res, "robust_z_trail");
  double zmax = 0, tmax = 0;
  for (std::size_t k = 0; k < res.fused.size(); ++k) {
    if (std::isfinite(z.level[k])) zmax = std::max(zmax, z.level[k]);
    if (std::isfinite(t.level[k])) tmax = std::max(tmax, t.level[k]);
  }
  EXPECT_GE(zmax, 1.0);
  EXPECT_LT(tmax, 0.5);
}

// `reveal detect` withdraws a new workload's incident as the agent does: an anomaly whose
// onset the tenant scans explain by a new cgroup alone, nobody hurt, becomes a workload change
// (withdrawn, dated by the deciding scan); another incident and an absence stay.
TEST(Detect, WithdrawWorkloadStartsMovesANewWorkloadsIncidentToTheChanges) {
  constexpr std::int64_t kS = 1'000'000'000;
  TenantTimeline tl;
  tl.paths = {"jobs/new"};
  for (int t = 0; t <= 400; t += 5) {
    TenantScan s;
    s.t_unix_ns = t * kS;
    if (t >= 99) {
      s.ids.push_back(0);
      s.counters.push_back({1.5e6 * (t - 99), 0, 0, 0});
    }
    tl.scans.push_back(std::move(s));
  }
  DetectResult r;
  const auto incident = [](const char* kind, std::int64_t start) {
    Incident inc;
    inc.kind = kind;
    inc.start_unix_ns = start;
    inc.end_unix_ns = start + 20 * kS;
    inc.symptom.name = "proc.pressure:cpu_some_pct";
    return inc;
  };
  r.incidents = {incident("anomaly", 100 * kS), incident("absence", 101 * kS), incident("anomaly", 300 * kS)};
  r.workload_changes = {incident("workload_change", 50 * kS)};
  withdraw_workload_starts(r, tl);
  ASSERT_EQ(r.incidents.size(), 2u);
  EXPECT_EQ(r.incidents[0].kind, "absence");
  EXPECT_EQ(r.incidents[1].start_unix_ns, 300 * kS);  // the newcomer is old news by then
  ASSERT_EQ(r.workload_changes.size(), 2u);
  const Incident& c = r.workload_changes[1];
  EXPECT_EQ(c.start_unix_ns, 100 * kS);
  EXPECT_EQ(c.kind, "workload_change");
  EXPECT_EQ(c.withdrawn_unix_ns, 105 * kS);
  EXPECT_NE(c.withdrawn.find("jobs/new"), std::string::npos);
  EXPECT_TRUE(c.symptom.name.empty());
  // A workload change that kept drifting (a leak in the job that just started) is an incident
  // as a whole: its onset was judged a change already, and it stays.
  DetectResult leak;
  leak.incidents = {incident("anomaly", 100 * kS)};
  leak.incidents[0].drifted = true;
  withdraw_workload_starts(leak, tl);
  EXPECT_EQ(leak.incidents.size(), 1u);
  EXPECT_TRUE(leak.workload_changes.empty());
  // No scans: nothing moves.
  DetectResult same;
  same.incidents = {incident("anomaly", 100 * kS)};
  withdraw_workload_starts(same, TenantTimeline{});
  EXPECT_EQ(same.incidents.size(), 1u);
}

// An anomaly incident shorter than min_duration_s (start to dated end) becomes a transient
// among the workload changes; one that reaches it, absences and changes stay where they are.
TEST(Detect, IncidentsShorterThanTheMinimumDurationAreTransients) {
  constexpr std::int64_t kS = 1'000'000'000;
  const auto incident = [](const char* kind, std::int64_t start, std::int64_t s) {
    Incident inc;
    inc.kind = kind;
    inc.start_unix_ns = start;
    inc.end_unix_ns = start + s;
    inc.symptom.name = "proc.pressure:cpu_some_pct";
    inc.action = "find the CPU hog";
    return inc;
  };
  // At 1 Hz, the span is the time from the first sample to the last plus the one interval the
  // first sample covers: 9 s between them is 10 s of symptoms.
  DetectResult r;
  r.meta.interval_s = 1.0;
  r.incidents = {incident("anomaly", 100 * kS, 3 * kS), incident("absence", 101 * kS, 2 * kS),
                 incident("anomaly", 200 * kS, 9 * kS), incident("anomaly", 300 * kS, 9 * kS - 1)};
  r.workload_changes = {incident("workload_change", 150 * kS, 3 * kS)};
  IncidentRule rule;
  EXPECT_EQ(rule.min_duration_s, 10.0);
  retire_transients(r, rule);
  ASSERT_EQ(r.incidents.size(), 2u);
  EXPECT_EQ(r.incidents[0].kind, "absence");
  EXPECT_EQ(r.incidents[1].start_unix_ns, 200 * kS);  // exactly 10 s: an incident
  ASSERT_EQ(r.workload_changes.size(), 3u);  // by start
  EXPECT_EQ(r.workload_changes[0].kind, "transient");
  EXPECT_EQ(r.workload_changes[0].start_unix_ns, 100 * kS);
  EXPECT_EQ(r.workload_changes[0].withdrawn,
            "a transient: its symptoms lasted 4.0 s, under the 10 s an incident must last (min_duration)");
  EXPECT_EQ(r.workload_changes[0].withdrawn_unix_ns, 103 * kS);
  EXPECT_EQ(r.workload_changes[0].action, pipeline::kTransientAction);
  EXPECT_EQ(r.workload_changes[1].kind, "workload_change");
  EXPECT_EQ(r.workload_changes[2].kind, "transient");
  EXPECT_EQ(r.workload_changes[2].start_unix_ns, 300 * kS);
  // 0 s keeps every incident.
  DetectResult all;
  all.incidents = {incident("anomaly", 100 * kS, 1 * kS)};
  rule.min_duration_s = 0;
  retire_transients(all, rule);
  EXPECT_EQ(all.incidents.size(), 1u);
  EXPECT_TRUE(all.workload_changes.empty());
}

}  // namespace
}  // namespace reveal
