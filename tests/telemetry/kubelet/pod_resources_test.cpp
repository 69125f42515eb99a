// The kubelet pod-resources client against a stand-in kubelet on a unix socket (fake_kubelet.h).
#include "telemetry/kubelet/pod_resources.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "fake_kubelet.h"

namespace reveal::telemetry::kubelet {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::FakeContainer;
using test::FakeKubelet;
using test::FakePod;

// A short directory of its own (a unix socket path holds at most 107 bytes).
class PodResourcesClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/reveal-podres-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    sock_ = dir_ / "kubelet.sock";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_, sock_;
};

std::string error_of(PodResourcesClient& c, std::chrono::milliseconds deadline) {
  try {
    c.list(deadline);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(PodResourcesSocket, DefaultUnderTheRoot) {
  EXPECT_EQ(default_pod_resources_socket("/host"), fs::path("/host/var/lib/kubelet/pod-resources/kubelet.sock"));
  EXPECT_EQ(default_pod_resources_socket("/"), fs::path("/var/lib/kubelet/pod-resources/kubelet.sock"));
}

TEST_F(PodResourcesClientTest, ListsEveryContainersDevicesSorted) {
  FakeKubelet k(sock_.string());
  k.set_pods({
      {"ml", "trainer-0", {{"worker", "nvidia.com/gpu", {"GPU-bbbb", "GPU-aaaa"}}, {"sidecar", "", {}}}},
      {"infer", "server-7", {{"main", "nvidia.com/gpu", {"GPU-cccc::1", "GPU-cccc::0"}}}},
      {"default", "no-devices", {{"app", "", {}}}},
  });
  PodResourcesClient c(sock_);
  const PodDevices d = c.list(2s);
  EXPECT_EQ(d.left_out, 0u);
  ASSERT_EQ(d.devices.size(), 4u);
  EXPECT_EQ(d.devices[0], (DeviceAssignment{"infer", "server-7", "main", "nvidia.com/gpu", "GPU-cccc::0"}));
  EXPECT_EQ(d.devices[1].device_id, "GPU-cccc::1");
  EXPECT_EQ(d.devices[2], (DeviceAssignment{"ml", "trainer-0", "worker", "nvidia.com/gpu", "GPU-aaaa"}));
  EXPECT_EQ(d.devices[3].device_id, "GPU-bbbb");
  // Pods that end are gone from the next answer.
  k.set_pods({});
  EXPECT_TRUE(c.list(2s).devices.empty());
  EXPECT_EQ(k.calls(), 2);
}

TEST_F(PodResourcesClientTest, NoKubeletIsOneLineUnavailable) {
  PodResourcesClient c(sock_);  // nothing listens
  const std::string e = error_of(c, 1s);
  EXPECT_NE(e.find("kubelet pod-resources " + sock_.string() + ": UNAVAILABLE"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST_F(PodResourcesClientTest, AKubeletThatDoesNotAnswerCostsTheDeadline) {
  FakeKubelet k(sock_.string());
  k.set_delay(3000ms);
  PodResourcesClient c(sock_);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = error_of(c, 300ms);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_NE(e.find("DEADLINE_EXCEEDED"), std::string::npos) << e;
  EXPECT_LT(took, 2500ms);
}

TEST_F(PodResourcesClientTest, AnErrorStatusIsOneLine) {
  FakeKubelet k(sock_.string());
  k.set_status(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no\naccess\x1b[31m\x7f\xc3\xa9"));
  PodResourcesClient c(sock_);
  const std::string e = error_of(c, 2s);
  EXPECT_NE(e.find("PERMISSION_DENIED no access"), std::string::npos) << e;
  for (const char ch : e) EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << "not printable ASCII: " << e;
}

TEST_F(PodResourcesClientTest, AnAnswerOverTheSizeBoundIsRefused) {
  FakeKubelet k(sock_.string());
  // 40 pods with a 512-KiB name: about 20 MiB, over kMaxMessageBytes (16 MiB).
  std::vector<FakePod> pods;
  for (int i = 0; i < 40; ++i) pods.push_back({"ns", std::string(512 << 10, char('a' + i % 26)), {{"c", "r", {"GPU-x"}}}});
  k.set_pods(std::move(pods));
  PodResourcesClient c(sock_);
  const std::string e = error_of(c, 10s);
  EXPECT_NE(e.find("RESOURCE_EXHAUSTED"), std::string::npos) << e;
}

TEST_F(PodResourcesClientTest, KeepsAtMostMaxDevicesAndCutsLongNames) {
  FakeKubelet k(sock_.string());
  FakeContainer many{"c", "example.com/dev", {}};
  for (std::size_t i = 0; i < kMaxDevices + 100; ++i) many.device_ids.push_back("d" + std::to_string(i));
  k.set_pods({{"ns", "big", {many}}, {std::string(5000, 'n'), "p", {{"c", "r", {"GPU-long"}}}}});
  PodResourcesClient c(sock_);
  const PodDevices d = c.list(10s);
  EXPECT_EQ(d.devices.size(), kMaxDevices);
  EXPECT_EQ(d.left_out, 101u);  // the 100 over the bound and the last pod's device
  for (const auto& a : d.devices) EXPECT_LE(a.ns.size(), kMaxNameBytes);
}

// Only what `keep` accepts is copied: a node's many other devices cost nothing. Names are bytes:
// one that is not UTF-8 does not lose the answer, and is cut without splitting a character.
TEST_F(PodResourcesClientTest, KeepsOnlyWhatTheCallerAsksForAndTakesAnyBytes) {
  FakeKubelet k(sock_.string());
  FakeContainer nics{"c", "example.com/sriov", {}};
  for (int i = 0; i < 1000; ++i) nics.device_ids.push_back("vf" + std::to_string(i));
  const std::string long_utf8 = std::string(252, 'a') + "\xc3\xa9";  // 'é' across the 253-byte cut
  k.set_pods({{"ns", "nics", {nics}},
              {"bad\xff\xfe", long_utf8, {{"w", "nvidia.com/gpu", {"GPU-aaaa::0", "GPU-zzzz"}}}}});
  PodResourcesClient c(sock_);
  const PodDevices d = c.list(2s, [](std::string_view id) { return id.rfind("GPU-aaaa", 0) == 0; });
  ASSERT_EQ(d.devices.size(), 1u);
  EXPECT_EQ(d.left_out, 0u);
  EXPECT_EQ(d.devices[0].ns, "bad\xff\xfe");
  EXPECT_EQ(d.devices[0].pod, std::string(252, 'a')) << "cut before the character the bound splits";
  EXPECT_EQ(c.list(2s).devices.size(), 1002u) << "no filter: everything";
}

TEST_F(PodResourcesClientTest, ReconnectsAfterTheKubeletRestarts) {
  PodResourcesClient c(sock_);
  {
    FakeKubelet k(sock_.string());
    k.set_pods({{"ml", "a", {{"w", "nvidia.com/gpu", {"GPU-1"}}}}});
    ASSERT_EQ(c.list(2s).devices.size(), 1u);
  }
  EXPECT_FALSE(error_of(c, 500ms).empty());  // the kubelet is down
  FakeKubelet k2(sock_.string());
  k2.set_pods({{"ml", "b", {{"w", "nvidia.com/gpu", {"GPU-1", "GPU-2"}}}}});
  std::optional<PodDevices> d;
  for (int i = 0; i < 100 && !d; ++i) {  // gRPC backs off between connection attempts (at most 5 s)
    try {
      d = c.list(2s);
    } catch (const std::runtime_error&) {
      std::this_thread::sleep_for(100ms);
    }
  }
  ASSERT_TRUE(d);
  EXPECT_EQ(d->devices.size(), 2u);
  EXPECT_EQ(d->devices[0].pod, "b");
}

}  // namespace
}  // namespace reveal::telemetry::kubelet
