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
