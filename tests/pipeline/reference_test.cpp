// channel_floors (src/pipeline/reference.h): the smallest deviation worth a robust SD.
#include "pipeline/reference.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace reveal::pipeline
