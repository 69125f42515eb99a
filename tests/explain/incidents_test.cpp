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
