// GPUs joined to the pods holding them (reveal/gpu_pods.h).
#include "reveal/gpu_pods.h"

#include <gtest/gtest.h>

namespace reveal {
namespace {

const ConfigSnapshot kTwoGpus = {
    {"gpu.count", "2"}, {"gpu.0.uuid", "GPU-aaaa"}, {"gpu.1.uuid", "GPU-bbbb"}, {"gpu.0.name", "H200"},
    {"gpu.x.uuid", "GPU-junk"}, {"gpu.1x.uuid", "GPU-junk2"}, {"gpu.2.uuid", ""}};

TEST(GpuPods, JoinsByUuidInIndexOrder) {
  PodDevices d;
  d.devices = {{"ml", "trainer", "worker", "nvidia.com/gpu", "GPU-bbbb"},
               {"ml", "trainer", "worker", "nvidia.com/gpu", "GPU-aaaa"}};
  const auto g = gpu_pods(d, kTwoGpus);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0], (GpuPod{0, "gpu0", "GPU-aaaa", "ml", "trainer", "worker", "nvidia.com/gpu"}));
  EXPECT_EQ(g[1].gpu, "gpu1");
  EXPECT_EQ(g[1].uuid, "GPU-bbbb");
}

TEST(GpuPods, TimeSlicedReplicasNameTheirGpuOncePerContainer) {
  PodDevices d;
  d.devices = {{"a", "p1", "c", "nvidia.com/gpu", "GPU-aaaa::0"},
               {"a", "p1", "c", "nvidia.com/gpu", "GPU-aaaa::3"},
               {"b", "p2", "c", "nvidia.com/gpu", "GPU-aaaa::1"}};
  const auto g = gpu_pods(d, kTwoGpus);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].pod, "p1");
  EXPECT_EQ(g[1].pod, "p2");
  EXPECT_EQ(g[0].gpu, "gpu0");
  EXPECT_EQ(g[1].gpu, "gpu0");
}

TEST(GpuPods, LeavesOutWhatNamesNoNvmlGpu) {
  PodDevices d;
  d.devices = {{"a", "mig", "c", "nvidia.com/mig-1g.10gb", "MIG-1234"},
               {"a", "gke", "c", "nvidia.com/gpu", "nvidia0"},
               {"a", "rdma", "c", "rdma/hca", "mlx5_0"},
               {"a", "junk", "c", "nvidia.com/gpu", "GPU-junk"},  // only from a malformed key
               {"a", "empty", "c", "nvidia.com/gpu", ""}};
  EXPECT_TRUE(gpu_pods(d, kTwoGpus).empty());
  EXPECT_TRUE(gpu_pods(d, {}).empty());
}

}  // namespace
}  // namespace reveal

namespace reveal {
namespace {

GpuPod holder(std::size_t i, std::string ns, std::string pod, std::string c = "main") {
  return {i, "gpu" + std::to_string(i), "GPU-" + std::to_string(i), std::move(ns), std::move(pod), std::move(c),
          "nvidia.com/gpu"};
}

// All holders of every GPU at t, from a history.
std::vector<GpuPod> all_at(const GpuPodsHistory& h, std::int64_t t) {
  std::vector<GpuPod> out;
  for (const char* g : {"gpu0", "gpu1", "gpu2", "gpu3"})
    for (auto& p : h.of(g, t)) out.push_back(p);
  return out;
}

// Changes of the holders as store events, read back at any time.
TEST(GpuPodsEvents, OneEventPerGpuWhoseHoldersChangedReadBackAtAnyTime) {
  const std::vector<GpuPod> a = {holder(0, "ml", "trainer"), holder(1, "inf", "a"), holder(1, "inf", "b")};
  const std::vector<GpuPod> b = {holder(1, "inf", "a"), holder(1, "inf", "b"), holder(2, "ml", "eval")};
  auto e1 = gpu_pods_events(100, {}, a);
  ASSERT_EQ(e1.size(), 2u);
  EXPECT_EQ(e1[0].source, "kubelet");
  EXPECT_EQ(e1[0].kind, "gpu_pods");
  EXPECT_EQ(e1[0].value, 0.0);
  EXPECT_EQ(e1[0].detail, "gpu0 GPU-0 ml/trainer/main=nvidia.com/gpu");
  EXPECT_EQ(e1[1].detail, "gpu1 GPU-1 inf/a/main=nvidia.com/gpu inf/b/main=nvidia.com/gpu");
  EXPECT_TRUE(gpu_pods_events(150, a, a).empty());
  const auto e2 = gpu_pods_events(200, a, b);  // gpu0 released, gpu2 taken, gpu1 unchanged
  ASSERT_EQ(e2.size(), 2u);
  EXPECT_EQ(e2[0].detail, "gpu0 GPU-0");
  EXPECT_EQ(e2[1].detail, "gpu2 GPU-2 ml/eval/main=nvidia.com/gpu");
  std::vector<Event> all = e2;  // any order: the history sorts by time
  all.insert(all.end(), e1.begin(), e1.end());
  const GpuPodsHistory h(all);
  EXPECT_TRUE(all_at(h, 99).empty());
  EXPECT_EQ(all_at(h, 100), a);
  EXPECT_EQ(all_at(h, 199), a);
  EXPECT_EQ(all_at(h, 200), b);
  EXPECT_TRUE(h.of("gpu9", 300).empty());
  EXPECT_TRUE(h.of("nvme0", 300).empty());
}

// The whole state: one event per GPU of the host, held or not; an agent restart forgets every
// holder until the next event.
TEST(GpuPodsEvents, TheWholeStateAndRestarts) {
  const std::vector<std::pair<std::size_t, std::string>> gpus = {{0, "GPU-0"}, {1, "GPU-1"}};
  const auto st = gpu_pods_state_events(10, {holder(1, "ml", "x")}, gpus);
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].detail, "gpu0 GPU-0");
  EXPECT_EQ(st[1].detail, "gpu1 GPU-1 ml/x/main=nvidia.com/gpu");
  GpuPodsHistory h(st);
  EXPECT_EQ(h.of("gpu1", 20).size(), 1u);
  h.add({30, "agent", "agent_restart", 5, "restart"});
  EXPECT_EQ(h.of("gpu1", 29).size(), 1u);
  EXPECT_TRUE(h.of("gpu1", 30).empty()) << "forgotten at the restart";
  for (const Event& e : gpu_pods_state_events(40, {holder(1, "ml", "y")}, gpus)) h.add(e);
  ASSERT_EQ(h.of("gpu1", 40).size(), 1u);
  EXPECT_EQ(h.of("gpu1", 40)[0].pod, "y");
  EXPECT_EQ(gpu_uuids({{"gpu.1.uuid", "GPU-1"}, {"gpu.0.uuid", "GPU-0"}, {"gpu.2.uuid", ""}, {"gpu.x.uuid", "GPU-x"}}),
            gpus);
}

// Names are written so that the line parses back: separators and odd bytes become '_'. Crafted
// events cost bounded work.
TEST(GpuPodsEvents, OddNamesMalformedAndCraftedEvents) {
  const std::vector<GpuPod> odd = {holder(3, "a b", "p/q", "c=d\x1b\xff")};
  const auto e = gpu_pods_events(5, {}, odd);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].detail, "gpu3 GPU-3 a_b/p_q/c_d__=nvidia.com/gpu");
  std::vector<Event> events = e;
  for (const char* bad : {"gpu", "gpuX GPU-1 a/b/c=r", "gpu99999999999999999999999 GPU-1 a/b/c=r", "nonsense",
                          "gpu4 GPU-4 no-slashes", "gpu5 GPU-5 a/b=r/c"})
    events.push_back({6, "kubelet", "gpu_pods", 0, bad});
  events.push_back({6, "nvml", "gpu_pods", 0, "gpu6 GPU-6 a/b/c=r"});  // another source
  const GpuPodsHistory h(events);
  const auto at = all_at(h, 10);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0].gpu, "gpu3");
  EXPECT_EQ(at[0].ns, "a_b");
  EXPECT_EQ(at[0].container, "c_d__");
  EXPECT_TRUE(h.of("gpu4", 10).empty());
  EXPECT_TRUE(h.of("gpu5", 10).empty());
  // A crafted event: a 10-KB UUID and 20000 holders of 1-KB names.
  std::string detail = "gpu0 " + std::string(10000, 'u');
  for (int i = 0; i < 20000; ++i) detail += " " + std::string(1000, 'n') + "/p" + std::to_string(i) + "/c=r";
  const GpuPodsHistory crafted(std::vector<Event>{{1, "kubelet", "gpu_pods", 0, detail}});
  const auto got = crafted.of("gpu0", 2);
  EXPECT_LE(got.size(), kGpuPodsPerGpu);
  EXPECT_FALSE(got.empty());
  for (const auto& p : got) {
    EXPECT_LE(p.uuid.size(), kGpuPodNameBytes);
    EXPECT_LE(p.ns.size(), kGpuPodNameBytes);
  }
}

}  // namespace
}  // namespace reveal
