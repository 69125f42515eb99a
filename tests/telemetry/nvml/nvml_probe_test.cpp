// nvml probe against the NVML test double (nvml_double.cpp, two scripted GPUs), plus the
// unavailable paths: library absent, a library without NVML symbols, nvmlInit failing.
#include "telemetry/nvml/nvml_probe.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "../probe_test_util.h"
#include "nvml_double_control.h"
#include "reveal/registry.h"

namespace {
// The suite-wide probe tests (no_alloc_test: sample() allocates nothing; registry_test: names,
// spans) build the registered "nvml" probe, which reads $REVEAL_NVML_LIBRARY: point it at the
// double so they exercise this probe too, unless the caller chose a library.
[[maybe_unused]] const bool kEnvSet = [] { return ::setenv("REVEAL_NVML_LIBRARY", REVEAL_NVML_DOUBLE_PATH, 0) == 0; }();
}  // namespace

namespace reveal {
namespace {
using namespace reveal::testing;
using telemetry::NvmlProbe;
using testing::EnvGuard;
using testing::NvmlDouble;

class NvmlProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(d().handle, nullptr) << ::dlerror();
    ASSERT_TRUE(d().reset && d().set_lost_after && d().add_xid && d().set_init_result &&
                d().init_refcount && d().gpm_samples_in_use && d().ecc_calls);
    d().reset();
  }
  static NvmlDouble& d() { return NvmlDouble::get(); }

  // An opened probe on the full double.
  static std::unique_ptr<NvmlProbe> opened() {
    auto p = std::make_unique<NvmlProbe>(REVEAL_NVML_DOUBLE_PATH);
    const auto st = p->open("/");
    EXPECT_TRUE(st.available) << st.reason;
    EXPECT_TRUE(st.reason.empty());
    return p;
  }
};

std::optional<std::size_t> find(const Probe& p, const std::string& name) {
  for (std::size_t i = 0; i < p.channels().size(); ++i)
    if (p.channels()[i].name == name) return i;
  return std::nullopt;
}


TEST_F(NvmlProbeTest, ExactValuesForBothGpus) {
  auto p = opened();
  expect_names_follow_rule(*p, "nvml");
  const auto v = sample(*p);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  struct Want {
    const char* name;
    double gpu0, gpu1;
  };
  for (const Want& w : std::initializer_list<Want>{
           {"utilization_gpu", 87, 5},
           {"utilization_memory", 42, 1},
           {"memory_used", 10 * gib, 1 * gib},
           {"memory_free", 70 * gib, 39 * gib},
           {"memory_total", 80 * gib, 40 * gib},
           {"clocks_sm", 1980, 210},
           {"clocks_mem", 2619, 405},
           {"pstate", 0, 8},
           {"power_usage", 312.345, 45.678},
           {"enforced_power_limit", 700, 300},
           {"temperature_gpu", 64, 38},
           {"pcie_link_gen_current", 4, 3},
           {"pcie_link_gen_max", 5, 4},
           {"pcie_link_width_current", 8, 16},
           {"pcie_link_width_max", 16, 16},
           {"ecc_sbe_vol_total", 3, 0},
           {"ecc_dbe_vol_total", 0, 0},
           {"ecc_sbe_agg_total", 17, 4},
           {"ecc_dbe_agg_total", 1, 0},
           {"retired_sbe", 2, 0},
           {"retired_dbe", 1, 0},
           {"correctable_remapped_rows", 5, 0},
           {"uncorrectable_remapped_rows", 1, 0},
           {"row_remap_pending", 0, 1},
           {"row_remap_failure", 0, 0},
           {"xid_events_total", 0, 0},
       }) {
    EXPECT_DOUBLE_EQ(value(*p, v, std::string("nvml:") + w.name + ".gpu0"), w.gpu0) << w.name;
    EXPECT_DOUBLE_EQ(value(*p, v, std::string("nvml:") + w.name + ".gpu1"), w.gpu1) << w.name;
  }
  EXPECT_DOUBLE_EQ(value(*p, v, "nvml:fan_speed.gpu1"), 55);
  // NVLink link L counter C = 100 L + C + 1 (replay, recovery, crc_flit, crc_data).
  EXPECT_EQ(value(*p, v, "nvml:nvlink_replay_error_count_l0.gpu0"), 1);
  EXPECT_EQ(value(*p, v, "nvml:nvlink_recovery_error_count_l0.gpu0"), 2);
  EXPECT_EQ(value(*p, v, "nvml:nvlink_crc_flit_error_count_l2.gpu0"), 203);
  EXPECT_EQ(value(*p, v, "nvml:nvlink_crc_data_error_count_l3.gpu0"), 304);
  EXPECT_TRUE(all_finite(v));

  const auto& power = info(*p, "nvml:power_usage.gpu0");
  EXPECT_EQ(power.unit, "W");
  EXPECT_EQ(power.kind, Kind::gauge);
  EXPECT_EQ(power.subsystem, Subsystem::power_thermal);
  EXPECT_NE(power.help.find("Reveal Double A GPU-00000000-0000-0000-0000-000000000000"), std::string::npos)
      << power.help;
  EXPECT_NE(info(*p, "nvml:clocks_sm.gpu1").help.find("gpu1 = Reveal Double B GPU-1111"), std::string::npos);
  EXPECT_EQ(info(*p, "nvml:clocks_sm.gpu0").unit, "MHz");
  EXPECT_EQ(info(*p, "nvml:utilization_gpu.gpu0").subsystem, Subsystem::gpu);
  EXPECT_EQ(info(*p, "nvml:pstate.gpu0").kind, Kind::state);
  EXPECT_EQ(info(*p, "nvml:ecc_dbe_agg_total.gpu0").kind, Kind::counter);
  EXPECT_EQ(info(*p, "nvml:ecc_dbe_agg_total.gpu0").subsystem, Subsystem::gpu);
  EXPECT_EQ(info(*p, "nvml:retired_sbe.gpu0").counter_bits, 32);
  EXPECT_EQ(info(*p, "nvml:nvlink_replay_error_count_l0.gpu0").kind, Kind::counter);
  EXPECT_EQ(info(*p, "nvml:nvlink_replay_error_count_l0.gpu0").subsystem, Subsystem::interconnect);
  EXPECT_EQ(info(*p, "nvml:xid_events_total.gpu1").kind, Kind::counter);
  EXPECT_EQ(info(*p, "nvml:temperature_gpu.gpu0").unit, "C");
}

// Slow reads (ECC, link width, NVLink error counters...) run at the first tick and then once per
// slow interval; the ticks between repeat their values. A zero interval reads them every tick.
TEST_F(NvmlProbeTest, SlowReadsOncePerIntervalAndHeldBetween) {
  auto p = opened();  // default interval (10 s): the ticks below all fall inside it
  const long at_open = d().ecc_calls();
  EXPECT_EQ(at_open, 8);  // discovery: 4 ECC counters per GPU
  for (int tick = 1; tick <= 4; ++tick) {
    const auto v = sample(*p);
    EXPECT_TRUE(all_finite(v)) << tick;
    EXPECT_EQ(value(*p, v, "nvml:ecc_sbe_agg_total.gpu0"), 17) << tick;
    EXPECT_EQ(value(*p, v, "nvml:pcie_link_width_current.gpu0"), 8) << tick;
    EXPECT_EQ(value(*p, v, "nvml:nvlink_crc_flit_error_count_l2.gpu0"), 203) << tick;
    EXPECT_EQ(value(*p, v, "nvml:row_remap_pending.gpu1"), 1) << tick;
    EXPECT_EQ(value(*p, v, "nvml:enforced_power_limit.gpu1"), 300) << tick;
    EXPECT_EQ(value(*p, v, "nvml:utilization_gpu.gpu0"), 87) << tick;
  }
  EXPECT_EQ(d().ecc_calls() - at_open, 8);  // the first tick only

  NvmlProbe every_tick(REVEAL_NVML_DOUBLE_PATH, 0.0);
  ASSERT_TRUE(every_tick.open("/").available);
  const long before = d().ecc_calls();
  for (int tick = 1; tick <= 3; ++tick) EXPECT_TRUE(all_finite(sample(every_tick)));
  EXPECT_EQ(d().ecc_calls() - before, 3 * 8);
}

// The big-host script (bench/bighost): 8 GPUs, 18 NVLinks on each board-A GPU.
TEST_F(NvmlProbeTest, BigHostScriptEightGpusEighteenLinks) {
  EnvGuard gpus("REVEAL_NVML_DOUBLE_GPUS"), links("REVEAL_NVML_DOUBLE_NVLINKS");
  ::setenv("REVEAL_NVML_DOUBLE_GPUS", "8", 1);
  ::setenv("REVEAL_NVML_DOUBLE_NVLINKS", "18", 1);
  std::size_t n = 0;
  {
    auto p = opened();
    n = p->channels().size();
    const auto v = sample(*p);
    EXPECT_TRUE(all_finite(v));
    for (int g : {0, 2, 7}) {
      const std::string gpu = ".gpu" + std::to_string(g);
      EXPECT_EQ(value(*p, v, "nvml:utilization_gpu" + gpu), 87) << gpu;
      EXPECT_EQ(value(*p, v, "nvml:nvlink_crc_data_error_count_l17" + gpu), 1704) << gpu;
      EXPECT_TRUE(find(*p, "nvml:nvlink_rx_bytes_l17" + gpu)) << gpu;
      EXPECT_TRUE(find(*p, "nvml:gpm_sm_util" + gpu)) << gpu;
    }
    EXPECT_FALSE(find(*p, "nvml:nvlink_tx_bytes_l0.gpu1"));  // board B: no NVLink
    EXPECT_NE(info(*p, "nvml:clocks_sm.gpu7").help.find("GPU-77777777"), std::string::npos);
  }
  ::unsetenv("REVEAL_NVML_DOUBLE_GPUS");
  ::unsetenv("REVEAL_NVML_DOUBLE_NVLINKS");
  auto two = opened();  // the default script again
  EXPECT_LT(two->channels().size(), n / 3);
  EXPECT_FALSE(find(*two, "nvml:utilization_gpu.gpu2"));
  EXPECT_FALSE(find(*two, "nvml:nvlink_tx_bytes_l4.gpu0"));
}

TEST_F(NvmlProbeTest, ThrottleBitmaskDecodedOneChannelPerReason) {
  auto p = opened();
  const auto v = sample(*p);
  // gpu0: 0x144 = sw_power_cap | hw_thermal_slowdown | display_clock_setting; gpu1: 0x1 = idle.
  const std::vector<std::pair<std::string, std::pair<double, double>>> want{
      {"gpu_idle", {0, 1}},           {"applications_clocks_setting", {0, 0}},
      {"sw_power_cap", {1, 0}},       {"hw_slowdown", {0, 0}},
      {"sync_boost", {0, 0}},         {"sw_thermal_slowdown", {0, 0}},
      {"hw_thermal_slowdown", {1, 0}}, {"hw_power_brake_slowdown", {0, 0}},
      {"display_clock_setting", {1, 0}}};
  for (const auto& [reason, vals] : want) {
    const std::string n = "nvml:clocks_throttle_reasons_" + reason;
    EXPECT_EQ(value(*p, v, n + ".gpu0"), vals.first) << reason;
    EXPECT_EQ(value(*p, v, n + ".gpu1"), vals.second) << reason;
    EXPECT_EQ(info(*p, n + ".gpu0").kind, Kind::state);
    EXPECT_EQ(info(*p, n + ".gpu0").subsystem, Subsystem::power_thermal);
  }
}

TEST_F(NvmlProbeTest, PcieByteCountersWhereSupportedThroughputElsewhere) {
  auto p = opened();
  // gpu0 has the cumulative counters: no 20 ms throughput calls for it.
  EXPECT_FALSE(find(*p, "nvml:pcie_tx_throughput.gpu0"));
  const auto& c = info(*p, "nvml:pcie_tx_bytes.gpu0");
  EXPECT_EQ(c.unit, "bytes");
  EXPECT_EQ(c.kind, Kind::counter);
  EXPECT_EQ(c.subsystem, Subsystem::interconnect);
  EXPECT_EQ(c.counter_bits, 32);  // NVML gave UNSIGNED_INT: rates unwrap at 2^32
  EXPECT_EQ(info(*p, "nvml:pcie_rx_bytes.gpu0").counter_bits, 32);
  const auto a = sample(*p);
  const auto b = sample(*p);
  // Discovery reads each twice (support check, first read); these are reads 3 and 4
  // (TX: 4294967000 + 1000 k, mod 2^32).
  EXPECT_EQ(value(*p, a, "nvml:pcie_tx_bytes.gpu0"), double((4294967000ull + 3000) % 4294967296ull));
  EXPECT_EQ(value(*p, b, "nvml:pcie_rx_bytes.gpu0") - value(*p, a, "nvml:pcie_rx_bytes.gpu0"), 3000.0);
  // gpu1 answers NOT_SUPPORTED for the counters: the throughput sample, KB/s -> bytes/s.
  EXPECT_FALSE(find(*p, "nvml:pcie_tx_bytes.gpu1"));
  EXPECT_EQ(value(*p, a, "nvml:pcie_tx_throughput.gpu1"), 3.0 * 1024);
  EXPECT_EQ(value(*p, a, "nvml:pcie_rx_throughput.gpu1"), 7.0 * 1024);
  const auto& t = info(*p, "nvml:pcie_rx_throughput.gpu1");
  EXPECT_EQ(t.unit, "bytes/s");
  EXPECT_EQ(t.kind, Kind::gauge);
  EXPECT_EQ(t.subsystem, Subsystem::interconnect);
}

TEST_F(NvmlProbeTest, UnsupportedFieldsAreAbsentPerGpu) {
  auto p = opened();
  std::size_t links0 = 0, links1 = 0;
  for (const auto& c : p->channels()) {
    if (c.name.find("nvml:nvlink_") != 0) continue;
    (c.name.ends_with(".gpu0") ? links0 : links1)++;
  }
  EXPECT_EQ(links0, 4u * 6u);  // links 0-3 active: four error counters, tx and rx bytes each
  EXPECT_EQ(links1, 0u);       // gpu1: NVLink NOT_SUPPORTED
  EXPECT_FALSE(find(*p, "nvml:nvlink_replay_error_count_l4.gpu0"));
  EXPECT_FALSE(find(*p, "nvml:fan_speed.gpu0"));  // NOT_SUPPORTED on gpu0 only
  EXPECT_TRUE(find(*p, "nvml:fan_speed.gpu1"));
  EXPECT_TRUE(find(*p, "nvml:gpm_sm_util.gpu0"));  // GPM on gpu0 only
  EXPECT_FALSE(find(*p, "nvml:gpm_sm_util.gpu1"));
}

TEST_F(NvmlProbeTest, NvlinkDataCountersPerLinkInBytes) {
  auto p = opened();
  const auto a = sample(*p);
  const auto b = sample(*p);
  // The double adds (L+1)*1000 KiB sent and (L+1)*2000 KiB received per read of link L.
  EXPECT_DOUBLE_EQ(value(*p, b, "nvml:nvlink_tx_bytes_l0.gpu0") - value(*p, a, "nvml:nvlink_tx_bytes_l0.gpu0"),
                   1000.0 * 1024);
  EXPECT_DOUBLE_EQ(value(*p, b, "nvml:nvlink_rx_bytes_l3.gpu0") - value(*p, a, "nvml:nvlink_rx_bytes_l3.gpu0"),
                   4 * 2000.0 * 1024);
  EXPECT_GT(value(*p, a, "nvml:nvlink_tx_bytes_l2.gpu0"), 0);
  const auto& tx = info(*p, "nvml:nvlink_tx_bytes_l1.gpu0");
  EXPECT_EQ(tx.unit, "bytes");
  EXPECT_EQ(tx.kind, Kind::counter);
  EXPECT_EQ(tx.subsystem, Subsystem::interconnect);
  EXPECT_FALSE(find(*p, "nvml:nvlink_tx_bytes_l4.gpu0"));  // link 4 inactive
  EXPECT_FALSE(find(*p, "nvml:nvlink_tx_bytes_l0.gpu1"));  // no NVLink
}

TEST_F(NvmlProbeTest, GpmMetricsBetweenConsecutiveTicks) {
  {
    auto p = opened();
    EXPECT_EQ(d().gpm_samples_in_use(), 2);
    for (int tick = 0; tick < 3; ++tick) {  // the double rejects equal or reversed samples
      const auto v = sample(*p);
      EXPECT_EQ(value(*p, v, "nvml:gpm_sm_util.gpu0"), 71.5);
      EXPECT_EQ(value(*p, v, "nvml:gpm_sm_occupancy.gpu0"), 33.25);
      EXPECT_EQ(value(*p, v, "nvml:gpm_any_tensor_util.gpu0"), 12.5);
      EXPECT_EQ(value(*p, v, "nvml:gpm_dram_bw_util.gpu0"), 48.0);
    }
    EXPECT_EQ(info(*p, "nvml:gpm_dram_bw_util.gpu0").unit, "%");
  }
  EXPECT_EQ(d().gpm_samples_in_use(), 0);  // freed by the destructor
}

TEST_F(NvmlProbeTest, LostGpuTurnsNaNWhileItsSiblingKeepsValues) {
  auto p = opened();
  d().set_lost_after(1, 2);  // gpu1 answers two more samples, then GPU_IS_LOST
  std::vector<Event> events;
  for (int tick = 1; tick <= 2; ++tick) {
    const auto v = sample(*p);
    EXPECT_TRUE(all_finite(v)) << tick;
    p->poll_events(tick, events);
  }
  EXPECT_TRUE(events.empty());
  const auto before = sample(*p);  // tick 3: lost
  for (int tick = 3; tick <= 5; ++tick) {
    const auto v = tick == 3 ? before : sample(*p);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto& name = p->channels()[i].name;
      if (name.ends_with(".gpu0")) {
        EXPECT_TRUE(std::isfinite(v[i])) << name;
      } else if (name == "nvml:xid_events_total.gpu1") {
        EXPECT_EQ(v[i], 0) << name;  // our own count stays readable
      } else {
        EXPECT_TRUE(std::isnan(v[i])) << name << " tick " << tick;
      }
    }
    EXPECT_EQ(value(*p, v, "nvml:utilization_gpu.gpu0"), 87);
    EXPECT_EQ(value(*p, v, "nvml:gpm_sm_util.gpu0"), 71.5);
    p->poll_events(100 + tick, events);
  }
  ASSERT_EQ(events.size(), 1u);  // reported once
  EXPECT_EQ(events[0].source, "nvml");
  EXPECT_EQ(events[0].kind, "gpu_lost");
  EXPECT_EQ(events[0].value, 1);
  EXPECT_EQ(events[0].t_unix_ns, 103);
  EXPECT_EQ(events[0].detail, "gpu1 lost: GPU is lost");
}

TEST_F(NvmlProbeTest, XidEventsAllKeptAndCounted) {
  d().add_xid(1, 79, 3);  // poll 3: XID 79 on gpu1
  d().add_xid(1, 13, 5);  // poll 5: two XIDs on gpu1, one on gpu0
  d().add_xid(1, 31, 5);
  d().add_xid(0, 48, 5);
  auto p = opened();
  std::vector<Event> events;
  std::vector<double> v;
  for (int poll = 1; poll <= 2; ++poll) {
    v = sample(*p);
    p->poll_events(poll, events);
  }
  EXPECT_TRUE(events.empty());
  v = sample(*p);
  p->poll_events(3, events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].t_unix_ns, 3);
  EXPECT_EQ(events[0].source, "nvml");
  EXPECT_EQ(events[0].kind, "xid");
  EXPECT_EQ(events[0].value, 79);
  EXPECT_EQ(events[0].detail, "gpu1 XID 79");
  v = sample(*p);  // the counter shows what the previous poll drained
  EXPECT_EQ(value(*p, v, "nvml:xid_events_total.gpu1"), 1);
  EXPECT_EQ(value(*p, v, "nvml:xid_events_total.gpu0"), 0);
  p->poll_events(4, events);
  EXPECT_EQ(events.size(), 1u);
  v = sample(*p);
  p->poll_events(5, events);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1].detail, "gpu1 XID 13");
  EXPECT_EQ(events[2].detail, "gpu1 XID 31");
  EXPECT_EQ(events[3].detail, "gpu0 XID 48");
  EXPECT_EQ(events[3].value, 48);
  v = sample(*p);
  EXPECT_EQ(value(*p, v, "nvml:xid_events_total.gpu1"), 3);
  EXPECT_EQ(value(*p, v, "nvml:xid_events_total.gpu0"), 1);
}

TEST_F(NvmlProbeTest, ShutdownInDestructor) {
  const int before = d().init_refcount();  // the config source's cached session may hold one
  {
    auto p = opened();
    EXPECT_EQ(d().init_refcount(), before + 1);
  }
  EXPECT_EQ(d().init_refcount(), before);
}

TEST_F(NvmlProbeTest, InitFailureGivesNvmlErrorString) {
  const int before = d().init_refcount();  // the config source's cached session may hold one
  d().set_init_result(9);                  // NVML_ERROR_DRIVER_NOT_LOADED
  NvmlProbe p(REVEAL_NVML_DOUBLE_PATH);
  const auto st = p.open("/");
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "NVML: nvmlInit_v2 failed: Driver Not Loaded");
  EXPECT_TRUE(p.channels().empty());
  EXPECT_EQ(d().init_refcount(), before);
}

TEST_F(NvmlProbeTest, MissingOptionalSymbolsOnlyDropTheirChannels) {
  NvmlProbe p(REVEAL_NVML_DOUBLE_MINIMAL_PATH);
  const auto st = p.open("/");
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p), (std::vector<std::string>{
                          "nvml:utilization_gpu.gpu0", "nvml:utilization_memory.gpu0",
                          "nvml:memory_used.gpu0", "nvml:memory_free.gpu0", "nvml:memory_total.gpu0",
                          "nvml:utilization_gpu.gpu1", "nvml:utilization_memory.gpu1",
                          "nvml:memory_used.gpu1", "nvml:memory_free.gpu1", "nvml:memory_total.gpu1"}));
  const auto v = sample(p);
  EXPECT_EQ(value(p, v, "nvml:utilization_gpu.gpu1"), 5);
  std::vector<Event> events;
  p.poll_events(1, events);  // no event API: nothing, no crash
  EXPECT_TRUE(events.empty());
}

TEST(NvmlProbeUnavailable, LibraryNotFoundByDefault) {
  if (void* h = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(h);
    GTEST_SKIP() << "this host has NVML";
  }
  EnvGuard guard("REVEAL_NVML_LIBRARY");
  ::unsetenv("REVEAL_NVML_LIBRARY");
  NvmlProbe p;
  const auto st = p.open("/");
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "NVML: library not found (libnvidia-ml.so.1)");
  EXPECT_TRUE(p.channels().empty());
  std::vector<Event> events;
  p.poll_events(1, events);
  EXPECT_TRUE(events.empty());
}

TEST(NvmlProbeUnavailable, EnvironmentOverridesTheLibrary) {
  EnvGuard guard("REVEAL_NVML_LIBRARY");
  ::setenv("REVEAL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  NvmlProbe p;
  EXPECT_EQ(p.open("/").reason, "NVML: library not found (/nonexistent/libnvidia-ml.so.1)");
  ::setenv("REVEAL_NVML_LIBRARY", REVEAL_NVML_DOUBLE_PATH, 1);
  NvmlProbe q;
  EXPECT_TRUE(q.open("/").available);
}

TEST(NvmlProbeUnavailable, LibraryWithoutNvmlSymbolsNamesTheSymbol) {
  NvmlProbe p("libm.so.6");
  const auto st = p.open("/");
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "NVML: symbol nvmlInit_v2 not found in libm.so.6");
}

TEST(NvmlProbeUnavailable, RegisteredAndEnabled) {
  bool found = false;
  for (const auto& f : probe_registry())
    if (f.name == "nvml") {
      found = true;
      EXPECT_TRUE(f.enabled_by_default);
      EXPECT_EQ(f.make()->name(), "nvml");
    }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace reveal
