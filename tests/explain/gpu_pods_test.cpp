// The pods on an incident's GPUs (attach_gpu_pods in reveal/tenants.h and reveal/offline.h),
// and how the reports show them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reveal/gpu_pods.h"
#include "reveal/offline.h"
#include "reveal/report.h"
#include "reveal/tenants.h"

namespace reveal {
namespace {

GpuPod holder(std::size_t i, std::string pod) {
  return {i, "gpu" + std::to_string(i), "GPU-" + std::to_string(i), "ml", std::move(pod), "worker", "nvidia.com/gpu"};
}

Incident gpu_incident(std::string focus, std::vector<std::string> top, std::int64_t start) {
  Incident inc;
  inc.subsystem = Subsystem::gpu;
  inc.focus = std::move(focus);
  for (auto& t : top) inc.top.push_back({std::move(t), "%", Subsystem::gpu, 10, 90, -9});
  inc.start_unix_ns = start;
  inc.end_unix_ns = start + 30'000'000'000;
  return inc;
}

TEST(AttachGpuPods, TheHoldersOfTheFocusAndTheStrongestChannelsGpus) {
  const std::vector<GpuPod> h = {holder(0, "a"), holder(1, "b"), holder(1, "c"), holder(2, "d")};
  const GpuPodsHistory history(gpu_pods_events(5, {}, h));
  Incident inc = gpu_incident("gpu1", {"nvml:utilization_gpu.gpu1", "nvml:power_usage.gpu2"}, 10);
  attach_gpu_pods(inc, history);
  ASSERT_EQ(inc.gpu_pods.size(), 3u);
  EXPECT_EQ(inc.gpu_pods[0].pod, "b");
  EXPECT_EQ(inc.gpu_pods[1].pod, "c");
  EXPECT_EQ(inc.gpu_pods[2].pod, "d");
  // A host-wide incident (no GPU among its evidence) names none; stale names are replaced.
  Incident net = gpu_incident("eth0", {"proc.net.dev:rx_bytes.eth0", "nvml:x.gpu10"}, 10);
  net.gpu_pods = h;
  attach_gpu_pods(net, history);
  EXPECT_TRUE(net.gpu_pods.empty()) << "gpu10 is not gpu1";
}

TEST(AttachGpuPods, DetectNamesTheHoldersAtEachIncidentsStartFromTheStoresEvents) {
  const std::int64_t s = 1'000'000'000;
  std::vector<Event> events = gpu_pods_events(10 * s, {}, {holder(0, "first")});
  for (Event& e : gpu_pods_events(100 * s, {holder(0, "first")}, {holder(0, "second")})) events.push_back(e);
  DetectResult r;
  r.incidents = {gpu_incident("gpu0", {"nvml:utilization_gpu.gpu0"}, 50 * s),
                 gpu_incident("gpu0", {"nvml:utilization_gpu.gpu0"}, 150 * s),
                 gpu_incident("", {"nvml:utilization_gpu.gpu0"}, 5 * s)};
  r.workload_changes = {gpu_incident("gpu0", {}, 120 * s)};
  attach_gpu_pods(r, events);
  ASSERT_EQ(r.incidents[0].gpu_pods.size(), 1u);
  EXPECT_EQ(r.incidents[0].gpu_pods[0].pod, "first");
  EXPECT_EQ(r.incidents[1].gpu_pods[0].pod, "second");
  EXPECT_TRUE(r.incidents[2].gpu_pods.empty()) << "before the first event nobody is known to hold it";
  ASSERT_EQ(r.workload_changes[0].gpu_pods.size(), 1u);

  const auto j = nlohmann::json::parse(render_json(r, "x.db"));
  ASSERT_EQ(j["incidents"][0]["gpu_pods"].size(), 1u);
  EXPECT_EQ(j["incidents"][0]["gpu_pods"][0]["pod"], "first");
  EXPECT_EQ(j["incidents"][0]["gpu_pods"][0]["uuid"], "GPU-0");
  EXPECT_TRUE(j["incidents"][2]["gpu_pods"].is_array() && j["incidents"][2]["gpu_pods"].empty());
  const std::string text = render_text(r, "x.db");
  EXPECT_NE(text.find("  gpu pod     gpu0 held by ml/first (container worker)\n"), std::string::npos) << text;

  // No kubelet events: nothing named, nothing touched.
  DetectResult plain;
  plain.incidents = {gpu_incident("gpu0", {}, 50 * s)};
  attach_gpu_pods(plain, {{50 * s, "nvml", "xid", 79, "gpu0 XID 79"}});
  EXPECT_TRUE(plain.incidents[0].gpu_pods.empty());
}

}  // namespace
}  // namespace reveal
