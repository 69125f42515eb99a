// Sampler health accounting: per-probe duration, missing values and errors; a probe that
// throws or loses its source costs its own channels only.
#include "reveal/sampler.h"

#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

namespace reveal {
namespace {

// A probe whose behaviour the test switches: ok, half missing, all missing, throwing.
class ScriptedProbe : public Probe {
 public:
  enum class Mode { ok, half, none, throws };
  ScriptedProbe(std::string name, Mode* mode) : name_(std::move(name)), mode_(mode) {
    for (int i = 0; i < 4; ++i) chans_.push_back({name_ + ":v.c" + std::to_string(i), "count", Kind::gauge, Subsystem::system});
  }
  std::string_view name() const override { return name_; }
  std::string_view description() const override { return "test"; }
  ProbeStatus open(const std::filesystem::path&) override { return {true, ""}; }
  const std::vector<ChannelInfo>& channels() const override { return chans_; }
  void sample(std::span<double> out) override {
    switch (*mode_) {
      case Mode::ok: for (double& v : out) v = 1; break;
      case Mode::half: for (std::size_t i = 0; i < out.size(); ++i) out[i] = i % 2 ? std::nan("") : 2.0; break;
      case Mode::none: for (double& v : out) v = std::nan(""); break;
      case Mode::throws: out[0] = 9; throw std::runtime_error("device vanished");
    }
  }

 private:
  std::string name_;
  Mode* mode_;
  std::vector<ChannelInfo> chans_;
};

TEST(Sampler, ProbeFaultsAreCountedAndCostOnlyTheirOwnChannels) {
  ScriptedProbe::Mode a = ScriptedProbe::Mode::ok, b = ScriptedProbe::Mode::ok;
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<ScriptedProbe>("pa", &a));
  probes.push_back(std::make_unique<ScriptedProbe>("pb", &b));
  Sampler s(std::move(probes), "/");
  ASSERT_EQ(s.probe_stats().size(), 2u);
  EXPECT_EQ(s.probe_stats()[0].name, "pa");
  EXPECT_EQ(s.probe_stats()[1].channels, 4u);

  s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].missing, 0u);
  EXPECT_EQ(s.probe_stats()[1].errors, 0u);
  EXPECT_GE(s.probe_stats()[1].last_duration_ns, 0);

  b = ScriptedProbe::Mode::half;
  s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].missing, 2u);
  EXPECT_EQ(s.probe_stats()[1].errors, 0u);

  b = ScriptedProbe::Mode::none;
  s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].missing, 4u);
  EXPECT_EQ(s.probe_stats()[1].errors, 1u);

  b = ScriptedProbe::Mode::throws;
  auto row = s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].errors, 2u);
  EXPECT_EQ(s.probe_stats()[1].missing, 4u);
  for (std::size_t i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(row[i])) << i;  // no half-written value
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(row[i], 1.0) << i;          // the sibling is untouched
  EXPECT_EQ(s.probe_stats()[0].errors, 0u);

  b = ScriptedProbe::Mode::ok;
  s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].missing, 0u);
  EXPECT_EQ(s.probe_stats()[1].errors, 2u);  // a running total
}

}  // namespace
}  // namespace reveal
