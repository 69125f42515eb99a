#include <cmath>

#include <gtest/gtest.h>

#include "reveal/features.h"

namespace reveal {
namespace {

Recording make(std::vector<ChannelInfo> ch, std::vector<std::int64_t> t, std::vector<std::vector<double>> rows) {
  Recording r;
  r.channels = std::move(ch);
  r.t_unix_ns = std::move(t);
  for (auto& row : rows) r.values.append_row(row);
  return r;
}

ChannelInfo counter(std::string name, int bits = 64) {
  ChannelInfo c{name, "bytes", Kind::counter, Subsystem::network};
  c.counter_bits = static_cast<std::uint8_t>(bits);
  return c;
}

TEST(Rates, CounterBecomesPerSecondAndGaugeIsCopied) {
  auto rec = make({counter("a"), {"g", "%", Kind::gauge, Subsystem::cpu}},
                  {0, 1'000'000'000, 3'000'000'000}, {{100, 5}, {300, 6}, {700, 7}});
  Series s = to_rates(rec);
  EXPECT_TRUE(std::isnan(s.values(0, 0)));
  EXPECT_DOUBLE_EQ(s.values(1, 0), 200.0);
  EXPECT_DOUBLE_EQ(s.values(2, 0), 200.0);  // 400 over 2 s
  EXPECT_EQ(s.channels[0].unit, "bytes/s");
  EXPECT_EQ(s.channels[0].kind, Kind::gauge);
  EXPECT_DOUBLE_EQ(s.values(2, 1), 7.0);
  EXPECT_DOUBLE_EQ(s.t_s[2], 3.0);
}

TEST(Rates, ResetIsAGapNeverNegative) {
  auto rec = make({counter("a")}, {0, 1'000'000'000, 2'000'000'000, 3'000'000'000}, {{1000}, {1100}, {50}, {150}});
  Series s = to_rates(rec);
  EXPECT_DOUBLE_EQ(s.values(1, 0), 100.0);
  EXPECT_TRUE(std::isnan(s.values(2, 0)));
  EXPECT_DOUBLE_EQ(s.values(3, 0), 100.0);
}

TEST(Rates, ThirtyTwoBitWrapIsUnwrapped) {
  const double max32 = 4294967295.0;
  auto rec = make({counter("a", 32)}, {0, 1'000'000'000}, {{max32 - 9}, {20}});
  Series s = to_rates(rec);
  EXPECT_DOUBLE_EQ(s.values(1, 0), 30.0);
}

// A restart of the recorder between two samples (an agent continuing its store, maybe after a
// reboot): no rate spans it, even where a narrow counter's reset would pass for a wrap.
TEST(Rates, NoRateSpansARestartOfTheRecorder) {
  const double max32 = 4294967295.0;
  auto rec = make({counter("a", 32), {"g", "%", Kind::gauge, Subsystem::cpu}},
                  {0, 1'000'000'000, 60'000'000'000, 61'000'000'000},
                  {{max32 - 1000, 1}, {max32 - 900, 2}, {50, 3}, {150, 4}});
  rec.events = {{59'000'000'000, "agent", "agent_restart", 58.0, "continuing the store"},
                {30'000'000'000, "config", "config_change", 0, "not a restart"}};
  Series s = to_rates(rec);
  EXPECT_DOUBLE_EQ(s.values(1, 0), 100.0);
  EXPECT_TRUE(std::isnan(s.values(2, 0)));  // not (max32 - 900 → 50) taken for a wrap
  EXPECT_DOUBLE_EQ(s.values(2, 1), 3.0);    // gauges as read
  EXPECT_DOUBLE_EQ(s.values(3, 0), 100.0);
  rec.events.pop_back();
  rec.events[0].kind = "incident_opened";   // other agent events change nothing
  EXPECT_DOUBLE_EQ(to_rates(rec).values(2, 0), (50 + 900 + 1) / 59.0);
}

TEST(Rates, WrapRangeCounterIsUnwrapped) {
  ChannelInfo c = counter("energy_uj");
  c.wrap_range = 262143328850.0;  // a RAPL max_energy_range_uj
  auto rec = make({c}, {0, 1'000'000'000, 2'000'000'000}, {{262143328000.0}, {1150.0}, {100.0}});
  Series s = to_rates(rec);
  EXPECT_NEAR(s.values(1, 0), 2000.0, 1e-3);
  EXPECT_TRUE(std::isnan(s.values(2, 0)));  // a drop of 1050 from 1150 is not a wrap
}

TEST(Rates, NaNAndNonIncreasingTimeGiveGaps) {
  auto rec = make({counter("a")}, {0, 1'000'000'000, 1'000'000'000, 2'000'000'000},
                  {{1}, {std::nan("")}, {5}, {9}});
  Series s = to_rates(rec);
  EXPECT_TRUE(std::isnan(s.values(1, 0)));
  EXPECT_TRUE(std::isnan(s.values(2, 0)));  // Δt = 0
  EXPECT_DOUBLE_EQ(s.values(3, 0), 4.0);
}

}  // namespace
}  // namespace reveal
