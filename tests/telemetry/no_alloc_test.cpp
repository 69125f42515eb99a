// sample() must not allocate (docs/DESIGN.md §3, reveal/probe.h). Counts calls to the global
// operator new while each probe samples. This file replaces the global operator
// new/delete for the whole test binary: it only counts, then defers to malloc/free; other
// tests count through tests/alloc_count.h.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "../alloc_count.h"
#include "ethtool/ethtool_fake.h"
#include "netlink/rtnl_fake.h"
#include "perf_fake.h"
#include "probe_test_util.h"
#include "reveal/registry.h"
#include "reveal/sampler.h"
#include "reveal/store.h"
#include "telemetry/cgroup/throttling.h"
#include "telemetry/ethtool/ethtool.h"
#include "telemetry/perf/hardware.h"
#include "telemetry/perf/uncore.h"
#include "telemetry/netlink/qdisc_probe.h"
#include "telemetry/sysfs/net.h"

namespace {
std::atomic<long> g_allocs{0};
thread_local bool t_counting = false;
}  // namespace

void* operator new(std::size_t n) {
  if (t_counting) g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// The nothrow form too (std::stable_sort's temporary buffer uses it): every allocation that
// reaches the deletes below must come from malloc, or AddressSanitizer reports a mismatch.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (t_counting) g_allocs.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace reveal::testing {
void start_counting_allocations() {
  g_allocs = 0;
  t_counting = true;
}
long stop_counting_allocations() {
  t_counting = false;
  return g_allocs.load();
}
}  // namespace reveal::testing

namespace reveal {
namespace {
using namespace reveal::testing;

long allocations_during_sample(Probe& p, std::vector<double>& out) {
  g_allocs = 0;
  t_counting = true;
  p.sample(out);
  t_counting = false;
  return g_allocs.load();
}

TEST(ProbeNoAlloc, SampleAllocatesNothing) {
  for (const char* root : {"/", "vm-2cpu", "edge-extra-columns", "host-cpufreq-4cpu", "host-2socket",
                           "host-2hca", "host-cgroup2", "host-intel-pmu", "host-amd-pmu",
                           "host-ethtool-nics"}) {
    const auto path = std::string(root) == "/" ? std::filesystem::path("/") : fixture(root);
    for (const auto& f : probe_registry()) {
      auto p = f.make();
      if (!p->open(path).available) continue;
      std::vector<double> out(p->channels().size());
      p->sample(out);
      EXPECT_EQ(allocations_during_sample(*p, out), 0) << f.name << " on " << root;
    }
  }
}

TEST(ProbeNoAlloc, VanishedFileAllocatesNothing) {
  TempRoot root("vm-2cpu");
  auto p = probe_registry()[0].make();  // proc.stat
  ASSERT_TRUE(p->open(root.path()).available);
  std::vector<double> out(p->channels().size());
  root.remove("proc/stat");
  EXPECT_EQ(allocations_during_sample(*p, out), 0);
  root.write("proc/stat", "cpu  1 2 3 4 5 6 7 8\n");
  EXPECT_EQ(allocations_during_sample(*p, out), 0);
  EXPECT_EQ(out[0], 1);
}

// The perf probes on a scripted perf_event_open (no PMU needed): steady counting,
// multiplexed, and the PMU taken away (the NaN and state paths).
TEST(ProbeNoAlloc, PerfProbesOnTheFakeAllocateNothing) {
  for (const char* root : {"host-intel-pmu", "host-amd-pmu"}) {
    FakePerf fake;
    telemetry::PerfEnv env;
    env.sys = &fake;
    env.encode = [](const std::string&, telemetry::PerfEvent& ev) {
      ev.type = PERF_TYPE_RAW;
      ev.config = 0x1234;
      return std::string();
    };
    env.counters = [] { return std::optional<telemetry::PmuCounters>(telemetry::PmuCounters{4, 0, "test"}); };
    telemetry::PerfHardwareProbe hw(env);
    telemetry::PerfUncoreProbe uncore(env);
    ASSERT_TRUE(hw.open(fixture(root)).available) << root;
    ASSERT_TRUE(uncore.open(fixture(root)).available) << root;
    std::vector<double> out_hw(hw.channels().size()), out_uncore(uncore.channels().size());
    auto rate = [](const perf_event_attr&, int cpu) { return 1e6 * (cpu + 1); };
    for (double share : {1.0, 0.5, 0.0, 0.0, 1.0}) {
      fake.advance(1'000'000'000, [share](const FakePerf::Fd&) { return share; }, rate);
      EXPECT_EQ(allocations_during_sample(hw, out_hw), 0) << root << " share " << share;
      EXPECT_EQ(allocations_during_sample(uncore, out_uncore), 0) << root << " share " << share;
    }
  }
}

// The ethtool probe on a scripted SIOCETHTOOL: steady values, a NIC failing (NaN), a NIC
// whose driver changed its statistic count (its names read again and its buffer sized anew:
// that sample allocates, the next ones do not), a NIC gone from the kernel.
TEST(ProbeNoAlloc, EthtoolProbeOnTheFakeAllocatesNothing) {
  FakeEthtool fake;
  script_fixture_host(fake);
  telemetry::EthtoolProbe p(fake);
  ASSERT_TRUE(p.open(fixture("host-ethtool-nics")).available);
  std::vector<double> out(p.channels().size());
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  EXPECT_TRUE(std::isfinite(out[0]));
  fake.nics["eno1"].stats_errno = EIO;
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  fake.nics["eth0"].values.push_back(1);
  fake.nics["eth0"].names.push_back("ch9_events");
  EXPECT_GT(allocations_during_sample(p, out), 0);  // the one re-map
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  fake.nics.erase("eno1");
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  EXPECT_TRUE(std::isnan(out[0]));
}

// sys.net on a scripted rtnetlink dump: steady, an interface gone, back under a new index
// (re-bound by name), a dump failing before and after records were read, a truncated datagram.
TEST(ProbeNoAlloc, SysNetNetlinkOnTheFakeAllocatesNothing) {
  NetlinkHost host;
  telemetry::SysNetProbe p(host.kernel);
  ASSERT_TRUE(p.open(host.root.path()).available);
  ASSERT_GT(p.netlink_channels(), 0u);
  std::vector<double> out(p.channels().size());
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  const FakeLink eth0 = host.kernel.links[1];
  host.kernel.links.erase(host.kernel.links.begin() + 1);
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  host.kernel.links.push_back(eth0);
  host.kernel.links.back().ifindex = 40;
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  EXPECT_EQ(out[index_of(p, "sys.net:mtu.eth0")], 9001);
  host.kernel.error_reply = EIO;
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  host.kernel.error_reply = 0;
  host.kernel.done_status = -EINTR;
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  host.kernel.done_status = 0;
  host.kernel.truncate = true;
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  host.kernel.truncate = false;
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  EXPECT_EQ(out[index_of(p, "sys.net:rx_crc_errors.eth0")], 212);
}

// The sampler's loop itself (sleep, lateness, sample_once over real probes and the
// reveal.sampler probe, the CPU budget when real-time): nothing allocated per sample. Counted
// from the callback of the first sample to that of the last.
TEST(SamplerNoAlloc, RunAllocatesNothingPerSample) {
  for (const bool realtime : {false, true}) {
    SCOPED_TRACE(realtime ? "realtime" : "normal");
    Sampler s(make_probes({"proc.*", "reveal.sampler"}, {}), fixture("vm-2cpu"));
    SamplingPriority p;
    p.realtime = realtime;  // refused without privilege: then it samples at normal priority
    s.set_priority(p);
    std::atomic<bool> stop{false};
    std::size_t n = 0;
    long allocs = -1;
    s.run(std::chrono::milliseconds(2), 8, stop, [&](std::int64_t, std::span<const double>) {
      if (++n == 1) {
        g_allocs = 0;
        t_counting = true;
      } else if (n == 8) {
        t_counting = false;
        allocs = g_allocs.load();
      }
    });
    EXPECT_EQ(allocs, 0);
  }
}

// The recorder's other per-sample step: StoreWriter::append (head log record) allocates
// nothing between chunk commits (a commit encodes and may grow its reused buffers).
TEST(StoreNoAlloc, AppendAllocatesNothingBetweenChunkCommits) {
  const auto dir = std::filesystem::temp_directory_path() / ("reveal-noalloc-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::vector<ChannelInfo> channels;
    for (int c = 0; c < 100; ++c)
      channels.push_back({"proc.test:c" + std::to_string(c), "count", Kind::counter, Subsystem::cpu, 64, ""});
    RunMetadata meta;
    StoreWriter w(dir / "run.db", meta, channels, 16);
    std::vector<double> row(channels.size());
    for (int i = 0; i < 40; ++i) {
      for (std::size_t c = 0; c < row.size(); ++c) row[c] = double(i * int(c));
      const bool commits = (i + 1) % 16 == 0;
      g_allocs = 0;
      t_counting = true;
      w.append(i, row);
      t_counting = false;
      if (!commits) {
        EXPECT_EQ(g_allocs.load(), 0) << "sample " << i;
      }
    }
  }
  std::filesystem::remove_all(dir);
}

// tc.qdisc on a scripted dump: steady, a new root qdisc (a rate limit added), one gone, a
// failing dump.
TEST(ProbeNoAlloc, QdiscOnTheFakeAllocatesNothing) {
  FakeRtnl kernel;
  kernel.qdiscs = {FakeQdisc{1, 0, TC_H_ROOT, "noqueue", gnet_stats_queue{}},
                   FakeQdisc{2, 0, TC_H_ROOT, "fq_codel", gnet_stats_queue{0, 0, 4, 0, 0}}};
  telemetry::QdiscProbe p(kernel);
  ASSERT_TRUE(p.open("/").available);
  std::vector<double> out(p.channels().size());
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  kernel.qdiscs.push_back(FakeQdisc{7, 0x7e570000, TC_H_ROOT, "tbf", gnet_stats_queue{1, 1500, 2, 0, 90}});
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  EXPECT_EQ(out[1], 90);
  kernel.qdiscs.erase(kernel.qdiscs.begin());
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  kernel.error_reply = EIO;
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  EXPECT_TRUE(std::isnan(out[0]));
}

// cgroup.throttling walking the tree at every sample (rescan 0) while cgroups come and go.
TEST(ProbeNoAlloc, CpuThrottlingWalksAllocateNothing) {
  TempRoot root("host-cgroup2");
  telemetry::CpuThrottlingProbe p(std::chrono::seconds(0));
  ASSERT_TRUE(p.open(root.path()).available);
  std::vector<double> out(p.channels().size());
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  root.write("sys/fs/cgroup/kubepods.slice/pod9/cpu.max", "1000 100000\n");
  root.write("sys/fs/cgroup/kubepods.slice/pod9/cpu.stat", "nr_periods 4\nnr_throttled 3\nthrottled_usec 9\n");
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  root.remove("sys/fs/cgroup/kubepods.slice/pod9");
  EXPECT_EQ(allocations_during_sample(p, out), 0);
  EXPECT_GE(out[0], 3);
}

}  // namespace
}  // namespace reveal

#include "reveal/streaming.h"

namespace reveal {
namespace {

// The agent's per-sample detection: once the model is fitted, a push() that scores a window
// (no refit, no incident change) allocates nothing. A real recording's channels and values.
TEST(StreamingNoAlloc, ScoringASampleAllocatesNothing) {
  const Recording rec = load_recording(fixture("recordings") / "fleet-a.db");
  StreamingOptions o;
  o.warmup_samples = 30;
  o.refit_samples = 100000;  // no refit inside the measured samples
  StreamingDetector d(rec.meta, rec.channels, o);
  std::size_t measured = 0;
  for (std::size_t i = 0; i < rec.t_unix_ns.size(); ++i) {
    const bool steady = d.model_ready() && !d.active();
    g_allocs = 0;
    t_counting = steady;
    const StreamUpdate& u = d.push(rec.t_unix_ns[i], rec.values.row(i));
    t_counting = false;
    if (steady && u.scored && !u.opened && !u.closed && !u.refitted && !d.active()) {
      EXPECT_EQ(g_allocs.load(), 0) << "sample " << i;
      ++measured;
    }
  }
  EXPECT_GT(measured, 20u);
}

}  // namespace
}  // namespace reveal
