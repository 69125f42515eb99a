#include <gtest/gtest.h>

#include "reveal/incident.h"

namespace reveal {
namespace {

std::vector<std::pair<std::size_t, std::size_t>> run(const std::string& flags, IncidentRule rule) {
  std::unique_ptr<bool[]> a(new bool[flags.size()]);
  for (std::size_t i = 0; i < flags.size(); ++i) a[i] = flags[i] == 'x';
  return find_incidents(std::span<const bool>(a.get(), flags.size()), rule);
}

TEST(Incidents, OpensAfterKAndClosesAfterM) {
  using P = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(run("..xx..xxx...", {3, 3}), (std::vector<P>{{6, 8}}));
  EXPECT_EQ(run("xxx.xxx", {3, 3}), (std::vector<P>{{0, 6}}));          // short gap merged
  EXPECT_EQ(run("xxx...xxx", {3, 3}), (std::vector<P>{{0, 2}, {6, 8}}));  // m normal windows split
  EXPECT_EQ(run("x.x.x.x", {2, 2}), (std::vector<P>{}));
  EXPECT_EQ(run("xxxxx", {1, 1}), (std::vector<P>{{0, 4}}));             // open at end
  EXPECT_EQ(run("", {3, 3}), (std::vector<P>{}));
}

TEST(Incidents, DefaultRuleOpensOnTheSecondWindow) {
  using P = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(run("..x....", {}), (std::vector<P>{}));        // one window (a 3-sample blip): none
  EXPECT_EQ(run("..xx......", {}), (std::vector<P>{{2, 3}}));
  IncidentTracker t({});
  EXPECT_EQ(t.push(0, true), IncidentTracker::Change::none);
  EXPECT_EQ(t.push(1, true), IncidentTracker::Change::opened);  // one stride after the first
}

// 'u': anomalous but not sustained (Isolation Forest only).
std::vector<std::pair<std::size_t, std::size_t>> run_sus(const std::string& flags, IncidentRule rule) {
  std::unique_ptr<bool[]> a(new bool[flags.size()]), s(new bool[flags.size()]);
  for (std::size_t i = 0; i < flags.size(); ++i) {
    a[i] = flags[i] == 'x' || flags[i] == 'u';
    s[i] = flags[i] == 'x';
  }
  return find_incidents(std::span<const bool>(a.get(), flags.size()), rule,
                        std::span<const bool>(s.get(), flags.size()));
}

TEST(Incidents, UnsustainedWindowsNeedOneMore) {
  using P = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(run_sus("..ux......", {}), (std::vector<P>{{2, 3}}));  // the 2nd is sustained
  EXPECT_EQ(run_sus("..xu......", {}), (std::vector<P>{}));        // the 2nd is not, and no 3rd
  EXPECT_EQ(run_sus("..uuu.....", {}), (std::vector<P>{{2, 4}}));  // three windows do
  EXPECT_EQ(run_sus("..uuxx....", {}), (std::vector<P>{{2, 5}}));
  IncidentTracker t({});
  EXPECT_EQ(t.push(0, true, false), IncidentTracker::Change::none);
  EXPECT_EQ(t.push(1, true, false), IncidentTracker::Change::none);
  EXPECT_EQ(t.push(2, true, false), IncidentTracker::Change::opened);
  EXPECT_EQ(t.first(), 0u);
}

TEST(Incidents, SettleWindowsOpenNothingThatEndsInside) {
  using P = std::pair<std::size_t, std::size_t>;
  IncidentRule r{2, 3, 5};
  EXPECT_EQ(run("xxxx......", r), (std::vector<P>{}));               // start-up transient
  EXPECT_EQ(run("xxxxxxx...", r), (std::vector<P>{{0, 6}}));         // outlasts it: from its start
  EXPECT_EQ(run("....xx....", r), (std::vector<P>{{4, 5}}));         // k reached on window 5
  EXPECT_EQ(run("...xx.....", r), (std::vector<P>{}));               // ends at window 4
  IncidentTracker t(r);
  for (std::size_t w = 0; w < 5; ++w) EXPECT_EQ(t.push(w, true), IncidentTracker::Change::none) << w;
  EXPECT_EQ(t.push(5, true), IncidentTracker::Change::opened);
  EXPECT_EQ(t.first(), 0u);
}

TEST(Actions, NamesChannelAndSubsystemAdvice) {
  ChannelEvidence ev{"derived:psi_cpu_some_pct", "%", Subsystem::cpu, 90, 2, 40};
  const std::string a = suggest_action(Subsystem::cpu, ev);
  EXPECT_NE(a.find("derived:psi_cpu_some_pct"), std::string::npos);
  EXPECT_NE(a.find("CPU"), std::string::npos);
}

TEST(Incidents, ChannelLabelIsWhatFollowsTheField) {
  EXPECT_EQ(channel_label("nvml:power_usage.gpu0"), "gpu0");
  EXPECT_EQ(channel_label("rdma:port_rcv_data.mlx5_0.1"), "mlx5_0.1");
  EXPECT_EQ(channel_label("derived:cpu_busy_pct.cpu15"), "cpu15");
  EXPECT_EQ(channel_label("derived:cpu_busy_pct"), "");
  EXPECT_EQ(channel_label("proc.stat:ctxt"), "");         // the dot in the source is not a label
  EXPECT_EQ(channel_label("derived.test:cpu_busy"), "");
}

}  // namespace
}  // namespace reveal
