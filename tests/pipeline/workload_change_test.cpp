// Workload changes vs faults in the streaming detector (issue #17): the symptom gate, the
// settled test, and the detector's episodes on a synthetic host.
#include "pipeline/workload_change.h"

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "reveal/baseline_model.h"
#include "reveal/streaming.h"

namespace reveal {
namespace {

constexpr std::int64_t kT0 = std::int64_t(1'700'000'000) * 1'000'000'000;

// 1 Hz synthetic host: CPU busy % and memory used % (load), the CPU pressure stall share
// (symptom: proc.pressure), and a received-bytes counter (load).
struct Host {
  std::vector<ChannelInfo> channels = {{"derived_src:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                       {"test:mem_used", "%", Kind::gauge, Subsystem::memory},
                                       {"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu},
                                       {"test:rx_bytes", "bytes", Kind::counter, Subsystem::network}};
  std::mt19937_64 rng;
  std::normal_distribution<double> noise{0.0, 1.0};
  double rx = 0;
  explicit Host(std::uint64_t seed) : rng(seed) {}
  // cpu: busy level; mem: memory level; psi: stall share; rx_rate: bytes/s.
  std::vector<double> row(double cpu, double mem, double psi, double rx_rate = 5e6) {
    rx += rx_rate + 2e5 * noise(rng);
    return {cpu + 2 * noise(rng), mem + 1 * noise(rng), std::max(0.0, psi + 0.5 * noise(rng)), rx};
  }
};

StreamingOptions options() {
  StreamingOptions o;
  o.warmup_samples = 60;
  o.refit_samples = 120;
  o.history_samples = 600;
  o.relearn_samples = 30;
  return o;
}

struct Episodes {
  std::size_t incidents = 0, changes_opened = 0, changes_closed = 0;
  std::int64_t first_incident_at = -1, first_change_at = -1;
};

template <class RowFn>
Episodes run(StreamingDetector& d, Host& h, std::size_t from, std::size_t to, RowFn&& f) {
  Episodes e;
  for (std::size_t i = from; i < to; ++i) {
    const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, f(h, i));
    if (u.opened) {
      ++e.incidents;
      if (e.first_incident_at < 0) e.first_incident_at = std::int64_t(i);
    }
    if (u.change_opened) {
      ++e.changes_opened;
      if (e.first_change_at < 0) e.first_change_at = std::int64_t(i);
    }
    e.changes_closed += u.change_closed;
  }
  return e;
}

// A window's minimum per channel for robust z `z` (× `scale`) over `median`.
std::vector<double> low(const std::vector<double>& z, const std::vector<double>& scale, const std::vector<double>& median) {
  std::vector<double> out(z.size());
  for (std::size_t j = 0; j < z.size(); ++j) out[j] = median[j] + z[j] * scale[j];
  return out;
}

TEST(SymptomGate, OnlyMaterialRisesOfSymptomChannelsCount) {
  const ChannelInfo psi{"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu};
  const ChannelInfo busy{"derived:cpu_busy_pct", "%", Kind::gauge, Subsystem::cpu};
  const ChannelInfo retrans{"derived:tcp_loss_retrans_per_s", "segments/s", Kind::gauge, Subsystem::network};
  pipeline::SymptomGate g;
  g.reset({&busy, &psi, &retrans}, 2);
  EXPECT_EQ(g.symptom_channels(), 2u);
  const std::vector<double> scale{1.0, 1.0, 0.5}, med{40, 2, 1};
  const auto sym = [&](std::vector<double> z, std::vector<double> sc) { return g.symptomatic(z, med, low(z, sc, med)); };
  EXPECT_FALSE(sym({50, 0, 0}, scale)) << "load alone is no symptom";
  EXPECT_FALSE(sym({0, 8, 0}, scale)) << "PSI up 8 points: not material";
  EXPECT_TRUE(sym({0, 12, 0}, scale)) << "PSI up 12 points";
  EXPECT_FALSE(sym({0, 5, 0}, {1, 3, 1})) << "z below 6";
  EXPECT_TRUE(sym({0, 0, 7}, scale)) << "retransmits: any significant rise";
  EXPECT_FALSE(sym({0, -20, -9}, scale)) << "falls are no symptom";
  EXPECT_FALSE(g.symptomatic(std::vector<double>{0, NAN, NAN}, med, med));
  // The rise is measured on the values, not through z, which the detector clips at 200: a
  // stall share from 2 % to 90 % on a reference whose scale is 0.1 point is a rise of 88.
  const std::vector<double> z200{0, 200, 0}, stalled{40, 90, 1};
  EXPECT_EQ(g.strongest(z200, med, stalled), 1);
  EXPECT_DOUBLE_EQ(g.rise(1, med, stalled), 88.0);
  // Processes created: a job start's few dozen are not a storm, thousands a second are.
  const ChannelInfo forks{"proc.stat:processes", "count/s", Kind::counter, Subsystem::cpu};
  g.reset({&forks}, 2);
  const std::vector<double> f_med{5};
  EXPECT_FALSE(g.symptomatic(std::vector<double>{40}, f_med, std::vector<double>{45}));
  EXPECT_TRUE(g.symptomatic(std::vector<double>{40}, f_med, std::vector<double>{405}));
  // Major faults: a job start's page-ins (a few hundred a second) are not memory pressure; the
  // operators' 1000/s is.
  const ChannelInfo majflt{"proc.vmstat:pgmajfault", "count/s", Kind::counter, Subsystem::memory};
  g.reset({&majflt}, 2);
  EXPECT_FALSE(g.symptomatic(std::vector<double>{40}, f_med, std::vector<double>{250}));
  EXPECT_TRUE(g.symptomatic(std::vector<double>{40}, f_med, std::vector<double>{1500}));
}

// Runnable tasks count by how many more wait beyond the CPUs (the reader is one of them): a
// job starting on an idle 2-CPU host (1 → 3) is no symptom, a CPU hog on a host another job
// already saturates (5 → 9) is, though its rise in tasks is the same size.
TEST(SymptomGate, TasksWaitingBeyondTheCpusCountOnASaturatedHost) {
  const ChannelInfo running{"proc.stat:procs_running", "count", Kind::gauge, Subsystem::cpu};
  const ChannelInfo wait{"derived:runqueue_wait_per_cpu", "s/s", Kind::gauge, Subsystem::cpu};
  pipeline::SymptomGate g;
  g.reset({&running, &wait}, 2);
  EXPECT_EQ(g.symptom_channels(), 2u);
  const std::vector<double> z8{8, 0}, idle{1, 0.2}, busy{5, 0.2};
  EXPECT_FALSE(g.symptomatic(z8, idle, std::vector<double>{4, 0.2})) << "idle host: 1 → 4";
  EXPECT_TRUE(g.symptomatic(z8, idle, std::vector<double>{5, 0.2})) << "idle host: 1 → 5";
  EXPECT_TRUE(g.symptomatic(z8, busy, std::vector<double>{9, 0.2})) << "saturated: 5 → 9";
  EXPECT_EQ(g.strongest(z8, busy, std::vector<double>{9, 0.2}), 0);
  EXPECT_DOUBLE_EQ(g.rise(0, busy, std::vector<double>{9, 0.2}), 4.0) << "waiting tasks 2 → 6";
  EXPECT_FALSE(g.symptomatic(z8, std::vector<double>{NAN, 0.2}, std::vector<double>{9, 0.2})) << "no reference";
  EXPECT_FALSE(g.symptomatic(std::vector<double>{5, 0}, busy, std::vector<double>{9, 0.2})) << "z below 6";
  // A 192-CPU host: 600 runnable tasks against 3 are a material rise, whatever z's clip.
  g.reset({&running, &wait}, 192);
  EXPECT_TRUE(g.symptomatic(std::vector<double>{200, 0}, std::vector<double>{3, 0}, std::vector<double>{600, 0}));
  g.reset({&running, &wait}, 2);
  // Run-queue wait: one more task waiting per CPU on average.
  const std::vector<double> zw{0, 8};
  EXPECT_FALSE(g.symptomatic(zw, busy, std::vector<double>{5, 1.0})) << "+0.8 s/s";
  EXPECT_TRUE(g.symptomatic(zw, busy, std::vector<double>{5, 1.4})) << "+1.2 s/s";
  // Without the host's CPU count, runnable tasks say nothing.
  g.reset({&running, &wait}, 0);
  EXPECT_EQ(g.symptom_channels(), 1u);
  EXPECT_FALSE(g.symptomatic(z8, busy, std::vector<double>{9, 0.2}));
}

// Memory in use is a level every job moves; only its part beyond 90 % (MemAvailable under 10 %:
// the host close to out of memory) is a symptom.
TEST(SymptomGate, MemoryInUseCountsOnlyNearOutOfMemory) {
  EXPECT_EQ(channel_role("derived:mem_used_pct"), ChannelRole::saturation);
  const ChannelInfo used{"derived:mem_used_pct", "%", Kind::gauge, Subsystem::memory};
  pipeline::SymptomGate g;
  g.reset({&used}, 0);  // no CPU count needed
  EXPECT_EQ(g.symptom_channels(), 1u);
  const std::vector<double> z{50}, ref{8};
  EXPECT_FALSE(g.symptomatic(z, ref, std::vector<double>{85})) << "a job filling 77 points of memory";
  EXPECT_FALSE(g.symptomatic(z, ref, std::vector<double>{91.5})) << "1.5 points beyond 90";
  EXPECT_TRUE(g.symptomatic(z, ref, std::vector<double>{94})) << "MemAvailable 6 %";
  EXPECT_DOUBLE_EQ(g.rise(0, ref, std::vector<double>{94}), 4.0);
  EXPECT_FALSE(g.symptomatic(z, std::vector<double>{93}, std::vector<double>{94})) << "a host that lives beyond 90";
  EXPECT_TRUE(g.symptomatic(z, std::vector<double>{93}, std::vector<double>{96}));
  EXPECT_FALSE(g.symptomatic(std::vector<double>{4}, ref, std::vector<double>{94})) << "z below 6";
}

// Memory being used up (derived:mem_fill_pct_per_min) is a symptom once the pace would empty
// what is available within 5 minutes (20 %/min); a slower pace is not material.
TEST(SymptomGate, MemoryUsedUpFastIsASymptomSlowIsNot) {
  EXPECT_EQ(channel_role("derived:mem_fill_pct_per_min"), ChannelRole::symptom);
  const ChannelInfo fill{"derived:mem_fill_pct_per_min", "%/min", Kind::gauge, Subsystem::memory};
  pipeline::SymptomGate g;
  g.reset({&fill}, 0);
  EXPECT_EQ(g.symptom_channels(), 1u);
  const std::vector<double> z{200}, ref{0};
  EXPECT_FALSE(g.symptomatic(z, ref, std::vector<double>{12})) << "empty within ~8 minutes";
  EXPECT_TRUE(g.symptomatic(z, ref, std::vector<double>{28})) << "a leak of 128 MiB/s on 20 GiB";
}

TEST(RecentPeaks, TheHighestLevelOverTheSpanNaNIgnored) {
  pipeline::RecentPeaks p;
  p.reset(2, 120);  // 60 buckets of 2 windows
  EXPECT_TRUE(std::isnan(p.peak(0)));
  p.push(std::vector<double>{5, NAN});
  p.push(std::vector<double>{3, 1});
  EXPECT_DOUBLE_EQ(p.peak(0), 5);
  EXPECT_DOUBLE_EQ(p.peak(1), 1);
  EXPECT_TRUE(std::isnan(p.peak(2))) << "out of range";
  for (int i = 0; i < 117; ++i) p.push(std::vector<double>{0, 0});
  EXPECT_DOUBLE_EQ(p.peak(0), 5) << "119 windows later: still inside the span";
  for (int i = 0; i < 4; ++i) p.push(std::vector<double>{0, 0});
  EXPECT_DOUBLE_EQ(p.peak(0), 0) << "forgotten once its bucket left the span";
  p.reset(1, 0);  // a span of at least one window
  p.push(std::vector<double>{7});
  EXPECT_DOUBLE_EQ(p.peak(0), 7);
  // With a lag, a level joins the peaks only once `lag` newer windows were pushed.
  p.reset(1, 100, 3);
  p.push(std::vector<double>{9});
  for (int i = 0; i < 2; ++i) p.push(std::vector<double>{1});
  EXPECT_TRUE(std::isnan(p.peak(0))) << "still in the delay line";
  p.push(std::vector<double>{1});
  EXPECT_DOUBLE_EQ(p.peak(0), 9);
  p.push(std::vector<double>{});  // too short: ignored
  EXPECT_DOUBLE_EQ(p.peak(0), 9);
}

// Hypervisor steal comes from the neighbours, never from the guest's own jobs: a level the host
// already reached recently is known; only a material step above it is a new symptom. Other
// symptoms ignore the recent peaks.
TEST(SymptomGate, AmbientStealIsJudgedFromItsRecentPeak) {
  EXPECT_TRUE(pipeline::ambient_symptom("derived:cpu_steal_pct"));
  EXPECT_TRUE(pipeline::ambient_symptom("derived:cpu_steal_pct.cpu3"));
  EXPECT_FALSE(pipeline::ambient_symptom("derived:cpu_steal_pctx"));
  EXPECT_FALSE(pipeline::ambient_symptom("derived:psi_cpu_some_pct"));
  const ChannelInfo steal{"derived:cpu_steal_pct", "%", Kind::gauge, Subsystem::cpu};
  const ChannelInfo psi{"derived:psi_cpu_some_pct", "%", Kind::gauge, Subsystem::cpu};
  pipeline::SymptomGate g;
  g.reset({&steal, &psi}, 2);
  const std::vector<double> z{20, 20}, med{0.5, 1}, low{35, 35};
  EXPECT_EQ(g.strongest(z, med, low), 0) << "no history: steal +34.5 points is a symptom";
  EXPECT_EQ(g.strongest(z, med, low, std::vector<double>{NAN, NAN}), 0) << "none seen";
  EXPECT_EQ(g.strongest(z, med, low, std::vector<double>{40, 40}), 1) << "steal below its recent peak; PSI counts";
  const std::vector<double> low_steal{35, 1};
  EXPECT_FALSE(g.symptomatic(z, med, low_steal, std::vector<double>{40, NAN}));
  EXPECT_FALSE(g.symptomatic(z, med, low_steal, std::vector<double>{30, NAN})) << "only 5 points above the peak";
  EXPECT_TRUE(g.symptomatic(z, med, low_steal, std::vector<double>{20, NAN})) << "15 points above the peak";
  EXPECT_TRUE(g.symptomatic(z, med, low_steal, std::vector<double>{0.2, NAN})) << "a peak below the reference says nothing";
  EXPECT_DOUBLE_EQ(g.rise(0, med, low_steal), 34.5) << "the rise reported is still over the reference";
}

// A symptom-led window needs what strongest() needs and the same material step beyond the
// highest level the channel held in the minute before the last 30 s; steal never leads.
TEST(SymptomGate, AStepBeyondTheRecentPeakLeadsAWindow) {
  const ChannelInfo steal{"derived:cpu_steal_pct", "%", Kind::gauge, Subsystem::cpu};
  const ChannelInfo psi{"derived:psi_cpu_some_pct", "%", Kind::gauge, Subsystem::cpu};
  const ChannelInfo running{"proc.stat:procs_running", "count", Kind::gauge, Subsystem::cpu};
  pipeline::SymptomGate g;
  g.reset({&steal, &psi, &running}, 2);
  ASSERT_EQ(g.channels(), (std::vector<std::size_t>{0, 1, 2}));
  const std::vector<double> z{20, 20, 0}, med{0.5, 1, 5}, low{35, 35, 5};
  const std::vector<double> none{NAN, NAN, NAN};
  EXPECT_EQ(g.stepped(z, med, low, none), 1) << "no history: PSI +34 points; steal is never led";
  EXPECT_EQ(g.stepped(z, med, low, std::vector<double>{NAN, 20, NAN}), 1) << "15 points above the recent peak";
  EXPECT_EQ(g.stepped(z, med, low, std::vector<double>{NAN, 30, NAN}), -1) << "only 5 points above it";
  EXPECT_EQ(g.stepped(std::vector<double>{20, 5, 0}, med, low, none), -1) << "z below 6";
  EXPECT_EQ(g.stepped(z, med, std::vector<double>{35, 9, 5}, none), -1) << "8 points: not material";
  // Runnable tasks: the step is counted beyond the CPUs from the recent peak too.
  const std::vector<double> zr{0, 0, 8}, lr{0.5, 1, 9};
  EXPECT_EQ(g.stepped(zr, med, lr, std::vector<double>{NAN, NAN, 6}), 2) << "waiting 3 → 6";
  EXPECT_EQ(g.stepped(zr, med, lr, std::vector<double>{NAN, NAN, 8}), -1) << "waiting 5 → 6";
  const auto [span, lag] = pipeline::step_peaks_span(1.0);
  EXPECT_EQ(span, 60u);
  EXPECT_EQ(lag, 30u);
  EXPECT_EQ(pipeline::step_peaks_span(10.0), (std::pair<std::size_t, std::size_t>{6, 3}));
}

TEST(SmoothedAverage, KernelAveragesOfOtherChannels) {
  for (const char* n : {"proc.pressure:cpu_some_avg10", "proc.pressure:io_full_avg300", "proc.loadavg:load1",
                        "proc.loadavg:load15", "cgroup.pressure:memory_some_avg60.kubepods",
                        "cgroup:cpu_pressure_some_avg10.reveal-hostday", "cgroup:io_pressure_full_avg10.kubepods"})
    EXPECT_TRUE(pipeline::smoothed_average(n)) << n;
  for (const char* n : {"proc.pressure:cpu_some_total", "derived:psi_cpu_some_pct", "proc.loadavg:running",
                        "proc.loadavg:threads", "proc.stat:procs_running", "cgroup:cpu_pressure_some_total.x",
                        "cgroup:cpu_stat_usage_usec.avg", "no_colon", ""})
    EXPECT_FALSE(pipeline::smoothed_average(n)) << n;
}

TEST(Settled, APlateauIsSettledARampIsNot) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise;
  const std::size_t n = 40;
  std::vector<std::vector<double>> plateau(n), ramp(n);
  for (std::size_t r = 0; r < n; ++r) {
    plateau[r] = {70 + 2 * noise(rng), 30 + noise(rng), 5 + noise(rng)};
    ramp[r] = {20 + 2.0 * double(r) + noise(rng), 60 - 1.5 * double(r) + noise(rng), 5 + noise(rng)};
  }
  const std::vector<int> cols{0, 1, 2};
  const std::vector<double> floors{1, 1, 1}, zbar{20, -15, 0.5};
  auto from = [](const std::vector<std::vector<double>>& m) {
    return [&m](std::uint64_t r) { return std::span<const double>(m[r]); };
  };
  EXPECT_TRUE(pipeline::settled(0, n, from(plateau), cols, floors, zbar));
  EXPECT_FALSE(pipeline::settled(0, n, from(ramp), cols, floors, zbar));
  EXPECT_FALSE(pipeline::settled(0, 6, from(plateau), cols, floors, zbar)) << "too few rows";
  // Channels that did not move in the episode say nothing: a ramp there is ignored.
  EXPECT_TRUE(pipeline::settled(0, n, from(ramp), cols, floors, std::vector<double>{0.1, 0.2, 0.5}));
}

// detect()'s walk over a whole run, the streaming detector's rules against a fixed reference.
struct Walk {
  std::vector<char> anomalous = std::vector<char>(250, 0), symptomatic = std::vector<char>(250, 0);
  bool settles = true;
  std::vector<pipeline::EpisodePart> operator()(bool changes = true) const {
    std::unique_ptr<bool[]> an(new bool[anomalous.size()]), sy(new bool[anomalous.size()]);
    for (std::size_t k = 0; k < anomalous.size(); ++k) {
      an[k] = anomalous[k];
      sy[k] = symptomatic[k];
    }
    const std::vector<double> z{0.0};
    return pipeline::episodes(std::span<const bool>(an.get(), anomalous.size()), {},
                              std::span<const bool>(sy.get(), anomalous.size()), IncidentRule{}, changes, 3, 1, 30, 3,
                              [&](std::size_t) { return std::span<const double>(z); },
                              [this](std::uint64_t, std::uint64_t, std::span<const double>) { return settles; });
  }
  void set(std::vector<char>& f, std::size_t from, std::size_t to) { std::fill(f.begin() + from, f.begin() + to + 1, 1); }
};

TEST(Episodes, WithoutASymptomAnEpisodeIsAChangeUnlessItKeepsDrifting) {
  Walk walk;
  walk.set(walk.anomalous, 10, 40);
  auto parts = walk();
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_FALSE(parts[0].incident);
  EXPECT_EQ(parts[0].first, 10u);
  EXPECT_EQ(parts[0].last, 40u);
  EXPECT_EQ(parts[0].end_row, -1);
  parts = walk(false);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_TRUE(parts[0].incident) << "workload changes off";
  // 200 windows that never settle: a leak, one incident from the start.
  Walk leak;
  leak.set(leak.anomalous, 10, 210);
  leak.settles = false;
  parts = leak();
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_TRUE(parts[0].incident);
  EXPECT_EQ(parts[0].first, 10u);
  // Its own symptoms count from the window after the drift decided it (the row 10 + 3 + 90,
  // window 101): a lone symptomatic window while it was a change is not its own (the streaming
  // detector's drift incident starts its symptoms anew; detect() measures min_duration so).
  EXPECT_EQ(parts[0].symptoms_from, 101u);
  leak.set(leak.symptomatic, 14, 14);
  parts = leak();
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_TRUE(parts[0].incident);
  EXPECT_EQ(parts[0].symptoms_from, 101u);
  leak.symptomatic.assign(250, 0);
  leak.settles = true;
  parts = leak();
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_FALSE(parts[0].incident) << "it settled: a new steady load";
  // Shorter than the transition plus 90 rows: it never counts as drifting.
  Walk short_one;
  short_one.set(short_one.anomalous, 10, 90);
  short_one.settles = false;
  EXPECT_FALSE(short_one()[0].incident);
}

TEST(Episodes, SymptomsAtTheOpeningMakeAnIncidentLaterOnesCutTheChange) {
  Walk walk;
  walk.set(walk.anomalous, 10, 60);
  walk.set(walk.symptomatic, 11, 11);
  auto parts = walk();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(parts[0].incident) << "a symptom in the opening windows";
  // No symptom for kSymptomGoneWindows (10) windows after its last (window 11, rows 11–13): the
  // incident ends at window 21 (rows 21–23), dated at its last symptomatic row; the load that
  // stays is a change from that window on, dated from the row after the symptom.
  static_assert(pipeline::kSymptomGoneWindows == 10);
  const auto ends_at_its_symptom = [&] {
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0].first, 10u);
    EXPECT_EQ(parts[0].last, 21u);
    EXPECT_EQ(parts[0].end_row, 13);
    EXPECT_TRUE(parts[0].ended_quiet);
    EXPECT_FALSE(parts[1].incident);
    EXPECT_EQ(parts[1].first, 21u);
    EXPECT_EQ(parts[1].last, 60u);
    EXPECT_EQ(parts[1].start_row, 14);
  };
  ends_at_its_symptom();
  walk.settles = false;  // a load still moving: the incident ends all the same, the change goes on
  parts = walk();
  ends_at_its_symptom();
  // A symptom that pauses for fewer windows keeps it one incident.
  Walk pause;
  pause.set(pause.anomalous, 10, 60);
  pause.set(pause.symptomatic, 10, 12);
  pause.set(pause.symptomatic, 21, 30);
  parts = pause();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(parts[0].incident);
  EXPECT_EQ(parts[0].last, 40u);
  EXPECT_EQ(parts[0].end_row, 32);
  Walk late;
  late.set(late.anomalous, 10, 60);
  late.set(late.symptomatic, 30, 60);
  parts = late();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_FALSE(parts[0].incident);
  EXPECT_EQ(parts[0].first, 10u);
  EXPECT_EQ(parts[0].last, 29u);
  EXPECT_EQ(parts[0].end_row, 30);
  EXPECT_TRUE(parts[1].incident);
  EXPECT_EQ(parts[1].first, 30u);
  EXPECT_EQ(parts[1].last, 60u);
  // One symptomatic window alone (K − 1 = 2 needed in a row) does not.
  Walk blip;
  blip.set(blip.anomalous, 10, 60);
  blip.set(blip.symptomatic, 30, 30);
  parts = blip();
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_FALSE(parts[0].incident);
}

TEST(WorkloadChange, AJobStartIsAChangeNotAnIncidentAndTheNewRegimeIsLearned) {
  Host h(1);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  ASSERT_TRUE(d.model_ready());
  // A job starts at 150: CPU and memory up, traffic up, no stall.
  const Episodes e = run(d, h, 150, 400, [](Host& x, std::size_t) { return x.row(75, 55, 0.5, 2e7); });
  EXPECT_EQ(e.incidents, 0u);
  EXPECT_EQ(e.changes_opened, 1u);
  EXPECT_GE(e.first_change_at, 150);
  EXPECT_LE(e.first_change_at, 154);
  ASSERT_EQ(d.workload_changes().size(), 1u);
  const Incident& ch = d.workload_changes()[0];
  EXPECT_EQ(ch.kind, "workload_change");
  EXPECT_EQ(ch.action, "ended: a new regime learned");
  EXPECT_NEAR(double(ch.start_unix_ns - kT0) * 1e-9, 150.0, 3.0);
  EXPECT_LE(double(ch.end_unix_ns - kT0) * 1e-9, 150.0 + 30 + 3 + 3);  // relearn_samples + window + slack
  EXPECT_FALSE(d.active_change());
  EXPECT_FALSE(d.active());
  EXPECT_EQ(d.regimes_remembered(), 1u);
}

TEST(WorkloadChange, AReturningWorkloadIsAKnownRegime) {
  Host h(2);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  run(d, h, 150, 400, [](Host& x, std::size_t) { return x.row(75, 55, 0.5, 2e7); });
  ASSERT_EQ(d.workload_changes().size(), 1u);
  // The job stops: the host is back in its first regime, which the memory knows.
  const Episodes e = run(d, h, 400, 500, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  EXPECT_EQ(e.incidents, 0u);
  ASSERT_EQ(d.workload_changes().size(), 2u);
  EXPECT_EQ(d.workload_changes()[1].action, "returned to a known regime");
  EXPECT_LE(double(d.workload_changes()[1].end_unix_ns - kT0) * 1e-9, 405.0);
  EXPECT_EQ(d.regimes_remembered(), 1u);  // the job's regime, now remembered in turn
}

TEST(WorkloadChange, AStallIsAnIncidentAtOnset) {
  Host h(3);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); });
  // A CPU hog: busy up and 30 % of the time stalled.
  const Episodes e = run(d, h, 150, 180, [](Host& x, std::size_t) { return x.row(95, 30, 30.0); });
  EXPECT_EQ(e.changes_opened, 0u);
  EXPECT_EQ(e.incidents, 1u);
  // Reported once its stall has lasted IncidentRule::min_duration_s (10 s), dated at the onset.
  EXPECT_GE(e.first_incident_at, 159);
  EXPECT_LE(e.first_incident_at, 154 + 10);
  ASSERT_TRUE(d.active());
  EXPECT_NEAR(double(d.active()->start_unix_ns - kT0) * 1e-9, 150.0, 3.0);
  EXPECT_EQ(d.active()->kind, "anomaly");
  EXPECT_EQ(d.active()->subsystem, Subsystem::cpu);
  // It ends with the fault.
  run(d, h, 180, 220, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); });
  EXPECT_FALSE(d.active());
  ASSERT_EQ(d.closed().size(), 1u);
  EXPECT_NEAR(double(d.closed()[0].end_unix_ns - kT0) * 1e-9, 180.0, 3.0);
}

// A stall of 5 s is a transient: never reported as an incident (no StreamUpdate::opened, no
// active()), one "transient" among the workload changes; with min_duration 0 it is an incident
// reported within the usual windows.
TEST(WorkloadChange, AStallShorterThanTheMinimumDurationIsATransient) {
  for (const double min_s : {10.0, 0.0}) {
    Host h(3);
    StreamingOptions o = options();
    o.detect.incident.min_duration_s = min_s;
    StreamingDetector d({}, h.channels, o);
    run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); });
    Episodes e = run(d, h, 150, 155, [](Host& x, std::size_t) { return x.row(95, 30, 30.0); });
    e.incidents += run(d, h, 155, 220, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); }).incidents;
    EXPECT_FALSE(d.active());
    if (min_s > 0) {
      EXPECT_EQ(e.incidents, 0u);
      EXPECT_TRUE(d.closed().empty());
      EXPECT_EQ(d.transients_total(), 1u);
      ASSERT_EQ(d.workload_changes().size(), 1u);
      const Incident& t = d.workload_changes()[0];
      EXPECT_EQ(t.kind, "transient");
      EXPECT_NEAR(double(t.start_unix_ns - kT0) * 1e-9, 150.0, 3.0);
      EXPECT_NE(t.withdrawn.find("a transient: its symptoms lasted"), std::string::npos) << t.withdrawn;
      EXPECT_EQ(t.action, pipeline::kTransientAction);
    } else {
      EXPECT_EQ(e.incidents, 1u);
      EXPECT_LE(e.first_incident_at, 154);
      EXPECT_EQ(d.closed().size(), 1u);
      EXPECT_EQ(d.transients_total(), 0u);
    }
  }
}

// The span counts the stall's samples: each covers the interval before it, so a stall of 10
// samples at 1 Hz spans 10 s, the minimum duration, and is an incident; one of 9 is a transient
// that lasted 9.0 s.
TEST(WorkloadChange, AStallOfTheMinimumDurationIsAnIncident) {
  for (const std::size_t n : {9u, 10u}) {
    Host h(3);
    StreamingDetector d({}, h.channels, options());
    run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); });
    Episodes e = run(d, h, 150, 150 + n, [](Host& x, std::size_t) { return x.row(95, 30, 30.0); });
    e.incidents += run(d, h, 150 + n, 230, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); }).incidents;
    if (n == 10) {
      EXPECT_EQ(e.incidents, 1u);
      EXPECT_EQ(d.transients_total(), 0u);
    } else {
      EXPECT_EQ(e.incidents, 0u);
      ASSERT_EQ(d.transients_total(), 1u);
      EXPECT_NE(d.workload_changes()[0].withdrawn.find("lasted 9.0 s"), std::string::npos)
          << d.workload_changes()[0].withdrawn;
    }
  }
}

// A reload of the incident rule (SIGHUP) that keeps min_windows keeps the windows of an
// opening incident: reloading at every sample gives the incident of never reloading, to its
// evidence.
TEST(WorkloadChange, AReloadKeepsAnOpeningIncidentsWindows) {
  std::vector<Incident> got;
  for (const bool reload : {false, true}) {
    Host h(3);
    StreamingDetector d({}, h.channels, options());
    run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); });
    for (std::size_t i = 150; i < 250; ++i) {
      if (reload) d.set_incident_rule(options().detect.incident);
      d.push(kT0 + std::int64_t(i) * 1'000'000'000, i < 170 ? h.row(95, 30, 30.0) : h.row(60, 30, 1.0));
    }
    ASSERT_EQ(d.closed().size(), 1u);
    got.push_back(d.closed()[0]);
  }
  EXPECT_EQ(got[1].start_unix_ns, got[0].start_unix_ns);
  EXPECT_EQ(got[1].kind, got[0].kind);
  EXPECT_DOUBLE_EQ(got[1].peak_score, got[0].peak_score);
  ASSERT_FALSE(got[0].top.empty());
  ASSERT_EQ(got[1].top.size(), got[0].top.size());
  EXPECT_DOUBLE_EQ(got[1].top[0].z, got[0].top[0].z);
}

// The span is measured to the last symptom: a 4-s stall whose load shift lasts 14 s is a
// transient all the same (dated at its last symptom; the load that outlasts it is not its span).
TEST(WorkloadChange, ATransientIsMeasuredToItsLastSymptom) {
  Host h(3);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); });
  Episodes e = run(d, h, 150, 164, [](Host& x, std::size_t i) { return x.row(95, 30, i < 154 ? 30.0 : 1.0); });
  e.incidents += run(d, h, 164, 220, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); }).incidents;
  EXPECT_EQ(e.incidents, 0u);
  EXPECT_TRUE(d.closed().empty());
  EXPECT_EQ(d.transients_total(), 1u);
  ASSERT_FALSE(d.workload_changes().empty());
  const Incident& t = d.workload_changes()[0];
  EXPECT_EQ(t.kind, "transient");
  EXPECT_LT(double(t.symptom_end_unix_ns - t.start_unix_ns) * 1e-9, 10.0);
}

// The agent's detector leads windows by a symptom's step as detect() does: with the fused
// threshold out of reach (1e-6 false incidents per day and robust-SD cuts of 1000), a stall share that steps from 1 to 16 % opens an incident at the
// step, which ends about 30 s later though the stall holds (the step is then the recent past);
// off, nothing opens.
TEST(WorkloadChange, AStallStepLeadsItsWindowsWhereTheFusedScoreDoesNot) {
  for (const bool led : {true, false}) {
    Host h(9);
    StreamingOptions o = options();
    o.detect.false_per_day = 1e-6;
    o.detect.z_cut = o.detect.if_cut = o.detect.pca_cut = 1000;
    o.detect.symptom_windows = led;
    StreamingDetector d({}, h.channels, o);
    run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); });
    ASSERT_TRUE(d.model_ready());
    std::size_t led_windows = 0;
    Episodes e;
    for (std::size_t i = 150; i < 260; ++i) {
      const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, h.row(60, 30, 16.0));
      if (u.opened && e.first_incident_at < 0) e.first_incident_at = std::int64_t(i);
      e.incidents += u.opened;
      if (!u.symptom_led.empty()) {
        ++led_windows;
        EXPECT_EQ(u.symptom_led, "test.pressure:cpu_some_pct");
        EXPECT_LT(u.fused, 1.0);
        if (led_windows == 1) {  // a sample that scores no window (not newer than the last) leads none
          const StreamUpdate& again = d.push(kT0 + std::int64_t(i) * 1'000'000'000, h.row(60, 30, 16.0));
          EXPECT_FALSE(again.scored);
          EXPECT_TRUE(again.symptom_led.empty());
        }
      }
    }
    EXPECT_EQ(d.symptom_led_windows(), led_windows);
    if (!led) {
      EXPECT_EQ(e.incidents, 0u) << "the fused score alone flags the stall: the test proves nothing";
      EXPECT_EQ(led_windows, 0u);
      continue;
    }
    EXPECT_EQ(e.incidents, 1u);
    EXPECT_GE(e.first_incident_at, 150);
    EXPECT_LE(e.first_incident_at, 154 + 10);  // reported once it lasted min_duration_s
    EXPECT_GE(led_windows, 25u);
    EXPECT_LE(led_windows, 36u);
    ASSERT_FALSE(d.active());
    ASSERT_EQ(d.closed().size(), 1u);
    EXPECT_LE(double(d.closed()[0].end_unix_ns - kT0) * 1e-9, 150.0 + pipeline::kStepLagS + 6);
  }
}

// A job starting with stalls of its own (20 % of the time waiting: its threads contend) opens
// an incident; withdrawn as a new workload (the caller's tenant scans, TenantFeed), it is a
// workload change from then on: the stall level it opened with is the job's own, the regime
// is learned and nothing else opens. A stall that rises a material step beyond that level
// before the regime is learned still opens an incident.
TEST(WorkloadChange, AWithdrawnIncidentIsAChangeThatAcceptsTheStallsItOpenedWith) {
  for (const bool rises : {false, true}) {
    Host h(12);
    StreamingDetector d({}, h.channels, options());
    run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
    ASSERT_TRUE(d.model_ready());
    EXPECT_FALSE(d.withdraw_incident(0, "nothing is open"));
    const Episodes opening = run(d, h, 150, 158, [](Host& x, std::size_t) { return x.row(75, 55, 20.0, 2e7); });
    // Open but not reported yet (shorter than min_duration_s): the tenant verdict comes first.
    EXPECT_EQ(opening.incidents, 0u);
    EXPECT_FALSE(d.active());
    ASSERT_TRUE(d.active_for_evidence());
    const std::int64_t start = d.active_for_evidence()->start_unix_ns;
    EXPECT_FALSE(d.withdraw_incident(start + 1, "another incident"));
    ASSERT_TRUE(d.withdraw_incident(start, "a new workload started (jobs/x)"));
    EXPECT_FALSE(d.active());
    ASSERT_TRUE(d.active_change());
    EXPECT_EQ(d.active_change()->kind, "workload_change");
    EXPECT_EQ(d.active_change()->withdrawn, "a new workload started (jobs/x)");
    EXPECT_EQ(d.active_change()->withdrawn_unix_ns, kT0 + 157 * std::int64_t(1'000'000'000));
    EXPECT_EQ(d.active_change()->start_unix_ns, start);
    EXPECT_EQ(d.incidents_withdrawn_total(), 1u);
    const Episodes after = run(d, h, 158, 320, [rises](Host& x, std::size_t i) {
      return x.row(75, 55, rises && i >= 170 ? 45.0 : 20.0, 2e7);
    });
    if (!rises) {
      EXPECT_EQ(after.incidents, 0u);
      EXPECT_FALSE(d.active());
      EXPECT_FALSE(d.active_change());
      ASSERT_EQ(d.workload_changes().size(), 1u);
      EXPECT_EQ(d.workload_changes()[0].action, "ended: a new regime learned");
      EXPECT_EQ(d.workload_changes()[0].withdrawn, "a new workload started (jobs/x)");
      EXPECT_TRUE(d.closed().empty());
    } else {
      EXPECT_EQ(after.incidents, 1u);
      EXPECT_GE(after.first_incident_at, 170);
      EXPECT_LE(after.first_incident_at, 175 + 10);
      ASSERT_GE(d.workload_changes().size(), 1u);
      EXPECT_EQ(d.workload_changes()[0].action, "ended: symptoms rose, an incident opened");
    }
  }
}

TEST(WorkloadChange, SymptomsRisingDuringAChangeOpenAnIncidentThere) {
  Host h(4);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  // A job starts at 150 (a change); at 165, before it is learned, the host starts stalling.
  const Episodes e = run(d, h, 150, 200, [](Host& x, std::size_t i) {
    return i < 165 ? x.row(75, 55, 0.5, 2e7) : x.row(95, 55, 35.0, 2e7);
  });
  EXPECT_EQ(e.changes_opened, 1u);
  EXPECT_EQ(e.incidents, 1u);
  EXPECT_GE(e.first_incident_at, 165);
  EXPECT_LE(e.first_incident_at, 170 + 10);
  ASSERT_TRUE(d.active());
  EXPECT_NEAR(double(d.active()->start_unix_ns - kT0) * 1e-9, 165.0, 3.0);
  ASSERT_EQ(d.workload_changes().size(), 1u);
  EXPECT_EQ(d.workload_changes()[0].action, "ended: symptoms rose, an incident opened");
}

// Against a fixed baseline model nothing is re-learned: a new load with no symptom stays a
// workload change for as long as it lasts (never an incident), and a stall during it opens one.
TEST(WorkloadChange, WithABaselineModelAChangeStaysAChangeUntilSymptomsRise) {
  Host clean(11);
  Recording good;
  good.meta.interval_s = 1.0;
  good.channels = clean.channels;
  for (std::size_t i = 0; i < 300; ++i) {
    good.values.append_row(clean.row(20, 30, 0.5));
    good.t_unix_ns.push_back(kT0 - std::int64_t(1000 - i) * 1'000'000'000);
  }
  StreamingOptions o = options();
  o.baseline = std::make_shared<const BaselineModel>(BaselineModel::train({good}, o.detect));
  Host h(12);
  StreamingDetector d({}, h.channels, o);
  run(d, h, 0, 60, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  // Another job's load from 60 on, for 4 minutes: settled, never re-learned, never an incident.
  Episodes e = run(d, h, 60, 300, [](Host& x, std::size_t) { return x.row(75, 55, 0.5, 2e7); });
  EXPECT_EQ(e.incidents, 0u);
  EXPECT_EQ(e.changes_opened, 1u);
  EXPECT_NEAR(double(e.first_change_at), 60.0, 4.0);
  ASSERT_TRUE(d.active_change());
  EXPECT_EQ(d.regimes_remembered(), 0u);
  // The host starts stalling at 300: an incident from there.
  e = run(d, h, 300, 330, [](Host& x, std::size_t) { return x.row(95, 55, 35.0, 2e7); });
  EXPECT_EQ(e.incidents, 1u);
  EXPECT_GE(e.first_incident_at, 300);
  EXPECT_LE(e.first_incident_at, 305 + 10);
  ASSERT_EQ(d.workload_changes().size(), 1u);
  EXPECT_EQ(d.workload_changes()[0].action, "ended: symptoms rose, an incident opened");
  // The stall ends at 330, the other job's load stays: 30 s later the incident ends, dated at
  // its last symptom, and that load is a workload change again.
  e = run(d, h, 330, 420, [](Host& x, std::size_t) { return x.row(75, 55, 0.5, 2e7); });
  EXPECT_FALSE(d.active());
  ASSERT_EQ(d.closed().size(), 1u);
  EXPECT_NEAR(double(d.closed()[0].end_unix_ns - kT0) * 1e-9, 330.0, 4.0);
  EXPECT_NE(d.closed()[0].action.find(pipeline::kEndedQuietFixed), std::string::npos) << d.closed()[0].action;
  EXPECT_EQ(e.changes_opened, 1u);
  ASSERT_TRUE(d.active_change());
  EXPECT_NEAR(double(d.active_change()->start_unix_ns - kT0) * 1e-9, 330.0, 4.0) << "no gap after the incident";
  // A restart (a replay at an agent_restart): the fixed model stays, and so does telling
  // workload changes apart.
  d.end_segment();
  d.restart(std::numeric_limits<std::int64_t>::min());
  EXPECT_TRUE(d.model_ready());
  EXPECT_TRUE(d.tells_workload_changes());
}

// A regime learned while the only symptom channel had no data (PSI missing) still tells the
// next load change from an incident: the stream had symptom channels before.
TEST(WorkloadChange, ARegimeFittedWithoutItsSymptomChannelStillTellsChangesApart) {
  Host h(13);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  ASSERT_TRUE(d.tells_workload_changes());
  const Episodes e = run(d, h, 150, 320, [](Host& x, std::size_t i) {
    std::vector<double> r = i < 240 ? x.row(75, 55, 0.5, 2e7) : x.row(20, 30, 0.5);
    if (i < 240) r[2] = NAN;  // no PSI while the other load runs
    return r;
  });
  EXPECT_EQ(e.incidents, 0u);
  EXPECT_GE(e.changes_opened, 1u);
  EXPECT_TRUE(d.tells_workload_changes());
}

TEST(WorkloadChange, ALeakIsAnIncidentNotANewRegime) {
  Host h(5);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(40, 30, 0.5); });
  // Memory grows 0.8 points a second from 150 on, with no stall: a leak keeps drifting.
  const Episodes e = run(d, h, 150, 260, [](Host& x, std::size_t i) { return x.row(40, 30 + 0.8 * double(i - 150), 0.5); });
  EXPECT_EQ(e.incidents, 1u);
  ASSERT_TRUE(d.active());
  EXPECT_EQ(d.active()->subsystem, Subsystem::memory);
  // It starts where the drift became visible, not when re-learning gave up (~90 s later).
  EXPECT_LT(double(d.active()->start_unix_ns - kT0) * 1e-9, 170.0) << "the incident is the whole drift";
  EXPECT_TRUE(d.workload_changes().empty());
}

// A new job withdrawn as a new workload (its start-up stalls accepted) that then leaks: its
// first 30 s are learned as its regime, and the leak that drifts on is an incident, reported as
// one, not a transient (a drift has no symptom: its span is the whole episode).
TEST(WorkloadChange, ALeakAfterAWithdrawnStartIsReported) {
  Host h(5);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(40, 30, 0.5); });
  run(d, h, 150, 158, [](Host& x, std::size_t) { return x.row(75, 40, 20.0, 2e7); });
  ASSERT_TRUE(d.active_for_evidence());
  ASSERT_TRUE(d.withdraw_incident(d.active_for_evidence()->start_unix_ns, "a new workload started (jobs/x)"));
  const Episodes e = run(d, h, 158, 420, [](Host& x, std::size_t i) {
    return x.row(75, 40 + 0.8 * double(i - 158), 20.0, 2e7);
  });
  EXPECT_EQ(e.incidents, 1u);
  ASSERT_TRUE(d.active());
  EXPECT_EQ(d.active()->subsystem, Subsystem::memory);
  EXPECT_TRUE(d.active()->drifted);
  EXPECT_EQ(d.transients_total(), 0u);
}

TEST(WorkloadChange, ALoadThatRampsForAMinuteThenSettlesIsAChange) {
  Host h(9);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  // A job whose load ramps up for 50 s (an inference server taking traffic), then stays.
  const Episodes e = run(d, h, 150, 320, [](Host& x, std::size_t i) {
    const double f = std::min(1.0, double(i - 150) / 50.0);
    return x.row(20 + 55 * f, 30 + 25 * f, 0.5, 5e6 + 1.5e7 * f);
  });
  EXPECT_EQ(e.incidents, 0u) << "a ramp that settles within 3 relearn spans is no leak";
  ASSERT_GE(d.workload_changes().size(), 1u);
  EXPECT_EQ(d.workload_changes().back().action, "ended: a new regime learned");
  EXPECT_FALSE(d.active());
}

TEST(WorkloadChange, AnIncidentEndsWhenItsSymptomsAreGoneAndTheLoadSettled) {
  Host h(6);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  // A stall from 150 to 175, during which a job started that keeps running afterwards.
  run(d, h, 150, 175, [](Host& x, std::size_t) { return x.row(95, 55, 30.0, 2e7); });
  ASSERT_TRUE(d.active());
  run(d, h, 175, 260, [](Host& x, std::size_t) { return x.row(75, 55, 0.5, 2e7); });
  EXPECT_FALSE(d.active()) << "the incident outlived its fault";
  ASSERT_EQ(d.closed().size(), 1u);
  EXPECT_NEAR(double(d.closed()[0].end_unix_ns - kT0) * 1e-9, 175.0, 3.0);
  // The job's regime is the reference now: it raises nothing more.
  const Episodes e = run(d, h, 260, 400, [](Host& x, std::size_t) { return x.row(75, 55, 0.5, 2e7); });
  EXPECT_EQ(e.incidents, 0u);
  EXPECT_EQ(e.changes_opened, 0u);
}

// Caches dropped: the jobs stall on re-reads for 30 s, then the page cache refills for a
// minute with no stall left. The incident ends with its symptoms; the refill is a workload
// change (issue #17: no incident may outlast its fault by more than 30 s).
TEST(WorkloadChange, AnIncidentEndsWithItsSymptomsWhileTheLoadStillMoves) {
  Host h(11);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 60, 0.5); });
  ASSERT_TRUE(d.model_ready());
  const Episodes fault = run(d, h, 150, 180, [](Host& x, std::size_t) { return x.row(60, 20, 30.0); });
  EXPECT_EQ(fault.incidents, 1u);
  ASSERT_TRUE(d.active());
  // The stall is over at 180; memory refills to its level over 60 s.
  const auto refill = [](Host& x, std::size_t i) { return x.row(20, 20 + 40 * std::min(1.0, double(i - 180) / 60.0), 0.5); };
  run(d, h, 180, 200, refill);
  EXPECT_FALSE(d.active()) << "the incident outlived its symptoms by more than 10 windows";
  ASSERT_EQ(d.closed().size(), 1u);
  EXPECT_NEAR(double(d.closed()[0].end_unix_ns - kT0) * 1e-9, 180.0, 3.0);
  EXPECT_NE(d.closed()[0].action.find(pipeline::kEndedQuietFixed), std::string::npos) << d.closed()[0].action;
  ASSERT_TRUE(d.active_change()) << "the refill is a workload change";
  EXPECT_NEAR(double(d.active_change()->start_unix_ns - kT0) * 1e-9, 181.0, 3.0);
  const Episodes after = run(d, h, 200, 400, [&](Host& x, std::size_t i) { return refill(x, i); });
  EXPECT_EQ(after.incidents, 0u) << "the refill that settles is no incident";
  EXPECT_EQ(d.closed().size(), 1u);
  EXPECT_FALSE(d.active());
  EXPECT_FALSE(d.active_change());
  ASSERT_FALSE(d.workload_changes().empty());
}

TEST(WorkloadChange, ALastingStallBecomesTheReferenceAndItsEndIsAKnownRegime) {
  Host h(9);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(40, 30, 1.0); });
  // Another tenant's job contends for the CPU from 150 on, for good.
  const Episodes e = run(d, h, 150, 300, [](Host& x, std::size_t) { return x.row(95, 45, 30.0, 2e7); });
  EXPECT_EQ(e.incidents, 1u);
  ASSERT_EQ(d.closed().size(), 1u) << "the incident ends once the lasting state settled";
  const double dur = double(d.closed()[0].end_unix_ns - d.closed()[0].start_unix_ns) * 1e-9;
  EXPECT_GE(dur, 55.0);  // 2 relearn spans (kPersistRelearns), then settled
  EXPECT_LE(dur, 70.0);
  EXPECT_FALSE(d.active());
  // The tenant leaves: the host is back in its first regime, a known one, no incident.
  const Episodes back = run(d, h, 300, 360, [](Host& x, std::size_t) { return x.row(40, 30, 1.0); });
  EXPECT_EQ(back.incidents, 0u);
  ASSERT_FALSE(d.workload_changes().empty());
  EXPECT_EQ(d.workload_changes().back().action, "returned to a known regime");
}

// Another tenant's job contends for the CPU for good; 45 s later a leak starts. The lasting
// state's last 30 s are not settled — memory, which the incident's onset did not move, ramps
// in them — so the leak does not become the reference with it: the incident stays open while
// the leak goes on (pipeline::fresh_movers).
TEST(WorkloadChange, ALeakLateInALastingStallIsNotLearnedAsTheReference) {
  Host h(17);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(40, 30, 1.0); });
  EXPECT_EQ(run(d, h, 150, 195, [](Host& x, std::size_t) { return x.row(95, 30, 30.0, 2e7); }).incidents, 1u);
  run(d, h, 195, 260, [](Host& x, std::size_t i) { return x.row(95, 30 + 0.8 * double(i - 195), 30.0, 2e7); });
  EXPECT_TRUE(d.closed().empty()) << d.closed()[0].action;
  ASSERT_TRUE(d.active()) << "the state with the leak in it became the reference";
  // The same contention without the leak lasts and settles as before.
  Host g(17);
  StreamingDetector e({}, g.channels, options());
  run(e, g, 0, 150, [](Host& x, std::size_t) { return x.row(40, 30, 1.0); });
  run(e, g, 150, 260, [](Host& x, std::size_t) { return x.row(95, 30, 30.0, 2e7); });
  ASSERT_EQ(e.closed().size(), 1u);
  EXPECT_NE(e.closed()[0].action.find("lasted and settled"), std::string::npos) << e.closed()[0].action;
}

// A host with CPU and I/O stall shares (symptoms of two subsystems) and a disk byte counter.
struct TwoStallHost {
  std::vector<ChannelInfo> channels = {{"derived_src:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                       {"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu},
                                       {"test.pressure:io_some_pct", "%", Kind::gauge, Subsystem::storage},
                                       {"test:disk_bytes", "bytes", Kind::counter, Subsystem::storage}};
  std::mt19937_64 rng{23};
  std::normal_distribution<double> noise{0.0, 1.0};
  double disk = 0;
  std::vector<double> row(double cpu, double cpu_psi, double io_psi, double disk_rate) {
    disk += disk_rate * (1 + 0.05 * noise(rng));
    return {cpu + 2 * noise(rng), std::max(0.0, cpu_psi + 0.5 * noise(rng)), std::max(0.0, io_psi + 0.5 * noise(rng)),
            disk};
  }
};

// Another tenant's job contends for the CPU from 150 on; from 185 to 215 a disk hog stalls I/O
// too. The CPU incident ends where the I/O stall began, and a storage incident opens there,
// described by what the second cause moved (the contention it began in counts from its own
// level); once the
// I/O stall is over it ends, and the contention that goes on is a workload change.
TEST(WorkloadChange, ASecondCauseInsideAnIncidentIsAnIncidentOfItsOwn) {
  TwoStallHost h;
  StreamingDetector d({}, h.channels, options());
  bool split_reported_at_once = false;
  const auto push = [&](std::size_t from, std::size_t to, double cpu, double cpu_psi, double io_psi, double disk) {
    std::size_t opened = 0;
    for (std::size_t i = from; i < to; ++i) {
      const StreamUpdate& u = d.push(kT0 + std::int64_t(i) * 1'000'000'000, h.row(cpu, cpu_psi, io_psi, disk));
      opened += u.opened;
      split_reported_at_once |= u.opened && u.closed && d.active();
    }
    return opened;
  };
  push(0, 150, 40, 1, 0.5, 1e6);
  ASSERT_TRUE(d.model_ready());
  EXPECT_EQ(push(150, 185, 95, 30, 0.5, 1e6), 1u);
  ASSERT_TRUE(d.active());
  EXPECT_EQ(d.active()->subsystem, Subsystem::cpu);
  EXPECT_EQ(push(185, 215, 95, 30, 25, 5e7), 1u) << "the I/O stall is reported (once it lasted 10 s)";
  ASSERT_EQ(d.closed().size(), 1u) << "the CPU incident ends where the second cause began";
  EXPECT_NEAR(double(d.closed()[0].end_unix_ns - kT0) * 1e-9, 185.0, 3.0);
  EXPECT_EQ(d.closed()[0].subsystem, Subsystem::cpu) << "the second cause's windows are not the first incident's";
  EXPECT_TRUE(split_reported_at_once) << "the new incident is reported in the push that ends the first";
  EXPECT_NE(d.closed()[0].action.find("a second cause began"), std::string::npos) << d.closed()[0].action;
  ASSERT_TRUE(d.active());
  EXPECT_EQ(d.active()->subsystem, Subsystem::storage);
  EXPECT_EQ(d.active()->symptom.name, "test.pressure:io_some_pct");
  EXPECT_NEAR(double(d.active()->start_unix_ns - kT0) * 1e-9, 185.0, 3.0);
  EXPECT_FALSE(d.withdraw_incident(d.active()->start_unix_ns, "a new workload started"))
      << "a second cause began while the host already hurt: no new workload starting";
  ASSERT_FALSE(d.active()->top.empty());
  EXPECT_EQ(d.active()->top[0].subsystem, Subsystem::storage) << d.active()->top[0].name;
  for (const ChannelEvidence& c : d.active()->top)
    if (c.subsystem == Subsystem::cpu) {
      EXPECT_LT(std::fabs(c.z), 3.0) << c.name << ": the contention is the first incident's";
    }
  EXPECT_EQ(push(215, 260, 95, 30, 0.5, 1e6), 0u);
  ASSERT_EQ(d.closed().size(), 2u) << "the I/O incident ends with its stall, though the contention goes on";
  EXPECT_NEAR(double(d.closed()[1].end_unix_ns - kT0) * 1e-9, 215.0, 3.0);
  EXPECT_FALSE(d.active());
  // The contention that goes on: a workload change (learned as a regime once settled).
  const Incident* ch = d.active_change() ? &*d.active_change() : d.workload_changes().empty() ? nullptr : &d.workload_changes().back();
  ASSERT_TRUE(ch);
  EXPECT_GE(double(ch->start_unix_ns - kT0) * 1e-9, 212.0);
}

// A second cause far stronger than the first, right after the first incident was reported: while
// it is judged (detect.min_duration), its windows would make the first incident a storage one,
// and then no second cause of another subsystem would be left. The first incident is judged as
// it was before them: it ends named cpu, and the I/O stall is an incident of its own.
TEST(WorkloadChange, AStrongSecondCauseDoesNotRenameTheFirstIncident) {
  TwoStallHost h;
  StreamingDetector d({}, h.channels, options());
  for (std::size_t i = 0; i < 150; ++i) d.push(kT0 + std::int64_t(i) * 1'000'000'000, h.row(40, 1, 0.5, 1e6));
  for (std::size_t i = 150; i < 162; ++i) d.push(kT0 + std::int64_t(i) * 1'000'000'000, h.row(70, 15, 0.5, 1e6));
  ASSERT_TRUE(d.active()) << "the CPU incident is reported";
  ASSERT_EQ(d.active()->subsystem, Subsystem::cpu);
  for (std::size_t i = 162; i < 185; ++i) d.push(kT0 + std::int64_t(i) * 1'000'000'000, h.row(70, 15, 80, 2e8));
  ASSERT_EQ(d.closed().size(), 1u);
  EXPECT_EQ(d.closed()[0].subsystem, Subsystem::cpu);
  ASSERT_TRUE(d.active());
  EXPECT_EQ(d.active()->subsystem, Subsystem::storage);
  EXPECT_NEAR(double(d.active()->start_unix_ns - kT0) * 1e-9, 162.0, 3.0);
}

// A few seconds of another stall inside a reported incident (a log flush) are no second cause:
// the incident goes on (only one that lasts detect.min_duration ends it).
TEST(WorkloadChange, ABriefSecondStallDoesNotEndTheIncident) {
  TwoStallHost h;
  StreamingDetector d({}, h.channels, options());
  std::size_t opened = 0;
  for (std::size_t i = 0; i < 205; ++i) {
    const bool tenant = i >= 150, flush = i >= 180 && i < 185;
    opened += d.push(kT0 + std::int64_t(i) * 1'000'000'000,
                     h.row(tenant ? 95 : 40, tenant ? 30 : 1, flush ? 25 : 0.5, flush ? 5e7 : 1e6)).opened;
  }
  EXPECT_EQ(opened, 1u);
  EXPECT_TRUE(d.closed().empty()) << d.closed()[0].action;
  ASSERT_TRUE(d.active());
  EXPECT_NEAR(double(d.active()->start_unix_ns - kT0) * 1e-9, 150.0, 3.0);
}

// A fault whose stalls spread to another subsystem within its first seconds (dropped caches,
// then the re-reads' I/O stalls) is one cause: what the incident moves until it is reported is
// its onset.
TEST(WorkloadChange, SymptomsSpreadingBeforeAnIncidentIsReportedAreOneCause) {
  TwoStallHost h;
  StreamingDetector d({}, h.channels, options());
  std::size_t opened = 0;
  for (std::size_t i = 0; i < 200; ++i) {
    const bool fault = i >= 150, spread = i >= 156;
    opened += d.push(kT0 + std::int64_t(i) * 1'000'000'000,
                     h.row(fault ? 95 : 40, fault ? 60 : 1, spread ? 20 : 0.5, 1e6)).opened;
  }
  EXPECT_EQ(opened, 1u);
  EXPECT_TRUE(d.closed().empty()) << d.closed()[0].action;
  ASSERT_TRUE(d.active());
  EXPECT_EQ(d.active()->subsystem, Subsystem::cpu);
}

// Another tenant's job contends for the CPU from 150 on; from 170 a fork storm (processes
// created, a CPU symptom the incident's onset did not move) joins it. The incident goes on
// past the 60 s after which the contention alone would have become the reference: the state
// with the storm in it counts from the storm's start (a fault that began inside it is not
// learned as the reference while it is young).
TEST(WorkloadChange, AFreshSymptomOfTheSameSubsystemStartsTheLastingClockAnew) {
  const std::vector<ChannelInfo> channels = {{"derived_src:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                             {"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu},
                                             {"proc.stat:processes", "", Kind::counter, Subsystem::cpu}};
  std::mt19937_64 rng(29);
  std::normal_distribution<double> noise;
  double forks = 0;
  const auto row = [&](double cpu, double psi, double fork_rate) {
    forks += fork_rate * (1 + 0.05 * noise(rng));
    return std::vector<double>{cpu + 2 * noise(rng), std::max(0.0, psi + 0.5 * noise(rng)), forks};
  };
  StreamingDetector d({}, channels, options());
  for (std::size_t i = 0; i < 150; ++i) d.push(kT0 + std::int64_t(i) * 1'000'000'000, row(40, 1, 20));
  ASSERT_TRUE(d.model_ready());
  std::size_t opened = 0;
  for (std::size_t i = 150; i < 222; ++i)
    opened += d.push(kT0 + std::int64_t(i) * 1'000'000'000, row(95, 30, i >= 170 ? 5000 : 20)).opened;
  EXPECT_EQ(opened, 1u);
  EXPECT_TRUE(d.closed().empty()) << d.closed()[0].action;
  ASSERT_TRUE(d.active()) << "the state with the fork storm in it became the reference 40 s into the storm";
  EXPECT_NEAR(double(d.active()->start_unix_ns - kT0) * 1e-9, 150.0, 3.0);
}

// A stall nobody fixed for minutes becomes the reference (refitted as it goes on); when it
// comes back after the host was healthy again, it is an incident again: a state learned only
// because it lasted, symptoms and all, is never returned to when the window has a symptom
// (Regime::clean), though its model finds the window normal.
TEST(WorkloadChange, AFaultStateLearnedBecauseItLastedIsNoKnownRegime) {
  Host h(13);
  StreamingDetector d({}, h.channels, options());
  const auto healthy = [](Host& x, std::size_t) { return x.row(40, 30, 1.0); };
  const auto stall = [](Host& x, std::size_t) { return x.row(95, 45, 30.0, 2e7); };
  run(d, h, 0, 150, healthy);
  EXPECT_EQ(run(d, h, 150, 600, stall).incidents, 1u);
  EXPECT_FALSE(d.active());
  const Episodes back = run(d, h, 600, 700, healthy);
  EXPECT_EQ(back.incidents, 0u);
  ASSERT_FALSE(d.workload_changes().empty());
  EXPECT_EQ(d.workload_changes().back().action, "returned to a known regime");
  EXPECT_EQ(run(d, h, 700, 760, stall).incidents, 1u);
}

// A host that ran two jobs from the start (stalls of 25 % are its normal contention), then one:
// when the second job comes back, the stall share rises 24 points above the one-job regime,
// but the host is back in a state it held without a fault — a known regime, not an incident.
// A stall beyond that state's is a fault again.
TEST(WorkloadChange, AStallLevelTheHostHeldWithoutAFaultIsAKnownRegime) {
  Host h(12);
  StreamingDetector d({}, h.channels, options());
  const auto two_jobs = [](Host& x, std::size_t) { return x.row(90, 50, 25.0, 2e7); };
  run(d, h, 0, 150, two_jobs);
  ASSERT_TRUE(d.model_ready());
  const Episodes one = run(d, h, 150, 400, [](Host& x, std::size_t) { return x.row(40, 30, 1.0); });
  EXPECT_EQ(one.incidents, 0u) << "stalls falling are no symptom";
  ASSERT_EQ(d.regimes_remembered(), 1u);
  const Episodes back = run(d, h, 400, 500, two_jobs);
  EXPECT_EQ(back.incidents, 0u);
  EXPECT_FALSE(d.active());
  ASSERT_FALSE(d.workload_changes().empty());
  EXPECT_EQ(d.workload_changes().back().action, "returned to a known regime");
  EXPECT_LE(double(d.workload_changes().back().end_unix_ns - kT0) * 1e-9, 406.0);
  const Episodes fault = run(d, h, 500, 560, [](Host& x, std::size_t) { return x.row(98, 50, 60.0, 2e7); });
  EXPECT_EQ(fault.incidents, 1u) << "a stall 35 points beyond the known regime's";
}

// The same after a restart in the middle of the stall: the reference fitted on the history the
// restarted agent primed (the stall, never judged by it) is no clean regime either.
TEST(WorkloadChange, AFaultStatePrimedAcrossARestartIsNoKnownRegime) {
  Host h(17);
  StreamingDetector d({}, h.channels, options());
  const auto healthy = [](Host& x, std::size_t) { return x.row(40, 30, 1.0); };
  const auto stall = [](Host& x, std::size_t) { return x.row(95, 45, 30.0, 2e7); };
  run(d, h, 0, 150, healthy);
  run(d, h, 150, 600, stall);
  d.end_segment();
  d.restart(kT0 + std::int64_t(600 - 300) * 1'000'000'000);  // the last 300 s primed: the stall alone
  ASSERT_TRUE(d.model_ready());
  run(d, h, 600, 700, stall);
  const Episodes back = run(d, h, 700, 900, healthy);
  EXPECT_EQ(back.incidents, 0u);
  EXPECT_EQ(d.regimes_remembered(), 1u) << "the primed stall's model, remembered";
  EXPECT_EQ(run(d, h, 900, 960, stall).incidents, 1u);
}

// The agent stops: an incident not reported yet (shorter than min_duration so far) is retired
// as a transient, and an open workload change ends (StreamingDetector::end_segment).
TEST(WorkloadChange, EndingASegmentRetiresAPendingIncidentAndEndsAChange) {
  {
    Host h(14);
    StreamingDetector d({}, h.channels, options());
    run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(60, 30, 1.0); });
    run(d, h, 150, 156, [](Host& x, std::size_t) { return x.row(95, 30, 30.0); });
    ASSERT_FALSE(d.active()) << "not reported yet";
    ASSERT_TRUE(d.active_for_evidence());
    ASSERT_EQ(d.pending(), d.active_for_evidence()) << "pending: open, not reported";
    const StreamUpdate& u = d.end_segment();
    EXPECT_FALSE(u.closed);
    EXPECT_TRUE(u.change_closed);
    ASSERT_FALSE(d.workload_changes().empty());
    EXPECT_EQ(d.workload_changes().back().kind, "transient");
    EXPECT_NE(d.workload_changes().back().withdrawn.find("; the agent stopped"), std::string::npos)
        << d.workload_changes().back().withdrawn;
    EXPECT_FALSE(d.active_for_evidence());
    EXPECT_FALSE(d.pending());
    EXPECT_TRUE(d.closed().empty());
  }
  {
    Host h(15);
    StreamingDetector d({}, h.channels, options());
    run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
    run(d, h, 150, 165, [](Host& x, std::size_t) { return x.row(75, 55, 0.5, 2e7); });
    ASSERT_TRUE(d.active_change()) << "a job starting, not settled yet";
    EXPECT_TRUE(d.end_segment().change_closed);
    EXPECT_FALSE(d.active_change());
    EXPECT_EQ(d.workload_changes().back().action, "ended: the agent stopped");
  }
}

// A replay at an agent_restart: the detector starts as the restarted agent did — a model fitted
// on the history at once, no remembered regime — or, after a gap longer than the history, warms
// up again on the rows that follow.
TEST(WorkloadChange, ARestartForgetsRegimesAndRefitsOnTheHistory) {
  Host h(16);
  StreamingDetector d({}, h.channels, options());
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  run(d, h, 150, 400, [](Host& x, std::size_t) { return x.row(75, 55, 0.5, 2e7); });
  ASSERT_EQ(d.regimes_remembered(), 1u);
  d.restart(std::numeric_limits<std::int64_t>::min());  // the whole history kept
  EXPECT_EQ(d.regimes_remembered(), 0u);
  EXPECT_TRUE(d.model_ready());
  EXPECT_EQ(d.last_fit_unix_ns(), kT0 + std::int64_t(399) * 1'000'000'000) << "refitted at the restart";
  // The first regime is no longer known: the job stopping is a change to learn again.
  run(d, h, 400, 500, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  ASSERT_FALSE(d.workload_changes().empty());
  EXPECT_EQ(d.workload_changes().back().action, "ended: a new regime learned");
  d.restart(std::numeric_limits<std::int64_t>::max());  // a gap longer than the history: none
  EXPECT_FALSE(d.model_ready());
  std::size_t ready_at = 0;
  for (std::size_t i = 600; i < 700 && !ready_at; ++i) {
    d.push(kT0 + std::int64_t(i) * 1'000'000'000, h.row(20, 30, 0.5));
    if (d.model_ready()) ready_at = i;
  }
  EXPECT_EQ(ready_at, 600u + 60 - 1) << "a new warm-up of 60 rows";
}

// A VM whose neighbours steal its CPU in bursts: the first burst is an incident; the same
// level returning within the hour is not (a known condition of the host); a burst a material
// step higher is again, and so is a stall of the guest's own.
TEST(WorkloadChange, RecurringHypervisorStealIsReportedOnce) {
  std::vector<ChannelInfo> ch = {{"derived_src:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                 {"derived:cpu_steal_pct", "%", Kind::gauge, Subsystem::cpu},
                                 {"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu}};
  std::mt19937_64 rng(9);
  std::normal_distribution<double> noise(0.0, 1.0);
  const auto row = [&](double busy, double steal, double psi) {
    return std::vector<double>{busy + 2 * noise(rng), std::max(0.0, steal + 0.3 * noise(rng)),
                               std::max(0.0, psi + 0.5 * noise(rng))};
  };
  StreamingDetector d({}, ch, options());
  std::size_t t = 0, opened = 0;
  const auto phase = [&](std::size_t n, double busy, double steal, double psi) {
    std::size_t o = 0;
    for (std::size_t i = 0; i < n; ++i, ++t) o += d.push(kT0 + std::int64_t(t) * 1'000'000'000, row(busy, steal, psi)).opened;
    opened += o;
    return o;
  };
  phase(150, 60, 0.5, 1.0);
  ASSERT_TRUE(d.model_ready());
  EXPECT_EQ(phase(25, 45, 30, 1.0), 1u) << "the first burst";
  phase(120, 60, 0.5, 1.0);
  EXPECT_FALSE(d.active());
  EXPECT_EQ(phase(25, 45, 30, 1.0), 0u) << "the same burst again";
  phase(120, 60, 0.5, 1.0);
  EXPECT_EQ(phase(25, 35, 50, 1.0), 1u) << "20 points higher";
  phase(120, 60, 0.5, 1.0);
  EXPECT_EQ(phase(25, 60, 0.5, 30.0), 1u) << "the guest's own stall";
  EXPECT_EQ(opened, 3u);
}

TEST(WorkloadChange, OffMeansEveryAnomalyIsAnIncident) {
  Host h(7);
  StreamingOptions o = options();
  o.workload_changes = false;
  StreamingDetector d({}, h.channels, o);
  run(d, h, 0, 150, [](Host& x, std::size_t) { return x.row(20, 30, 0.5); });
  const Episodes e = run(d, h, 150, 250, [](Host& x, std::size_t) { return x.row(75, 55, 0.5, 2e7); });
  EXPECT_EQ(e.incidents, 1u);
  EXPECT_EQ(e.changes_opened, 0u);
  EXPECT_TRUE(d.active()) << "without re-learning, a job start stays an incident";
}

TEST(WorkloadChange, RelearnNeedsFourWindows) {
  Host h(8);
  StreamingOptions o = options();
  o.relearn_samples = 4;
  EXPECT_THROW(StreamingDetector({}, h.channels, o), DetectError);
  o.workload_changes = false;
  EXPECT_NO_THROW(StreamingDetector({}, h.channels, o));
}

}  // namespace
}  // namespace reveal
