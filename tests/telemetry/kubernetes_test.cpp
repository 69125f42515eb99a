// Kubernetes pods and containers behind cgroup paths (src/telemetry/cgroup/kubernetes.h).
#include "telemetry/cgroup/kubernetes.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "probe_test_util.h"

namespace reveal::telemetry::cgroup {
namespace {

const std::string kUid = "0f6b1c2e-8c4a-4b2a-9a55-1d2f3e4a5b6c";
const std::string kUidSystemd = "0f6b1c2e_8c4a_4b2a_9a55_1d2f3e4a5b6c";
const std::string kId = "4a3f0e6c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f";

TEST(KubepodsPath, SystemdAndCgroupfsDriversAllQosClasses) {
  for (const std::string& path :
       {"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd + ".slice/cri-containerd-" + kId + ".scope",
        "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kUidSystemd + ".slice/crio-" + kId + ".scope",
        "kubepods.slice/kubepods-pod" + kUidSystemd + ".slice/docker-" + kId + ".scope",
        "kubepods/burstable/pod" + kUid + "/" + kId, "kubepods/pod" + kUid + "/" + kId}) {
    const auto r = parse_kubepods_path(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->pod_uid, kUid) << path;
    EXPECT_EQ(r->container_id, kId) << path;
  }
  // The pod itself, a CRI-O monitor, a static pod's hash UID.
  auto r = parse_kubepods_path("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd + ".slice");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pod_uid, kUid);
  EXPECT_EQ(r->container_id, "");
  r = parse_kubepods_path("kubepods.slice/kubepods-pod" + kUidSystemd + ".slice/crio-conmon-" + kId + ".scope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->container_id, "");
  r = parse_kubepods_path("kubepods/burstable/pod3b7f8e9d0c1a2b3c4d5e6f708192a3b4");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pod_uid, "3b7f8e9d0c1a2b3c4d5e6f708192a3b4");
}

TEST(KubepodsPath, OtherCgroupsNameNoPod) {
  for (const char* path : {"", "system.slice", "system.slice/docker-abc.scope", "kubepods.slice",
                           "kubepods.slice/kubepods-burstable.slice", "user.slice/pod1234",
                           "kubepods/burstable/podXYZ", "kubepods/burstable/pod12"})
    EXPECT_FALSE(parse_kubepods_path(path)) << path;
}

TEST(PodNames, FromTheKubeletsLogDirectories) {
  reveal::testing::TempRoot root("edge-missing");
  root.write("var/log/pods/ml-team_trainer-7d9f_" + kUid + "/pytorch/0.log", "x\n");
  root.write("var/log/pods/not-a-pod-dir/x", "x\n");
  root.write("var/log/containers/trainer-7d9f_ml-team_pytorch-" + kId + ".log", "x\n");
  root.write("var/log/containers/garbage.log", "x\n");
  PodNames names;
  EXPECT_EQ(names.load(root.path()), 1u);
  const auto p = names.pod(kUid);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ns, "ml-team");
  EXPECT_EQ(p->pod, "trainer-7d9f");
  EXPECT_EQ(names.container(kId), "pytorch");
  EXPECT_EQ(names.container("nope"), "");

  const std::string path =
      "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd + ".slice/cri-containerd-" + kId + ".scope";
  using Labels = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(pod_labels(path, names),
            (Labels{{"pod_uid", kUid}, {"namespace", "ml-team"}, {"pod", "trainer-7d9f"}, {"container", "pytorch"}}));
  EXPECT_TRUE(pod_labels("system.slice", names).empty());
  PodNames none;  // no /var/log: the UID alone
  EXPECT_EQ(none.load("/nonexistent-root"), 0u);
  EXPECT_EQ(pod_labels(path, none), (Labels{{"pod_uid", kUid}}));
}

}  // namespace
}  // namespace reveal::telemetry::cgroup
