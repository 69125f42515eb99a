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

}  // namespace
}  // namespace reveal
