// The agent's snapshot of open absences (src/agent/snapshot.h, update_snapshot): while the same
// absences stay open only their end and action move, in place, so what the agent added to its
// copies (the pods on their GPUs) stays and an open absence costs no copy of the incident.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "agent/snapshot.h"
#include "reveal/absence_tracker.h"
#include "reveal/agent.h"
#include "reveal/agent_config.h"
#include "reveal/streaming.h"

namespace reveal::agent {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kT0 = std::int64_t(1'800'000'000) * kSecond;

TEST(UpdateSnapshot, AnOpenAbsenceKeepsWhatTheAgentAddedWhileItsEndMoves) {
  const std::vector<ChannelInfo> channels{{"nvml:gpu.0.power_w", "W", Kind::gauge, Subsystem::gpu},
                                          {"nvml:gpu.0.temp_c", "C", Kind::gauge, Subsystem::gpu},
                                          {"proc.stat:cpu_busy_pct", "%", Kind::gauge, Subsystem::cpu}};
  RunMetadata meta;
  meta.cores = 2;
  StreamingDetector detector(meta, channels, StreamingOptions{});
  AbsenceTracker absences(channels, 3, 1.0, 5);
  AgentSnapshot s;
  init_snapshot(s, meta, channels, AgentConfig{}, false, absences);
  const GpuPod pod{0, "gpu0", "GPU-1", "ml", "trainer-0", "worker", "nvidia.com/gpu"};
  std::uint64_t n = 0;
  const auto push = [&](std::int64_t t_s, bool gpu_there) {
    const double nan = std::nan("");
    const std::vector<double> row{gpu_there ? 300.0 : nan, gpu_there ? 60.0 : nan, 50.0};
    const std::int64_t t = kT0 + t_s * kSecond;
    const AbsenceUpdate& au = absences.push(t, row);
    update_snapshot(s, {t, row, ++n, 0.0, false}, detector, StreamUpdate{}, absences, au, nullptr, "");
    return au.changed;
  };
  for (int i = 0; i < 10; ++i) push(i, true);
  // The GPU's channels stop: an absence opens after 3 missing samples.
  bool opened = false;
  for (int i = 10; i < 13; ++i) opened = push(i, false) || opened;
  ASSERT_TRUE(opened);
  ASSERT_EQ(s.active_absences.size(), 1u);
  s.active_absences[0].incident.gpu_pods = {pod};  // as the agent names them when it changed
  const std::int64_t end0 = s.active_absences[0].incident.end_unix_ns;
  const std::string action0 = s.active_absences[0].incident.action;
  EXPECT_FALSE(push(13, false));  // still absent: nothing opened, grew or closed
  ASSERT_EQ(s.active_absences.size(), 1u);
  const Incident& open = s.active_absences[0].incident;
  EXPECT_EQ(open.end_unix_ns, end0 + kSecond);
  EXPECT_NE(open.action, action0);  // it states the longer length
  EXPECT_EQ(open.action, absences.active()[0].action);
  EXPECT_DOUBLE_EQ(open.end_s, absences.active()[0].end_s);
  ASSERT_EQ(open.gpu_pods.size(), 1u);
  EXPECT_EQ(open.gpu_pods[0].pod, "trainer-0");
  // The GPU is back: the absence closes, the open list empties and the closed one is recent.
  EXPECT_TRUE(push(14, true));
  EXPECT_TRUE(s.active_absences.empty());
  ASSERT_EQ(s.recent_absences.size(), 1u);
  EXPECT_EQ(s.recent_absences[0].end_unix_ns, end0 + kSecond);
}

}  // namespace
}  // namespace reveal::agent
