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
  // (2·0.8 + 1.5·0.5) / 3.5
  EXPECT_NEAR(inc.confidence, (2.0 * 0.8 + 1.5 * 0.5) / 3.5, 1e-9);
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

}  // namespace
}  // namespace reveal::explain
