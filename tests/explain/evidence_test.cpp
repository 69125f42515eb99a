// IncidentEvidence (src/explain/evidence.h): what an incident is attributed from, window by window.
#include "explain/evidence.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "../alloc_count.h"

namespace reveal::explain {
namespace {

constexpr double kNaN = __builtin_nan("");

struct Feed {
  IncidentEvidence ev;
  std::vector<double> z{0, 0}, forest{0, 0}, pca{0, 0};
  void add(bool anomalous, double fused, std::array<double, 3> level, double z0, double f0 = 0.5) {
    z = {z0, -z0};
    forest = {f0, 1 - f0};
    pca = {1 - f0, f0};
    ev.add(anomalous, fused, level, z, forest, pca);
  }
};

// Anomalous, then a gap of two normal windows the incident bridges, anomalous again, then the
// normal windows that close it: the gap's levels count, the closing windows' do not, and only
// anomalous windows enter the means.
TEST(IncidentEvidence, GapWindowsCountTowardPeaksOnlyOnceAnAnomalousWindowFollows) {
  Feed f;
  f.ev.start(2, true);
  f.add(true, 1.5, {1.5, 0.2, kNaN}, 8.0, 0.8);
  f.add(false, 0.9, {0.3, 0.9, 2.5}, 100.0);  // gap: pca_spe (not fused) at 2.5
  f.add(false, 0.4, {0.4, 0.1, 0.1}, 100.0);
  // Before the incident is extended the gap is pending: peaks are the anomalous window's.
  EXPECT_EQ(f.ev.detectors().peak_level[2], 0.0);
  EXPECT_EQ(f.ev.detectors().peak_level[1], 0.2);
  f.add(true, 1.2, {1.2, 0.5, 0.3}, 4.0, 0.6);
  f.add(false, 0.95, {0.1, 0.95, 7.0}, 100.0);  // after the last anomalous window: not part of it
  f.add(false, 0.2, {0.1, 0.1, 0.1}, 100.0);
  const DetectorEvidence d = f.ev.detectors();
  EXPECT_EQ(d.peak_level[0], 1.5);
  EXPECT_EQ(d.peak_level[1], 0.9);  // from the gap
  EXPECT_EQ(d.peak_level[2], 2.5);  // from the gap, not the trailing 7.0
  EXPECT_EQ(f.ev.peak_score(), 1.5);
  EXPECT_EQ(f.ev.anomalous_windows(), 2u);
  const auto zbar = f.ev.zbar();
  EXPECT_DOUBLE_EQ(zbar[0], 6.0);  // (8 + 4) / 2: normal windows' z never enter
  EXPECT_DOUBLE_EQ(zbar[1], -6.0);
  ASSERT_EQ(d.iforest.size(), 2u);
  EXPECT_DOUBLE_EQ(d.iforest[0], 0.7);
  ASSERT_EQ(d.pca_spe.size(), 2u);
  EXPECT_DOUBLE_EQ(d.pca_spe[0], 0.3);
}

TEST(IncidentEvidence, WithoutPcaThereAreNoPcaShares) {
  Feed f;
  f.ev.start(2, false);
  f.add(true, 2.0, {2.0, 1.0, kNaN}, 5.0);
  EXPECT_TRUE(f.ev.detectors().pca_spe.empty());
  // start() forgets the previous incident.
  f.ev.start(2, true);
  EXPECT_EQ(f.ev.anomalous_windows(), 0u);
  EXPECT_EQ(f.ev.peak_score(), 0.0);
  EXPECT_EQ(f.ev.zbar()[0], 0.0);
}

// The streaming detector feeds every window of an open incident: add() is on its per-sample path.
TEST(IncidentEvidence, AddAllocatesNothing) {
  Feed f;
  f.ev.start(2, true);
  const std::array<double, 3> level{1.0, 0.5, 0.2};
  f.ev.add(true, 1.0, level, f.z, f.forest, f.pca);
  reveal::testing::start_counting_allocations();
  for (int i = 0; i < 100; ++i) f.ev.add(i % 3 == 0, 0.5 + i % 3, level, f.z, f.forest, f.pca);
  EXPECT_EQ(reveal::testing::stop_counting_allocations(), 0);
}

TEST(ChannelMeans, SkipNonFiniteValuesAndGiveNaNWithoutAny) {
  const std::vector<std::vector<double>> rows{{1, kNaN, 5}, {3, kNaN, 7}, {kNaN, kNaN, 9}};
  std::vector<double> out;
  channel_means(0, 3, {2, 0, 1}, [&](std::uint64_t r) { return std::span<const double>(rows[r]); }, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_DOUBLE_EQ(out[0], 7.0);
  EXPECT_DOUBLE_EQ(out[1], 2.0);
  EXPECT_TRUE(std::isnan(out[2]));
}

}  // namespace
}  // namespace reveal::explain
