// GPU health on /metrics (issue #20 item 3): reveal_gpus, reveal_gpu_up, and XID errors by code
// that a restart of the agent does not reset (src/agent/snapshot.h).
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "agent/snapshot.h"
#include "reveal/agent.h"

namespace reveal::agent {
namespace {

AgentSnapshot two_gpus() {
  AgentSnapshot s;
  s.gpus = {"gpu0", "gpu1"};
  s.gpu_up = {1, 1};
  return s;
}

TEST(GpuHealth, XidEventsCountByCodeAndXid79OrALossMarksTheGpuDown) {
  AgentSnapshot s = two_gpus();
  const std::vector<Event> events = {{1, "nvml", "xid", 48, "gpu0 XID 48"},
                                     {2, "nvml", "xid", 48, "gpu0 XID 48"},
                                     {3, "nvml", "xid", 13, "gpu1 XID 13"},
                                     {4, "nvml", "link_down", 0, "not a GPU event"},
                                     {5, "config", "xid", 99, "another source"}};
  EXPECT_TRUE(note_gpu_events(s, events));
  ASSERT_EQ(s.xid_errors.size(), 2u);
  EXPECT_EQ(s.xid_errors[0].gpu, "gpu0");
  EXPECT_EQ(s.xid_errors[0].xid, 48);
  EXPECT_EQ(s.xid_errors[0].count, 2u);
  EXPECT_EQ(s.xid_errors[1].xid, 13);
  EXPECT_EQ(s.gpu_up, (std::vector<char>{1, 1})) << "XID 48 and 13 do not take a GPU down";

  EXPECT_TRUE(note_gpu_events(s, std::vector<Event>{{6, "nvml", "xid", 79, "gpu1 XID 79"}}));
  EXPECT_EQ(s.gpu_up, (std::vector<char>{1, 0})) << "79: fallen off the bus";
  EXPECT_FALSE(note_gpu_events(s, std::vector<Event>{{7, "nvml", "gpu_lost", 0, "gpu0 lost: GPU is lost"}}));
  EXPECT_EQ(s.gpu_up, (std::vector<char>{0, 0}));

  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("\nreveal_gpus 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("reveal_gpu_up{gpu=\"gpu1\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE reveal_gpu_xid_errors_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("reveal_gpu_xid_errors_total{gpu=\"gpu0\",xid=\"48\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("reveal_gpu_xid_errors_total{gpu=\"gpu1\",xid=\"79\"} 1\n"), std::string::npos);

  // No GPUs, no XIDs: none of these families.
  const std::string none = render_metrics(AgentSnapshot{});
  EXPECT_EQ(none.find("reveal_gpu"), std::string::npos);
}

TEST(GpuHealth, XidCountsSurviveARestart) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("reveal-xid-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = gpu_xid_counts_path(dir / "agent.db");
  EXPECT_EQ(path.filename(), "agent.db.xid-counts");
  AgentSnapshot s = two_gpus();
  note_gpu_events(s, std::vector<Event>{{1, "nvml", "xid", 94, "gpu1 XID 94"}, {2, "nvml", "xid", 94, "gpu1 XID 94"}});
  ASSERT_TRUE(save_xid_counts(s, path));

  AgentSnapshot restarted = two_gpus();  // a new process: counts from the file, then on
  load_xid_counts(restarted, path);
  ASSERT_EQ(restarted.xid_errors.size(), 1u);
  EXPECT_EQ(restarted.xid_errors[0].count, 2u);
  note_gpu_events(restarted, std::vector<Event>{{3, "nvml", "xid", 94, "gpu1 XID 94"}});
  EXPECT_EQ(restarted.xid_errors[0].count, 3u);

  // A missing or foreign file: no counts, nothing thrown.
  AgentSnapshot fresh;
  load_xid_counts(fresh, dir / "absent");
  EXPECT_TRUE(fresh.xid_errors.empty());
  std::ofstream(dir / "garbage") << "not a count file at all\n";
  load_xid_counts(fresh, dir / "garbage");
  EXPECT_TRUE(fresh.xid_errors.empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reveal::agent
