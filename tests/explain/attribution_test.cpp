// Attribution across detectors (src/explain/attribution.h, attribute()), on the reference of a
// model fitted to noise.
#include "explain/attribution.h"

#include "pipeline/reference.h"
#include "pipeline/window_model.h"

#include <random>

#include <gtest/gtest.h>

namespace reveal::explain {
using pipeline::WindowModel;
using pipeline::fit_self;
namespace {

// A fitted model over three gauges (cpu, storage, network) of 1 Hz noise.
struct Fixture {
  Series s;
  Windows w;
  std::vector<int> cols{0, 1, 2};
  std::vector<const ChannelInfo*> chans;
  WindowModel model{{1.0, 1.0, 1.0}, {Subsystem::cpu, Subsystem::storage, Subsystem::network}, DetectOptions{}, 1.0};
  Fixture() {
    s.channels = {{"t:busy_pct", "%", Kind::gauge, Subsystem::cpu},
                  {"t:disk_util", "%", Kind::gauge, Subsystem::storage},
                  {"t:rx_packets", "packets/s", Kind::gauge, Subsystem::network}};
    std::mt19937_64 rng(5);
    std::normal_distribution<double> noise(0.0, 1.0);
    s.values = Matrix(0, 3);
    for (int i = 0; i < 120; ++i) {
      const double row[] = {50 + 3 * noise(rng), 20 + 2 * noise(rng), 1000 + 30 * noise(rng)};
      s.values.append_row(row);
      s.t_s.push_back(double(i));
    }
    w = make_windows(s, {3, 1});
    fit_self(model, w, cols, 0);
    for (const auto& c : s.channels) chans.push_back(&c);
  }
  ChannelReference reference() const { return {model.robust_z().median(), model.floors()}; }
};

const Incident::DetectorView* view(const Incident& inc, const std::string& name) {
  for (const auto& d : inc.detectors)
    if (d.detector == name) return &d;
  return nullptr;
}

// No channel deviates on its own (|z| < 3, robust_z below its threshold): the detectors that
// raised the incident name it, weighted by their peak levels.
TEST(Attribute, WithoutALevelShiftTheMultivariateDetectorsName) {
  Fixture f;
  const std::vector<double> zbar{0.5, 1.0, 0.2}, mean{50, 20, 1000};
  const std::vector<double> forest{0.1, 0.8, 0.1}, pca{0.3, 0.5, 0.2};
  DetectorEvidence more{forest, pca, {0.4, 2.0, 1.5}};
  Incident inc;
  attribute(inc, zbar, mean, f.reference(), f.chans, 2, 3, more);
  EXPECT_EQ(inc.subsystem, Subsystem::storage);
  // Each contribution weighs by materiality, |z| / 3 (below 3): the forest's storage share
  // 0.8·1/3 of (0.1·0.5 + 0.8·1 + 0.1·0.2)/3, the PCA's 0.5·1/3 of (0.3·0.5 + 0.5·1 + 0.2·0.2)/3;
  // the two weighted by their peak levels 2 and 1.5.
  const double forest_storage = 0.8 / (0.1 * 0.5 + 0.8 + 0.1 * 0.2), pca_storage = 0.5 / (0.3 * 0.5 + 0.5 + 0.2 * 0.2);
  EXPECT_NEAR(inc.confidence, (2.0 * forest_storage + 1.5 * pca_storage) / 3.5, 1e-9);
  ASSERT_NE(view(inc, "iforest"), nullptr);
  ASSERT_NE(view(inc, "pca_spe"), nullptr);
  EXPECT_EQ(view(inc, "robust_z"), nullptr);  // no channel with |z| ≥ 3: no view
  EXPECT_EQ(view(inc, "iforest")->peak_level, 2.0);
  ASSERT_FALSE(inc.top.empty());
  EXPECT_EQ(inc.top[0].name, "t:disk_util");  // by combined share, not |z|
}

// A level shift that robust_z flags is attributed by robust_z alone, whatever the forest and
// the PCA residual blame; their views are still reported.
TEST(Attribute, ALevelShiftIsRobustZs) {
  Fixture f;
  const std::vector<double> zbar{12.0, 0.5, 0.3}, mean{90, 20, 1000};
  const std::vector<double> forest{0.1, 0.8, 0.1}, pca{0.0, 0.9, 0.1};
  DetectorEvidence more{forest, pca, {3.0, 2.0, 5.0}};
  Incident inc;
  attribute(inc, zbar, mean, f.reference(), f.chans, 2, 3, more);
  EXPECT_EQ(inc.subsystem, Subsystem::cpu);
  EXPECT_NEAR(inc.confidence, 1.0, 1e-12);
  ASSERT_NE(view(inc, "robust_z"), nullptr);
  ASSERT_NE(view(inc, "pca_spe"), nullptr);
  EXPECT_EQ(view(inc, "pca_spe")->subsystem_shares.front().first, Subsystem::storage);
  EXPECT_EQ(inc.top[0].name, "t:busy_pct");
}

// Falls weigh a quarter in every detector's view: a forest blaming a channel that fell (the
// victim slowing down) as much as one that rose still names the one that rose.
TEST(Attribute, FallsWeighAQuarterInEveryView) {
  Fixture f;
  const std::vector<double> zbar{2.0, -2.0, 0.0}, mean{55, 18, 1000};
  const std::vector<double> forest{0.45, 0.55, 0.0};
  DetectorEvidence more{forest, {}, {0.5, 1.5, 0.0}};
  Incident inc;
  attribute(inc, zbar, mean, f.reference(), f.chans, 2, 3, more);
  EXPECT_EQ(inc.subsystem, Subsystem::cpu);
  EXPECT_EQ(view(inc, "pca_spe"), nullptr);
}

// The action is about the incident's subsystem, so it names that subsystem's strongest channel
// even when another subsystem's channel has the largest |z|.
TEST(Attribute, TheActionNamesAChannelOfTheIncidentsSubsystem) {
  Fixture f;
  // cpu busy 50 → 60 % (|z| 20, small effect); disk util idle 0 → 40 % (|z| 10, large effect).
  const std::vector<double> zbar{20.0, 10.0, 0.0}, mean{60, 40, 1000};
  Incident inc;
  attribute(inc, zbar, mean, f.reference(), f.chans, 2, 3, DetectorEvidence{});
  ASSERT_EQ(inc.top[0].name, "t:busy_pct");  // the top channel is by |z|
  if (inc.subsystem == Subsystem::storage) {
    EXPECT_NE(inc.action.find("t:disk_util"), std::string::npos) << inc.action;
  } else {
    EXPECT_NE(inc.action.find("t:busy_pct"), std::string::npos) << inc.action;
  }
  EXPECT_EQ(inc.subsystem, Subsystem::storage) << to_string(inc.subsystem);
}


// A named subsystem (a second cause's incident, opened because a symptom of it rose) is the
// incident's whatever the shares say; its share is the confidence, its channel the action's.
TEST(Attribute, ANamedSubsystemOverridesTheShares) {
  Fixture f;
  const std::vector<double> zbar{20.0, 10.0, 0.0}, mean{60, 40, 1000};
  Incident free_inc, named_inc;
  attribute(free_inc, zbar, mean, f.reference(), f.chans, 2, 3, DetectorEvidence{});
  ASSERT_EQ(free_inc.subsystem, Subsystem::storage);
  attribute(named_inc, zbar, mean, f.reference(), f.chans, 2, 3, DetectorEvidence{}, Subsystem::cpu);
  EXPECT_EQ(named_inc.subsystem, Subsystem::cpu);
  EXPECT_LT(named_inc.confidence, 0.5);
  EXPECT_GT(named_inc.confidence, 0.0);
  EXPECT_EQ(named_inc.subsystem_shares, free_inc.subsystem_shares) << "the shares stay the evidence's";
  EXPECT_NE(named_inc.action.find("t:busy_pct"), std::string::npos) << named_inc.action;
}

double share_of(const Incident& inc, Subsystem s);

// An incident opened by a symptom specific to a subsystem (here a qdisc throttling the job's
// link: network) is about it, however the shares fall (the cpu and storage channels moved
// more); one opened by CPU contention, or by a host-wide signal, is named by the shares.
TEST(Attribute, ASpecificSymptomNamesTheIncident) {
  Fixture f;
  const std::vector<double> zbar{20.0, 10.0, 4.0}, mean{60, 40, 1500};
  Incident by_shares;
  attribute(by_shares, zbar, mean, f.reference(), f.chans, 2, 3, DetectorEvidence{});
  ASSERT_EQ(by_shares.subsystem, Subsystem::storage);
  const auto opened_by = [&](std::string name, Subsystem sub) {
    Incident inc;
    inc.symptom.name = std::move(name);
    inc.symptom.subsystem = sub;
    attribute(inc, zbar, mean, f.reference(), f.chans, 2, 3, DetectorEvidence{});
    return inc;
  };
  // network's share (the 1000 → 1500 packets/s) is over half storage's: a close call, the
  // symptom decides and its channel (a model channel here) leads the action
  const Incident qdisc = opened_by("t:rx_packets", Subsystem::network);
  ASSERT_GE(share_of(by_shares, Subsystem::network), 0.5 * by_shares.subsystem_shares.front().second);
  EXPECT_EQ(qdisc.subsystem, Subsystem::network);
  EXPECT_GT(qdisc.confidence, 0.0);
  EXPECT_LT(qdisc.confidence, 0.5);
  EXPECT_EQ(qdisc.subsystem_shares, by_shares.subsystem_shares) << "the shares stay the evidence's";
  EXPECT_NE(qdisc.action.find("t:rx_packets"), std::string::npos) << qdisc.action;
  EXPECT_EQ(opened_by("derived:psi_cpu_some_pct", Subsystem::cpu).subsystem, Subsystem::storage);
  EXPECT_EQ(opened_by("host:something", Subsystem::system).subsystem, Subsystem::storage);
  // a second cause's named subsystem still wins over its symptom's
  Incident named;
  named.symptom.name = "tc.qdisc:overlimits";
  named.symptom.subsystem = Subsystem::network;
  attribute(named, zbar, mean, f.reference(), f.chans, 2, 3, DetectorEvidence{}, Subsystem::cpu);
  EXPECT_EQ(named.subsystem, Subsystem::cpu);
  // a symptom whose subsystem holds under half the leading share (a consequence, against
  // evidence that points elsewhere) or none of it does not name the incident
  const std::vector<double> faint{20.0, 10.0, 3.2}, faint_mean{60, 40, 1100};
  Incident weak;
  weak.symptom.name = "t:rx_packets";
  weak.symptom.subsystem = Subsystem::network;
  attribute(weak, faint, faint_mean, f.reference(), f.chans, 2, 3, DetectorEvidence{});
  ASSERT_GT(share_of(weak, Subsystem::network), 0.0);
  ASSERT_LT(share_of(weak, Subsystem::network), 0.5 * weak.subsystem_shares.front().second);
  EXPECT_EQ(weak.subsystem, Subsystem::storage);
  const Incident none = opened_by("tc.qdisc:drops", Subsystem::memory);
  EXPECT_EQ(none.subsystem, Subsystem::storage) << "no memory channel among the evidence";
}

// --- Channel weights: role (symptom vs load), per-CPU channels, focus entity ---------------------

// Channels and their reference (median, floor) given directly: attribute() needs no model.
struct Channels {
  std::vector<ChannelInfo> info;
  std::vector<double> median, floor;
  std::vector<const ChannelInfo*> ptrs() const {
    std::vector<const ChannelInfo*> p;
    for (const auto& c : info) p.push_back(&c);
    return p;
  }
  void add(std::string name, std::string unit, Subsystem sub, double ref, double fl = 1.0) {
    info.push_back({std::move(name), std::move(unit), Kind::counter, sub});
    median.push_back(ref);
    floor.push_back(fl);
  }
  ChannelReference reference() const { return {median, floor}; }
};

double share_of(const Incident& inc, Subsystem s) {
  for (const auto& [sub, v] : inc.subsystem_shares)
    if (sub == s) return v;
  return 0;
}

// A fork storm: thousands of processes a second, CPU pressure stalls, CPU busy, and the pages
// every new process allocates, frees and faults. The page counters are load (channel_role), the
// CPU stall time a symptom: the storm is the CPU's, not memory's, although three memory
// counters moved a hundredfold.
TEST(AttributeWeights, AForkStormsPageCountersAreLoadAndDoNotNameMemory) {
  Channels c;
  c.add("proc.pressure:cpu_some_total", "us", Subsystem::cpu, 1000);   // symptom, weighed as load (contention)
  c.add("proc.stat:processes", "count", Subsystem::cpu, 2);            // symptom (process creation)
  c.add("derived:cpu_busy_pct", "%", Subsystem::cpu, 10);              // load
  c.add("proc.vmstat:pgalloc_normal", "pages", Subsystem::memory, 4000);
  c.add("proc.vmstat:pgfree", "pages", Subsystem::memory, 4000);
  c.add("proc.vmstat:pgfault", "count", Subsystem::memory, 5000);
  ASSERT_EQ(channel_role("proc.pressure:cpu_some_total"), ChannelRole::symptom);
  ASSERT_EQ(channel_role("proc.stat:processes"), ChannelRole::symptom);
  for (std::size_t j = 2; j < c.info.size(); ++j) ASSERT_EQ(channel_role(c.info[j].name), ChannelRole::load);
  const std::vector<double> zbar{40, 60, 9, 80, 75, 70};
  const std::vector<double> mean{400000, 2000, 90, 600000, 600000, 800000};  // ≥ 100×: capped effect, except busy %
  Incident inc;
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 2, 5, DetectorEvidence{});
  const double cap = std::log(100.0), busy = std::log((90.0 + 5) / (10.0 + 5));
  const double cpu = cap * 0.5 + cap * 1.0 + busy * 0.5, memory = 3 * cap * 0.5;
  EXPECT_EQ(inc.subsystem, Subsystem::cpu) << "memory " << share_of(inc, Subsystem::memory);
  EXPECT_NEAR(inc.confidence, cpu / (cpu + memory), 1e-9);
  EXPECT_NEAR(share_of(inc, Subsystem::memory), memory / (cpu + memory), 1e-9);
  // The top channels are still by |z| (the operator's reading), whatever their weight.
  EXPECT_EQ(inc.top[0].name, "proc.vmstat:pgalloc_normal");
  // The action names the incident subsystem's strongest channel.
  EXPECT_NE(inc.action.find("proc.stat:processes"), std::string::npos) << inc.action;
}

// A network flood's softirqs and senders compete for the CPUs: CPU pressure stall rises as
// much as on a CPU hog. It says something competes, not what: weighed as load, the traffic
// itself names the subsystem.
TEST(AttributeWeights, CpuPressureStallNamesNoSubsystemOnItsOwn) {
  Channels c;
  c.add("derived:psi_cpu_some_pct", "%", Subsystem::cpu, 1);                 // 1 % → 90 %
  c.add("derived:net_tx_bytes_per_s", "bytes/s", Subsystem::network, 1e6);  // 1 → 60 MB/s
  ASSERT_EQ(channel_role("derived:psi_cpu_some_pct"), ChannelRole::symptom);
  const std::vector<double> zbar{30, 30};
  const std::vector<double> mean{90, 6e7};  // effects ln(95/6) = 2.8 (×0.5) and ln 60 = 4.1 (×0.5)
  Incident inc;
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 2, 5, DetectorEvidence{});
  EXPECT_EQ(inc.subsystem, Subsystem::network) << "cpu " << share_of(inc, Subsystem::cpu);
}

// A disk fault's I/O workers are runnable tasks too: runnable tasks (saturation) weigh as load
// in attribution, so a run queue doubling does not outvote the disk's own latency.
TEST(AttributeWeights, RunnableTasksWeighAsLoad) {
  Channels c;
  c.add("derived:disk_await_ms.vda", "ms/op", Subsystem::storage, 2);  // symptom
  c.add("proc.stat:procs_running", "count", Subsystem::cpu, 3);        // saturation
  ASSERT_EQ(channel_role("proc.stat:procs_running"), ChannelRole::saturation);
  const std::vector<double> zbar{20, 20};
  const std::vector<double> mean{6, 12};  // latency ×3, runnable tasks ×4: the larger effect, at half weight
  Incident inc;
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 2, 5, DetectorEvidence{});
  EXPECT_EQ(inc.subsystem, Subsystem::storage) << "cpu " << share_of(inc, Subsystem::cpu);
  EXPECT_GT(inc.confidence, 0.5);
}

// When only load channels move (a job starts), every weight halves: the shares are those of
// the effect sizes alone.
TEST(AttributeWeights, WhenOnlyLoadMovesTheSharesAreTheEffectSizes) {
  Channels c;
  c.add("derived:cpu_busy_pct", "%", Subsystem::cpu, 10);
  c.add("proc.net.dev:rx_bytes.eth0", "bytes", Subsystem::network, 1000);
  const std::vector<double> zbar{10, 10}, mean{60, 8000};
  Incident inc;
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 2, 5, DetectorEvidence{});
  const double cpu = std::log(65.0 / 15.0), net = std::log(8001.0 / 1001.0);
  EXPECT_NEAR(share_of(inc, Subsystem::network), net / (cpu + net), 1e-9);
  EXPECT_NEAR(share_of(inc, Subsystem::cpu), cpu / (cpu + net), 1e-9);
}

// The role weight applies to the forest's and the PCA residual's shares too: a forest that
// blames a load channel a little more than a symptom channel names the symptom's subsystem.
TEST(AttributeWeights, TheMultivariateViewsWeighRolesToo) {
  Channels c;
  c.add("proc.net.snmp:TcpExt_TCPLostRetransmit", "count", Subsystem::network, 5);  // symptom
  c.add("proc.vmstat:pgalloc_normal", "pages", Subsystem::memory, 4000);  // load
  const std::vector<double> zbar{1, 1}, mean{5, 4000};  // no level shift: the forest raised it
  const std::vector<double> forest{0.45, 0.55}, pca{0.4, 0.6};
  Incident inc;
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 2, 5, DetectorEvidence{forest, pca, {0.2, 2.0, 2.0}});
  EXPECT_EQ(inc.subsystem, Subsystem::network);
  // Each view: network 0.45 vs memory 0.55·0.5 (forest), 0.4 vs 0.3 (PCA); equal peak levels.
  const double f = 0.45 / (0.45 + 0.275), p = 0.4 / (0.4 + 0.3);
  EXPECT_NEAR(inc.confidence, (f + p) / 2, 1e-9);
  ASSERT_NE(view(inc, "iforest"), nullptr);
  EXPECT_NEAR(view(inc, "iforest")->subsystem_shares.front().second, f, 1e-9);
}

// Materiality (a failed run of the README demo's CPU hog, 2026-12-07): only the PCA residual
// flagged the windows, and its contributions leaned on memory and storage counters idle at 0 in
// the reference (robust z 0), while the host's CPU stall time rose 8.6 % -> 84 % (z 16). A
// multivariate contribution weighs by how far its channel itself moved (in full at |z| >= 3,
// kQuietShare 0.05 at 0): cpu.
TEST(AttributeWeights, AMultivariateContributionWeighsByHowFarItsChannelMoved) {
  Channels c;
  c.add("derived:psi_cpu_some_pct", "%", Subsystem::cpu, 8.6);       // CPU contention: load weight
  c.add("proc.vmstat:workingset_nodes", "count/s", Subsystem::memory, 0);  // load
  c.add("proc.vmstat:pgreuse", "count/s", Subsystem::memory, 0);           // load
  c.add("derived:disk_iops.vda", "ops/s", Subsystem::storage, 0);          // load
  const std::vector<double> zbar{16, 0, 0, 0}, mean{84.5, 8.5, 4.2, 0.4};
  const std::vector<double> forest{0.25, 0.3, 0.3, 0.15}, pca{0.1, 0.4, 0.3, 0.2};
  Incident inc;
  // robust_z's window stream stayed below its threshold (0.19), the PCA residual flagged (1.01).
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 2, 4, DetectorEvidence{forest, pca, {0.19, 0.53, 1.01}});
  EXPECT_EQ(inc.subsystem, Subsystem::cpu) << "memory " << share_of(inc, Subsystem::memory);
  // Every channel is load (×0.5 alike): cpu 0.1 against memory (0.4 + 0.3)·0.05, storage 0.2·0.05.
  const double cpu = 0.1, memory = 0.7 * 0.05, storage = 0.2 * 0.05;
  EXPECT_NEAR(inc.confidence, cpu / (cpu + memory + storage), 1e-9);
  ASSERT_NE(view(inc, "pca_spe"), nullptr);
  // The top channels (by combined share) and the action lead with the channel that moved.
  ASSERT_FALSE(inc.top.empty());
  EXPECT_EQ(inc.top[0].name, "derived:psi_cpu_some_pct");
  EXPECT_NE(inc.action.find("derived:psi_cpu_some_pct"), std::string::npos) << inc.action;

  // A broken correlation whose channels moved alike keeps the detector's shares: memory.
  const std::vector<double> alike{1.5, 1.5, 1.5, 1.5};
  Incident broken;
  attribute(broken, alike, mean, c.reference(), c.ptrs(), 2, 4, DetectorEvidence{forest, pca, {0.19, 0.53, 1.01}});
  EXPECT_EQ(broken.subsystem, Subsystem::memory);
  EXPECT_NEAR(broken.confidence, 0.7, 1e-9);
  // A channel whose variance changed swings both ways: its mean z stays near 0, its mean |z|
  // (the windows' |z|, from IncidentEvidence) does not, and that is what counts.
  Incident swings;
  const std::vector<double> abs_z{0.1, 4, 4, 0.1};
  DetectorEvidence var{forest, pca, {0.19, 0.53, 1.01}};
  var.mean_abs_z = abs_z;
  attribute(swings, std::vector<double>{0.1, 0, 0, 0}, mean, c.reference(), c.ptrs(), 2, 4, var);
  EXPECT_EQ(swings.subsystem, Subsystem::memory);
  EXPECT_NEAR(swings.confidence, 0.7 / (0.7 + 0.1 * 0.05 + 0.2 * 0.05), 1e-9);
  // A channel that did not move keeps a twentieth; one at |z| 1.5 half of its contribution.
  const std::vector<double> half{1.5, 0, 0, 0};
  Incident some;
  attribute(some, half, mean, c.reference(), c.ptrs(), 2, 4, DetectorEvidence{forest, pca, {0.19, 0.53, 1.01}});
  EXPECT_NEAR(share_of(some, Subsystem::cpu), 0.05 / (0.05 + memory + storage), 1e-9);
}

// A CPU's idle-state channels (sys.cpuidle, label "cpu<N>.<state>") are per-CPU channels: they
// weigh 1/N on an N-CPU host like proc.stat's "cpu<N>" ones, so three cores' idle states do
// not outvote a disk whose writes grew sevenfold.
TEST(AttributeWeights, IdleStateChannelsArePerCpu) {
  Channels c;
  c.add("sys.cpuidle:time.cpu0.C1", "us", Subsystem::cpu, 900000);
  c.add("sys.cpuidle:time.cpu1.C1", "us", Subsystem::cpu, 900000);
  c.add("sys.cpuidle:time.cpu2.C1", "us", Subsystem::cpu, 900000);
  c.add("proc.diskstats:sectors_written.vda", "sectors", Subsystem::storage, 1000);
  const std::vector<double> zbar{-8, -8, -8, 6}, mean{1000, 1000, 1000, 7000};
  Incident inc;
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 8, 5, DetectorEvidence{});
  // cpu: three falls, capped effect × 0.25 (fall) × 0.5 (load) / 8 (CPUs); storage: ln 7 × 0.5.
  const double cpu = 3 * std::log(100.0) * 0.25 * 0.5 / 8, storage = std::log(7001.0 / 1001.0) * 0.5;
  EXPECT_EQ(inc.subsystem, Subsystem::storage);
  EXPECT_NEAR(inc.confidence, storage / (cpu + storage), 1e-9);
}

// The focus entity of a CPU's channels is "cpu<N>", its idle states included: evidence split
// over "cpu3", "cpu3.C1" and "cpu3.C6" is one CPU's.
TEST(AttributeWeights, ACpusIdleStatesFocusOnTheCpu) {
  Channels c;
  c.add("proc.stat:user.cpu3", "ticks", Subsystem::cpu, 2);
  c.add("sys.cpuidle:time.cpu3.C1", "us", Subsystem::cpu, 300000);
  c.add("sys.cpuidle:time.cpu3.C6", "us", Subsystem::cpu, 600000);
  c.add("proc.net.dev:rx_bytes.eth0", "bytes", Subsystem::network, 1000);
  const std::vector<double> zbar{30, -20, -20, 5}, mean{98, 3000, 3000, 2000};
  Incident inc;
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 4, 5, DetectorEvidence{});
  EXPECT_EQ(inc.focus, "cpu3");
  EXPECT_GT(inc.focus_share, kFocusMinShare);
}

// Steal on a shared cloud VM rises as a job starts and the physical host's other guests get
// busy. An incident whose symptom is steal names the hypervisor in its action; the subsystem
// stays the evidence's (a fault that began with the steal, here a leak's page faults, is named).
TEST(AttributeWeights, AnIncidentOpenedByHypervisorStealNamesTheHypervisor) {
  Channels c;
  c.add("derived:cpu_steal_pct.cpu1", "%", Subsystem::cpu, 0.3);  // 0.3 → 30.7 %
  c.add("proc.vmstat:pgfault", "count/s", Subsystem::memory, 1e3);  // 1 k → 100 k/s
  const std::vector<double> zbar{30, 30}, mean{30.7, 1e5};
  Incident inc;
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 2, 5, DetectorEvidence{});
  ASSERT_EQ(inc.subsystem, Subsystem::memory);
  ASSERT_EQ(inc.action.find("hypervisor"), std::string::npos);
  inc.symptom = {"derived:cpu_steal_pct.cpu1", "%", Subsystem::cpu, 30.4, 0.3, 30};
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 2, 5, DetectorEvidence{});
  EXPECT_EQ(inc.subsystem, Subsystem::memory);
  EXPECT_EQ(inc.action.rfind("proc.vmstat:pgfault", 0), 0u) << inc.action;
  EXPECT_NE(inc.action.find("; it opened on derived:cpu_steal_pct.cpu1 +30.4 % over 0.3 %: the hypervisor"),
            std::string::npos) << inc.action;
  // Only steal moved: cpu, and the action is the hypervisor's alone.
  const std::vector<double> zbar2{30, 0}, mean2{30.7, 1e3};
  attribute(inc, zbar2, mean2, c.reference(), c.ptrs(), 2, 5, DetectorEvidence{});
  EXPECT_EQ(inc.subsystem, Subsystem::cpu);
  EXPECT_EQ(inc.action.rfind("derived:cpu_steal_pct.cpu1 +30.4 % over 0.3 %: the hypervisor", 0), 0u) << inc.action;
  // Any other symptom: the subsystem's action only.
  inc.symptom = {"derived:psi_cpu_some_pct", "%", Subsystem::cpu, 30, 1, 30};
  attribute(inc, zbar, mean, c.reference(), c.ptrs(), 2, 5, DetectorEvidence{});
  EXPECT_EQ(inc.action.find("hypervisor"), std::string::npos) << inc.action;
}

}  // namespace
}  // namespace reveal::explain
