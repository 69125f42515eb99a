// perf.hardware and perf.uncore driven by a scripted perf_event_open (perf_fake.h) and fixture
// roots: counter budgeting, group splitting, multiplexing scaling, PMU contention, vendor
// tables, uncore discovery. None of it needs a PMU.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "perf_fake.h"
#include "probe_test_util.h"
#include "telemetry/perf/hardware.h"
#include "telemetry/perf/pfm.h"
#include "telemetry/perf/pmu.h"
#include "telemetry/perf/uncore.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

constexpr std::uint64_t kSecond = 1'000'000'000;
constexpr std::uint64_t kStallsL3 = 0x60006a3, kStallsTotal = 0x40004a3;  // libpfm4 skl encodings

// libpfm4 stand-in: knows the Intel events and AMD LS_DISPATCH, not LS_DC_ACCESSES (as libpfm4
// 4.13 on Zen 2/3), and perf_raw::r<hex>.
struct FakeEncoder {
  std::vector<std::string> calls;
  std::string operator()(const std::string& name, PerfEvent& ev) {
    calls.push_back(name);
    static const std::map<std::string, std::uint64_t> known = {
        {"CYCLE_ACTIVITY:STALLS_L3_MISS", kStallsL3}, {"CYCLE_ACTIVITY:STALLS_TOTAL", kStallsTotal},
        {"LS_DISPATCH:LD_DISPATCH", 0x129}, {"LS_DISPATCH:STORE_DISPATCH", 0x229}};
    if (auto it = known.find(name); it != known.end()) {
      ev.type = PERF_TYPE_RAW;
      ev.config = it->second;
      return {};
    }
    if (name.starts_with("perf_raw::r")) {
      ev.type = PERF_TYPE_RAW;
      ev.config = std::stoull(name.substr(11), nullptr, 16);
      return {};
    }
    return "libpfm4: " + name + ": event not found";
  }
};

struct Rig {
  FakePerf fake;
  FakeEncoder enc;
  PmuCounters counters;
  PerfEnv env() {
    PerfEnv e;
    e.sys = &fake;
    e.encode = [this](const std::string& n, PerfEvent& ev) { return enc(n, ev); };
    e.counters = [this] { return std::optional<PmuCounters>(counters); };
    return e;
  }
};

bool stalled_cycles(const perf_event_attr& a) {
  return a.type == PERF_TYPE_HARDWARE && (a.config == PERF_COUNT_HW_STALLED_CYCLES_FRONTEND ||
                                          a.config == PERF_COUNT_HW_STALLED_CYCLES_BACKEND);
}

// cycles (cpu+1)e9/s, instructions 2(cpu+1)e9/s, everything else 1e6/s.
double rates(const perf_event_attr& a, int cpu) {
  if (is_hw(a, PERF_COUNT_HW_CPU_CYCLES)) return (cpu + 1) * 1e9;
  if (is_hw(a, PERF_COUNT_HW_INSTRUCTIONS)) return 2 * (cpu + 1) * 1e9;
  return 1e6;
}
double all_run(const FakePerf::Fd&) { return 1.0; }

// Generic counters a group's members occupy under the budget rule of pmu.h.
int group_cost(const FakePerf& f, int leader, const PmuCounters& c) {
  int cost = 0;
  for (int m : f.fds()[leader].members) {
    const auto& a = f.fds()[m].attr;
    PerfEvent ev;
    ev.type = a.type;
    ev.config = a.config;
    cost += counter_cost(ev, c);
  }
  return cost;
}

bool leads_cycles(const FakePerf& f, const FakePerf::Fd& leader) {
  for (int m : leader.members)
    if (is_hw(f.fds()[m].attr, PERF_COUNT_HW_CPU_CYCLES)) return true;
  return false;
}

TEST(PerfPmu, CpuIdAndWatchdogFromRoot) {
  const CpuId intel = read_cpu_id(fixture("host-intel-pmu"));
  EXPECT_EQ(intel.vendor, CpuVendor::intel);
  EXPECT_EQ(intel.vendor_id, "GenuineIntel");
  EXPECT_EQ(intel.family, 6);
  EXPECT_EQ(intel.model, 85);
  const CpuId amd = read_cpu_id(fixture("host-amd-pmu"));
  EXPECT_EQ(amd.vendor, CpuVendor::amd);
  EXPECT_EQ(amd.family, 0x17);
  EXPECT_EQ(amd.model, 0x31);
  EXPECT_TRUE(nmi_watchdog_on(fixture("host-intel-pmu")));
  EXPECT_FALSE(nmi_watchdog_on(fixture("host-amd-pmu")));
  TempRoot r("host-amd-pmu");
  r.write("proc/sys/kernel/nmi_watchdog", "1\n");
  EXPECT_TRUE(nmi_watchdog_on(r.path()));
}

TEST(PerfPmu, BudgetAndCost) {
  EXPECT_EQ(generic_budget({4, 3, ""}, true), 3);
  EXPECT_EQ(generic_budget({4, 3, ""}, false), 4);
  EXPECT_EQ(generic_budget({6, 0, ""}, true), 5);
  EXPECT_EQ(generic_budget({1, 0, ""}, true), 1);  // never below one
  PerfEvent cycles{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES};
  PerfEvent ins{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS};
  PerfEvent br{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS};
  EXPECT_EQ(counter_cost(cycles, {4, 3, ""}), 0);  // Intel fixed counters
  EXPECT_EQ(counter_cost(ins, {4, 3, ""}), 0);
  EXPECT_EQ(counter_cost(br, {4, 3, ""}), 1);
  EXPECT_EQ(counter_cost(cycles, {6, 0, ""}), 1);  // AMD: no fixed counters
}

TEST(PerfPmu, PackGroupsKeepsBundlesTogetherAndFits) {
  const std::vector<int> cost(10, 1);
  const auto g = pack_groups({{0, 1}, {2, 3}, {4}, {5, 6, 7, 8, 9}}, cost, 3);
  EXPECT_EQ(g, (std::vector<std::vector<std::size_t>>{{0, 1, 4}, {2, 3}, {5, 6, 7}, {8, 9}}));
  // Zero-cost (fixed-counter) events ride along for free.
  const auto z = pack_groups({{0, 1}, {2, 3}, {4}}, {0, 0, 1, 1, 1}, 3);
  EXPECT_EQ(z, (std::vector<std::vector<std::size_t>>{{0, 1, 2, 3, 4}}));
  // Budget below one is one: every event alone.
  EXPECT_EQ(pack_groups({{0, 1}}, {1, 1}, 0).size(), 2u);
}

TEST(PerfHardwareProbe, IntelGroupsFitTheBudgetAndCoverEveryCpu) {
  Rig rig;
  rig.counters = {4, 3, "test"};
  rig.fake.refuse = [](const perf_event_attr& a, int) { return stalled_cycles(a) ? ENOENT : 0; };
  PerfHardwareProbe p(rig.env());
  const ProbeStatus st = p.open(fixture("host-intel-pmu"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(p.budget(), 3);  // 4 generic − 1 for the NMI watchdog
  std::vector<std::string> want = {"perf:cycles", "perf:instructions", "perf:branches", "perf:branch-misses",
                                   "perf:cache-references", "perf:cache-misses", "perf:L1-dcache-loads",
                                   "perf:L1-dcache-load-misses", "perf:LLC-loads", "perf:LLC-load-misses",
                                   "perf:dTLB-loads", "perf:dTLB-load-misses", "perf:cycle_activity.stalls_l3_miss",
                                   "perf:cycle_activity.stalls_total"};
  for (int c = 0; c < 4; ++c) {
    want.push_back("perf:cycles.cpu" + std::to_string(c));
    want.push_back("perf:instructions.cpu" + std::to_string(c));
  }
  want.push_back("perf:counters_running_pct");
  EXPECT_EQ(names(p), want);
  expect_names_follow_rule(p, "perf");
  EXPECT_EQ(info(p, "perf:counters_running_pct").kind, Kind::gauge);
  EXPECT_EQ(info(p, "perf:cycles.cpu3").kind, Kind::counter);
  EXPECT_EQ(info(p, "perf:cycle_activity.stalls_l3_miss").unit, "cycles");
  ASSERT_EQ(p.skipped().size(), 2u);
  EXPECT_EQ(p.skipped()[0].rfind("stalled-cycles-frontend: not counted by this PMU", 0), 0u) << p.skipped()[0];

  const auto leaders = rig.fake.open_leaders();
  EXPECT_EQ(leaders.size(), 4 * p.groups_per_cpu());
  std::map<int, int> groups_per_cpu;
  std::size_t events = 0;
  for (int l : leaders) {
    const auto& fd = rig.fake.fds()[l];
    EXPECT_LE(group_cost(rig.fake, l, rig.counters), 3) << "group on cpu " << fd.cpu;
    ++groups_per_cpu[fd.cpu];
    events += fd.members.size();
    for (int m : fd.members) EXPECT_EQ(rig.fake.fds()[m].cpu, fd.cpu);
    if (leads_cycles(rig.fake, fd)) {  // IPC partners share a group
      bool ins = false;
      for (int m : fd.members) ins = ins || is_hw(rig.fake.fds()[m].attr, PERF_COUNT_HW_INSTRUCTIONS);
      EXPECT_TRUE(ins);
    }
  }
  EXPECT_EQ(groups_per_cpu, (std::map<int, int>{{0, int(p.groups_per_cpu())}, {1, int(p.groups_per_cpu())},
                                                {2, int(p.groups_per_cpu())}, {3, int(p.groups_per_cpu())}}));
  EXPECT_EQ(events, 4 * 14u);
  // cycles+instructions ride on fixed counters with branches/branch-misses; the other five
  // pairs need 2 of the 3 generic counters each and are not split: 6 groups per CPU.
  EXPECT_EQ(p.groups_per_cpu(), 6u);
  bool vendor_seen = false;
  for (const auto& f : rig.fake.fds())
    vendor_seen = vendor_seen || (f.open && f.attr.type == PERF_TYPE_RAW && f.attr.config == kStallsL3);
  EXPECT_TRUE(vendor_seen);
}

TEST(PerfHardwareProbe, AmdUsesItsTableAndGenericCountersOnly) {
  Rig rig;
  rig.counters = {6, 0, "test"};
  PerfHardwareProbe p(rig.env());
  ASSERT_TRUE(p.open(fixture("host-amd-pmu")).available);
  EXPECT_EQ(p.budget(), 6);  // watchdog off
  for (const char* n : {"perf:ls_dispatch.ld_dispatch", "perf:ls_dispatch.store_dispatch", "perf:ls_dc_accesses",
                        "perf:stalled-cycles-frontend", "perf:stalled-cycles-backend"})
    index_of(p, n);  // fails the test when absent
  for (const auto& c : p.channels()) EXPECT_EQ(c.name.find("cycle_activity"), std::string::npos) << c.name;
  // libpfm4 lacks LS_DC_ACCESSES on Zen 2: the raw PMCx040 encoding is used instead.
  EXPECT_EQ(rig.enc.calls, (std::vector<std::string>{"LS_DISPATCH:LD_DISPATCH", "LS_DISPATCH:STORE_DISPATCH",
                                                     "LS_DC_ACCESSES", "perf_raw::r40"}));
  bool raw40 = false;
  for (const auto& f : rig.fake.fds()) raw40 = raw40 || (f.attr.type == PERF_TYPE_RAW && f.attr.config == 0x40);
  EXPECT_TRUE(raw40);
  for (int l : rig.fake.open_leaders()) EXPECT_LE(group_cost(rig.fake, l, rig.counters), 6);
  EXPECT_TRUE(p.skipped().empty());
}

TEST(PerfHardwareProbe, UnencodableVendorEventsAreSkippedWithReason) {
  Rig rig;
  PerfEnv env = rig.env();
  env.encode = [](const std::string& n, PerfEvent&) { return "libpfm4: " + n + ": event not found"; };
  PerfHardwareProbe p(env);
  ASSERT_TRUE(p.open(fixture("host-intel-pmu")).available);
  EXPECT_EQ(p.skipped(), (std::vector<std::string>{
                             "cycle_activity.stalls_l3_miss: libpfm4: CYCLE_ACTIVITY:STALLS_L3_MISS: event not found",
                             "cycle_activity.stalls_total: libpfm4: CYCLE_ACTIVITY:STALLS_TOTAL: event not found"}));
  std::vector<Event> ev;
  p.poll_events(42, ev);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, "event_skipped");
  EXPECT_EQ(ev[0].source, "perf.hardware");
  EXPECT_EQ(ev[0].t_unix_ns, 42);
  p.poll_events(43, ev);
  EXPECT_EQ(ev.size(), 2u);  // reported once
}

TEST(PerfHardwareProbe, ScalesEachIntervalByItsOwnRunningShare) {
  Rig rig;
  rig.counters = {4, 3, "test"};
  PerfHardwareProbe p(rig.env());
  ASSERT_TRUE(p.open(fixture("host-intel-pmu")).available);
  ASSERT_GT(p.groups_per_cpu(), 1u);  // the events really are multiplexed
  rig.fake.advance(kSecond, [](const FakePerf::Fd&) { return 0.5; }, rates);
  auto a = sample(p);
  EXPECT_DOUBLE_EQ(value(p, a, "perf:cycles"), 10e9);  // (1+2+3+4)e9, counted half the time × 2
  EXPECT_DOUBLE_EQ(value(p, a, "perf:instructions"), 20e9);
  EXPECT_DOUBLE_EQ(value(p, a, "perf:cycles.cpu2"), 3e9);
  EXPECT_DOUBLE_EQ(value(p, a, "perf:instructions.cpu0"), 2e9);
  EXPECT_DOUBLE_EQ(value(p, a, "perf:branches"), 4e6);
  EXPECT_DOUBLE_EQ(value(p, a, "perf:counters_running_pct"), 50.0);
  // Next second: the cycles group runs a quarter of the time at 4× the rate. Scaling by the
  // interval's share gives the true total; scaling raw totals by cumulative enabled/running
  // (0.5e9 + 1e9 counted in 0.75 s running of 2 s enabled) would claim 4e9 on cpu0.
  rig.fake.advance(kSecond, [](const FakePerf::Fd&) { return 0.25; },
                   [](const perf_event_attr& at, int cpu) { return 4 * rates(at, cpu); });
  auto b = sample(p);
  EXPECT_DOUBLE_EQ(value(p, b, "perf:cycles.cpu0"), 1e9 + 4e9);
  EXPECT_DOUBLE_EQ(value(p, b, "perf:cycles"), 10e9 + 40e9);
  EXPECT_DOUBLE_EQ(value(p, b, "perf:counters_running_pct"), 25.0);
  for (std::size_t i = 0; i + 1 < b.size(); ++i) EXPECT_GE(b[i], a[i]) << p.channels()[i].name;
}

TEST(PerfHardwareProbe, AGroupNotScheduledReadsNaNForItsEventsOnly) {
  Rig rig;
  rig.counters = {4, 3, "test"};
  PerfHardwareProbe p(rig.env());
  ASSERT_TRUE(p.open(fixture("host-intel-pmu")).available);
  const FakePerf& f = rig.fake;
  auto share = [&f](const FakePerf::Fd& l) { return leads_cycles(f, l) ? 1.0 : 0.0; };
  rig.fake.advance(kSecond, share, rates);
  auto a = sample(p);
  EXPECT_DOUBLE_EQ(value(p, a, "perf:cycles"), 10e9);
  EXPECT_DOUBLE_EQ(value(p, a, "perf:instructions.cpu1"), 4e9);
  EXPECT_TRUE(std::isnan(value(p, a, "perf:LLC-load-misses")));
  EXPECT_TRUE(std::isnan(value(p, a, "perf:cycle_activity.stalls_l3_miss")));
  EXPECT_NEAR(value(p, a, "perf:counters_running_pct"), 100.0 / double(p.groups_per_cpu()), 1e-9);
  rig.fake.advance(kSecond, share, rates);
  sample(p);
  EXPECT_EQ(p.state(), PmuState::ok);  // some groups ran: multiplexing, not contention
}

TEST(PerfHardwareProbe, PmuTakenByAnotherProfilerIsReportedNotZero) {
  Rig rig;
  PerfHardwareProbe p(rig.env());
  ASSERT_TRUE(p.open(fixture("host-intel-pmu")).available);
  std::vector<Event> ev;
  p.poll_events(0, ev);  // nothing skipped on this fake: no events
  ASSERT_TRUE(ev.empty());
  rig.fake.advance(kSecond, all_run, rates);
  const auto before = sample(p);
  ASSERT_TRUE(all_finite(before));
  auto none = [](const FakePerf::Fd&) { return 0.0; };
  rig.fake.advance(kSecond, none, rates);
  auto t1 = sample(p);
  for (std::size_t i = 0; i + 1 < t1.size(); ++i) EXPECT_TRUE(std::isnan(t1[i])) << p.channels()[i].name;
  EXPECT_DOUBLE_EQ(value(p, t1, "perf:counters_running_pct"), 0.0);
  p.poll_events(1, ev);
  EXPECT_TRUE(ev.empty());  // one tick could be a transient
  rig.fake.advance(kSecond, none, rates);
  auto t2 = sample(p);
  EXPECT_TRUE(std::isnan(value(p, t2, "perf:cycles")));
  EXPECT_EQ(p.state(), PmuState::not_scheduled);
  p.poll_events(2, ev);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, "pmu_contention");
  EXPECT_EQ(ev[0].detail, "PMU counters not scheduled: another profiler or the NMI watchdog holds them");
  p.poll_events(3, ev);
  EXPECT_EQ(ev.size(), 1u);  // a state change is reported once
  rig.fake.advance(kSecond, all_run, rates);
  auto t3 = sample(p);
  EXPECT_TRUE(all_finite(t3));
  EXPECT_EQ(p.state(), PmuState::ok);
  EXPECT_DOUBLE_EQ(value(p, t3, "perf:cycles"), 20e9);  // the estimate resumes: the gap lost its second
  p.poll_events(4, ev);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].kind, "pmu_restored");
}

TEST(PerfHardwareProbe, ZeroCountsWhileScheduledAreNotTrusted) {
  Rig rig;
  PerfHardwareProbe p(rig.env());
  ASSERT_TRUE(p.open(fixture("host-amd-pmu")).available);
  rig.fake.advance(kSecond, all_run, rates);
  ASSERT_TRUE(all_finite(sample(p)));
  auto zero = [](const perf_event_attr&, int) { return 0.0; };
  for (int i = 0; i < 2; ++i) {
    rig.fake.advance(kSecond, all_run, zero);
    auto v = sample(p);
    EXPECT_TRUE(std::isnan(value(p, v, "perf:cycles")));
    EXPECT_TRUE(std::isnan(value(p, v, "perf:branches")));
    EXPECT_DOUBLE_EQ(value(p, v, "perf:counters_running_pct"), 100.0);
  }
  EXPECT_EQ(p.state(), PmuState::zero_counts);
  std::vector<Event> ev;
  p.poll_events(0, ev);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NE(ev[0].detail.find("read zero"), std::string::npos) << ev[0].detail;
}

TEST(PerfHardwareProbe, UnavailableWithoutPmuAndLeavesNothingOpen) {
  Rig rig;
  rig.fake.refuse = [](const perf_event_attr&, int) { return ENOENT; };
  PerfHardwareProbe p(rig.env());
  const ProbeStatus st = p.open(fixture("host-intel-pmu"));
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "no PMU exposed (perf_event_open cycles: No such file or directory)");
  EXPECT_TRUE(p.channels().empty());
  EXPECT_EQ(rig.fake.open_count(), 0u);
  rig.fake.refuse = [](const perf_event_attr&, int) { return EACCES; };
  const ProbeStatus denied = p.open(fixture("host-intel-pmu"));
  EXPECT_FALSE(denied.available);
  EXPECT_NE(denied.reason.find("perf_event_paranoid"), std::string::npos) << denied.reason;
}

TEST(PerfHardwareProbe, CpuMissingFromTheLiveKernelIsLeftOut) {
  Rig rig;
  rig.fake.refuse = [](const perf_event_attr&, int cpu) { return cpu == 2 ? ENODEV : 0; };
  PerfHardwareProbe p(rig.env());
  ASSERT_TRUE(p.open(fixture("host-intel-pmu")).available);
  for (const auto& c : p.channels()) EXPECT_EQ(c.name.find(".cpu2"), std::string::npos) << c.name;
  index_of(p, "perf:cycles.cpu3");
  for (const auto& f : rig.fake.fds()) EXPECT_FALSE(f.open && f.cpu == 2);
  EXPECT_EQ(rig.fake.open_leaders().size(), 3 * p.groups_per_cpu());
  rig.fake.advance(kSecond, all_run, rates);
  auto v = sample(p);
  EXPECT_DOUBLE_EQ(value(p, v, "perf:cycles"), (1 + 2 + 4) * 1e9);
  EXPECT_DOUBLE_EQ(value(p, v, "perf:cycles.cpu3"), 4e9);
}

TEST(PerfHardwareProbe, ReadFailureIsAGapAndCloseReleasesEverything) {
  Rig rig;
  {
    PerfHardwareProbe p(rig.env());
    ASSERT_TRUE(p.open(fixture("host-intel-pmu")).available);
    const std::size_t opened = rig.fake.open_count();
    ASSERT_TRUE(p.open(fixture("host-intel-pmu")).available);  // reopen does not leak
    EXPECT_EQ(rig.fake.open_count(), opened);
    rig.fake.advance(kSecond, all_run, rates);
    rig.fake.read_errno = EIO;
    EXPECT_TRUE(all_nan(sample(p)));
    EXPECT_EQ(p.state(), PmuState::ok);  // an unreadable group says nothing about contention
    rig.fake.read_errno = 0;
    EXPECT_TRUE(all_finite(sample(p)));
  }
  EXPECT_EQ(rig.fake.open_count(), 0u);
}

TEST(PerfPfm, EncodesThroughLibpfm4) {
  ASSERT_EQ(pfm_status(), "");
  PerfEvent ev;
  EXPECT_EQ(pfm_encode("perf::INSTRUCTIONS", ev), "");
  EXPECT_EQ(ev.type, PERF_TYPE_HARDWARE);
  EXPECT_EQ(ev.config, PERF_COUNT_HW_INSTRUCTIONS);
  EXPECT_EQ(pfm_encode("perf_raw::r40", ev), "");
  EXPECT_EQ(ev.type, PERF_TYPE_RAW);
  EXPECT_EQ(ev.config, 0x40u);
  const std::string bad = pfm_encode("NO_SUCH_EVENT_REVEAL", ev);
  EXPECT_EQ(bad.rfind("libpfm4: NO_SUCH_EVENT_REVEAL: ", 0), 0u) << bad;
  if (auto c = pfm_core_counters()) {
    EXPECT_GT(c->generic, 0);
    EXPECT_GE(c->fixed, 0);
    EXPECT_NE(c->source.find("libpfm4"), std::string::npos);
  }
}

TEST(PerfUncore, EncodesEventTermsWithSysfsFormats) {
  const auto imc = fixture("host-intel-pmu") / "sys/bus/event_source/devices/uncore_imc_0";
  PerfEvent ev;
  EXPECT_EQ(encode_sysfs_event(imc, "event=0x04,umask=0x03", ev), "");
  EXPECT_EQ(ev.config, 0x0304u);
  EXPECT_EQ(encode_sysfs_event(imc, "event=0x04,umask=0x0c,edge,thresh=2", ev), "");
  EXPECT_EQ(ev.config, 0x0c04u | (1u << 18) | (2u << 24));
  EXPECT_EQ(encode_sysfs_event(imc, "event=0x104", ev), "value of event does not fit format/event");
  EXPECT_EQ(encode_sysfs_event(imc, "nosuch=1", ev), "no format/nosuch");
  const auto df = fixture("host-amd-pmu") / "sys/bus/event_source/devices/amd_df";
  EXPECT_EQ(encode_sysfs_event(df, "event=0x107,umask=0x38", ev), "");
  EXPECT_EQ(ev.config, 0x07u | (0x38u << 8) | (std::uint64_t{1} << 32));
}

TEST(PerfUncore, IntelImcCasCountsBecomeBytes) {
  Rig rig;
  PerfUncoreProbe p(rig.env());
  const ProbeStatus st = p.open(fixture("host-intel-pmu"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p), (std::vector<std::string>{"perf:uncore_imc_read_bytes", "perf:uncore_imc_write_bytes"}));
  EXPECT_EQ(info(p, "perf:uncore_imc_read_bytes").unit, "bytes");
  EXPECT_EQ(info(p, "perf:uncore_imc_read_bytes").subsystem, Subsystem::memory);
  std::set<std::tuple<std::uint32_t, std::uint64_t, int>> opened;
  for (int l : rig.fake.open_leaders()) {
    const auto& f = rig.fake.fds()[l];
    EXPECT_EQ(f.members.size(), 1u);
    opened.insert({f.attr.type, f.attr.config, f.cpu});
  }
  std::set<std::tuple<std::uint32_t, std::uint64_t, int>> want;
  for (std::uint32_t type : {13u, 14u})
    for (std::uint64_t config : {0x0304u, 0x0c04u})
      for (int cpu : {0, 2}) want.insert({type, config, cpu});
  EXPECT_EQ(opened, want);  // both IMCs, both events, one CPU per socket; free-running PMU ignored
  rig.fake.advance(kSecond, [](const FakePerf::Fd&) { return 0.5; },
                   [](const perf_event_attr& a, int) { return a.config == 0x0304 ? 1e6 : 5e5; });
  auto v = sample(p);
  EXPECT_DOUBLE_EQ(value(p, v, "perf:uncore_imc_read_bytes"), 2 * 2 * 1e6 * 64);
  EXPECT_DOUBLE_EQ(value(p, v, "perf:uncore_imc_write_bytes"), 2 * 2 * 5e5 * 64);
}

TEST(PerfUncore, AmdDataFabricDramChannels) {
  Rig rig;
  PerfUncoreProbe p(rig.env());
  const ProbeStatus st = p.open(fixture("host-amd-pmu"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p), (std::vector<std::string>{"perf:amd_df_dram_bytes"}));
  std::set<std::uint64_t> configs;
  for (int l : rig.fake.open_leaders()) {
    EXPECT_EQ(rig.fake.fds()[l].attr.type, 10u);
    EXPECT_EQ(rig.fake.fds()[l].cpu, 0);
    configs.insert(rig.fake.fds()[l].attr.config);
  }
  std::set<std::uint64_t> want;
  for (std::uint64_t n = 0; n < 8; ++n) {
    const std::uint64_t code = 0x07 + 0x40 * n;
    want.insert((code & 0xff) | (0x38u << 8) | ((code >> 8) << 32));
  }
  EXPECT_EQ(configs, want);
  // 8 events on 4 DF counters: each runs half the time and is scaled back.
  rig.fake.advance(kSecond, [](const FakePerf::Fd&) { return 0.5; }, [](const perf_event_attr&, int) { return 1e6; });
  EXPECT_DOUBLE_EQ(value(p, sample(p), "perf:amd_df_dram_bytes"), 8 * 1e6 * 64);
}

TEST(PerfUncore, UnavailableWithReasons) {
  Rig rig;
  PerfUncoreProbe p(rig.env());
  ProbeStatus st = p.open(fixture("vm-2cpu"));
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("no uncore memory-controller PMU"), std::string::npos) << st.reason;
  {
    TempRoot r("host-amd-pmu");
    r.write("proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n\n");
    st = p.open(r.path());
    EXPECT_FALSE(st.available);
    EXPECT_NE(st.reason.find("family 17h only"), std::string::npos) << st.reason;
  }
  {
    TempRoot r("host-intel-pmu");
    r.remove("sys/bus/event_source/devices/uncore_imc_0/format/umask");
    r.remove("sys/bus/event_source/devices/uncore_imc_1");
    st = p.open(r.path());
    EXPECT_FALSE(st.available);
    EXPECT_EQ(st.reason, "no usable uncore memory PMU: uncore_imc_0: no format/umask");
  }
  rig.fake.refuse = [](const perf_event_attr&, int) { return ENOENT; };  // the live kernel lacks it
  st = p.open(fixture("host-intel-pmu"));
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("perf_event_open uncore_imc_0/cas_count_read"), std::string::npos) << st.reason;
  EXPECT_TRUE(p.channels().empty());
  EXPECT_EQ(rig.fake.open_count(), 0u);
}

}  // namespace
}  // namespace reveal::telemetry
