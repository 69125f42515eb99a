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
