#include "features/memory_fill.h"

#include <cmath>

#include <gtest/gtest.h>

namespace reveal::features {
namespace {

// MemAvailable falling 50 units per second from 10000 at 1 Hz: once three 5-s spans of the fall
// exist (t ≥ 15 s) the pace is 100 · 60 · 50 / MemAvailable(t) % per minute (32-38); before, 0.
TEST(MemoryFillPace, ASteadyFallReadsItsPaceOnceThreeSpansHoldIt) {
  MemoryFillPace p;
  for (int t = 0; t <= 40; ++t) {
    const double avail = 10000.0 - 50.0 * t;
    const double pace = p.push(double(t), avail);
    if (t < 15) {
      EXPECT_EQ(pace, 0.0) << t;
    } else {
      EXPECT_NEAR(pace, 300000.0 / avail, 1e-9) << t;  // 100 · 60 · 50 / avail
    }
  }
}

// A job filling its share of memory in a burst (3000 units within 2 s) then holding it: the
// burst lies in one span, the other spans are flat, so the pace stays 0 throughout.
TEST(MemoryFillPace, ABurstThatStopsIsNoPace) {
  MemoryFillPace p;
  for (int t = 0; t <= 60; ++t) {
    const double avail = t < 20 ? 10000.0 : t == 20 ? 8500.0 : 7000.0;
    EXPECT_EQ(p.push(double(t), avail), 0.0) << t;
  }
}

// Slower than "empty within 5 minutes" (kHorizonMin: 20 %/min) reads 0; faster reads its pace.
TEST(MemoryFillPace, APaceSlowerThanEmptyWithinFiveMinutesReadsZero) {
  MemoryFillPace slow, fast;
  double last_slow = -1, last_fast = -1;
  for (int t = 0; t <= 30; ++t) {
    // 15 %/min of 60000 is 150 units/s; 25 %/min is 250 units/s (of what is left: a bit more).
    last_slow = slow.push(double(t), 60000.0 - 150.0 * t);
    last_fast = fast.push(double(t), 60000.0 - 250.0 * t);
  }
  EXPECT_EQ(last_slow, 0.0) << "15.8 %/min";
  EXPECT_NEAR(last_fast, 1500000.0 / (60000.0 - 7500.0), 1e-9);
}

// At 10 Hz the ring (one kept sample per 0.25 s) still spans the 15 s: same pace as at 1 Hz.
TEST(MemoryFillPace, TenHertzSamplingGivesThePaceOfOneHertz) {
  MemoryFillPace p;
  double pace = 0;
  for (int i = 0; i <= 300; ++i) pace = p.push(0.1 * i, 10000.0 - 50.0 * (0.1 * i));
  EXPECT_NEAR(pace, 300000.0 / 8500.0, 1e-6);
}

// Samples further apart than half a span cannot tell the spans apart: 0, never a guess.
TEST(MemoryFillPace, SparseSamplesReadZero) {
  MemoryFillPace p;
  for (int t = 0; t <= 120; t += 10) EXPECT_EQ(p.push(double(t), 10000.0 - 50.0 * t), 0.0) << t;
}

// A NaN row reads NaN and is not remembered; a row whose time did not move forward is judged
// but not remembered; memory exhausted reads the cap, not infinity.
TEST(MemoryFillPace, NanTimeStandstillAndExhaustionAreBounded) {
  MemoryFillPace p;
  for (int t = 0; t < 15; ++t) p.push(double(t), 1000.0 - 10.0 * t);
  EXPECT_TRUE(std::isnan(p.push(15.0, std::nan(""))));
  EXPECT_TRUE(std::isnan(p.push(std::nan(""), 500.0)));
  EXPECT_NEAR(p.push(15.0, 850.0), 60000.0 / 850.0, 1e-9);
  // Same time again with a value far off: judged, not kept (the next row's spans ignore it).
  EXPECT_GT(p.push(15.0, 100.0), 0.0);
  EXPECT_NEAR(p.push(16.0, 840.0), 60000.0 / 840.0, 1e-9);
  EXPECT_EQ(p.push(17.0, 0.0), 6000.0);  // nothing left and still falling
}

}  // namespace
}  // namespace reveal::features
