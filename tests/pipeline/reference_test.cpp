// channel_floors (src/pipeline/reference.h): the smallest deviation worth a robust SD.
#include "pipeline/reference.h"

#include <gtest/gtest.h>

#include <cmath>

#include "reveal/channel.h"

namespace reveal::pipeline {
namespace {

// The sampler's lateness is floored at a tenth of the sampling interval (the samples' median
// spacing): scheduling noise of a few milliseconds must not be a hundred robust SDs. Other
// channels in seconds keep the unit's floor.
TEST(ChannelFloors, TheSamplersLatenessIsFlooredByTheInterval) {
  Series s;
  s.channels = {{"reveal.sampler:delay_seconds", "s", Kind::gauge, Subsystem::cpu},
                {"reveal.sampler:ticks_missed", "count/s", Kind::counter, Subsystem::cpu},
                {"other:latency", "s", Kind::gauge, Subsystem::system},
                {"proc.stat:processes", "count/s", Kind::counter, Subsystem::cpu}};
  s.values = Matrix(0, 4);
  for (int i = 0; i < 20; ++i) {
    const double row[] = {0.001, 0, 0.2, 5};
    s.values.append_row(row);
    s.t_s.push_back(0.5 * i + (i == 7 ? 3.0 : 0.0) + (i > 7 ? 3.0 : 0.0));  // one 3.5 s gap: the median stays 0.5 s
  }
  const std::vector<double> f = channel_floors(s, {0, 1, 2, 3});
  EXPECT_DOUBLE_EQ(f[0], 0.05);  // 0.1 × 0.5 s
  EXPECT_DOUBLE_EQ(f[1], 0.2);   // 0.1 / 0.5 s: a tenth of the ticks
  EXPECT_DOUBLE_EQ(f[2], 1e-9);  // "s" in general: the unit's resolution
  EXPECT_DOUBLE_EQ(f[3], 1.0);   // count/s
}

// Drops through drop_caches: one in the last 20 s (3/min) is thirty robust SDs, while a count/s channel
// keeps its unit's floor of 1; the count is scored while flat at 0.
TEST(ChannelFloors, ADropOfTheCachesIsNews) {
  Series s;
  s.channels = {{"derived:drop_caches_per_min", "count/min", Kind::gauge, Subsystem::memory},
                {"proc.vmstat:pgmajfault", "count/s", Kind::gauge, Subsystem::memory}};
  s.values = Matrix(0, 2);
  for (int i = 0; i < 20; ++i) {
    const double row[] = {0, 3};
    s.values.append_row(row);
    s.t_s.push_back(i);
  }
  EXPECT_EQ(scored_columns(s), (std::vector<int>{0})) << "flat when healthy: scored while 0";
  const std::vector<double> f = channel_floors(s, {0, 1});
  EXPECT_DOUBLE_EQ(f[0], 0.1);
  EXPECT_DOUBLE_EQ(f[1], 1.0);
  EXPECT_GE(1.0 / f[0], 6.0) << "one drop reaches the symptom's z (kSymptomZ)";
}

// The streaming detector also scores failure counters that stayed at 0 through its history
// (a link that starts dropping is news because it never did); varying_columns (self mode
// offline, where the fault is in the run) keeps only what varies.
TEST(ScoredColumns, FlatFailureCountersAreScoredFlatLoadIsNot) {
  Series s;
  s.channels = {{"tc.qdisc:overlimits", "count/s", Kind::gauge, Subsystem::network},
                {"sys.net:rx_crc_errors.eth0", "count/s", Kind::gauge, Subsystem::network},
                {"proc.net.dev:tx_bytes.eth0", "bytes/s", Kind::gauge, Subsystem::network},
                {"derived:psi_cpu_some_pct", "%", Kind::gauge, Subsystem::cpu},
                {"proc.pressure:io_some_total", "us/s", Kind::gauge, Subsystem::storage},
                {"derived:cpu_busy_pct", "%", Kind::gauge, Subsystem::cpu},
                {"tc.qdisc:drops", "packets/s", Kind::gauge, Subsystem::network}};
  s.values = Matrix(0, 7);
  for (int i = 0; i < 20; ++i) {
    const double row[] = {0, 0, 1000, 0, 0, 10.0 + i, i < 15 ? NAN : 0.0};  // drops: mostly missing
    s.values.append_row(row);
    s.t_s.push_back(i);
  }
  EXPECT_EQ(varying_columns(s), (std::vector<int>{5}));
  EXPECT_EQ(scored_columns(s), (std::vector<int>{0, 1, 5}));
  EXPECT_TRUE(flat_when_healthy("derived:mem_fill_pct_per_min", "%/min")) << "memory being used up";
  EXPECT_TRUE(flat_when_healthy("tc.qdisc:overlimits", "count/s"));
  EXPECT_FALSE(flat_when_healthy("derived:mem_used_pct", "%"));
  EXPECT_TRUE(failure_counter("proc.net.snmp:TcpExt_TCPTimeouts", "count/s"));
  EXPECT_FALSE(failure_counter("tc.qdisc:overlimits", "count")) << "a raw counter, not its rate";
  EXPECT_FALSE(failure_counter("tc.qdisc:backlog", "bytes/s")) << "a level";
  EXPECT_FALSE(failure_counter("proc.vmstat:pgmajfault", "count/s")) << "paging: a new job's start shows it";
  EXPECT_FALSE(failure_counter("proc.stat:processes", "count/s"));
  EXPECT_FALSE(failure_counter("derived:cpu_steal_pct", "%"));
}

}  // namespace
}  // namespace reveal::pipeline
