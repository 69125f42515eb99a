// Who holds each GPU on /metrics and /incidents (src/agent/gpu_pod_watcher.h): the snapshot's
// update, its rendering, and the watcher thread against a stand-in kubelet.
#include "agent/gpu_pod_watcher.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "../telemetry/kubelet/fake_kubelet.h"
#include "reveal/agent.h"
#include "reveal/gpu_pods.h"
#include "reveal/tenants.h"

namespace reveal::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

ChannelInfo ch(std::string name, Subsystem s, std::string unit) {
  ChannelInfo c;
  c.name = std::move(name);
  c.kind = Kind::gauge;
  c.subsystem = s;
  c.unit = std::move(unit);
  return c;
}

// Two GPUs' channels and one host channel, as init_snapshot leaves them.
AgentSnapshot gpu_host() {
  AgentSnapshot s;
  s.hostname = "gpu-node";
  s.channels = {ch("nvml:utilization_gpu.gpu0", Subsystem::gpu, "%"), ch("nvml:utilization_gpu.gpu1", Subsystem::gpu, "%"),
                ch("nvml:power_usage.gpu1", Subsystem::power_thermal, "W"), ch("proc.stat:user", Subsystem::cpu, "ticks")};
  s.exported.assign(s.channels.size(), 1);
  s.values = {90, 10, 300, 5};
  s.channel_labels.assign(s.channels.size(), {});
  s.gpus = {"gpu0", "gpu1"};
  s.gpu_up = {1, 1};
  s.config = {{"gpu.0.uuid", "GPU-aaaa"}, {"gpu.1.uuid", "GPU-bbbb"}, {"kernel.release", "6.1"}};
  return s;
}

GpuPod pod(std::size_t i, std::string uuid, std::string ns, std::string name, std::string container) {
  return {i, "gpu" + std::to_string(i), std::move(uuid), std::move(ns), std::move(name), std::move(container),
          "nvidia.com/gpu"};
}

using Labels = std::vector<std::pair<std::string, std::string>>;

TEST(ApplyGpuPods, LabelsTheNvmlSeriesOfAGpuOneContainerHolds) {
  AgentSnapshot s = gpu_host();
  EXPECT_TRUE(apply_gpu_pods(s, {pod(0, "GPU-aaaa", "ml", "trainer-0", "worker"),
                                 pod(1, "GPU-bbbb", "infer", "a", "main"), pod(1, "GPU-bbbb", "infer", "b", "main")}));
  EXPECT_EQ(s.channel_labels[0], (Labels{{"namespace", "ml"}, {"pod", "trainer-0"}, {"container", "worker"}}));
  EXPECT_TRUE(s.channel_labels[1].empty()) << "gpu1 is shared by two pods: no pod label on its series";
  EXPECT_TRUE(s.channel_labels[2].empty());
  EXPECT_TRUE(s.channel_labels[3].empty());
  EXPECT_FALSE(apply_gpu_pods(s, s.gpu_pods)) << "the same answer changes nothing";
  // The trainer ends: its labels go with it.
  EXPECT_TRUE(apply_gpu_pods(s, {pod(1, "GPU-bbbb", "infer", "a", "main")}));
  EXPECT_TRUE(s.channel_labels[0].empty());
  EXPECT_EQ(s.channel_labels[1], (Labels{{"namespace", "infer"}, {"pod", "a"}, {"container", "main"}}));
  EXPECT_EQ(s.channel_labels[2], s.channel_labels[1]);
}

TEST(ApplyGpuPods, RenderedOnMetricsAndIncidents) {
  AgentSnapshot s = gpu_host();
  const std::string before = render_metrics(s);
  EXPECT_EQ(before.find("reveal_gpu_pod_info"), std::string::npos);
  EXPECT_EQ(before.find("reveal_kubelet_pod_resources_up"), std::string::npos) << "never asked: absent";
  apply_gpu_pods(s, {pod(0, "GPU-aaaa", "ml", "trainer-0", "worker")});
  s.pod_resources_up = 1;
  s.pod_resources_errors_total = 2;
  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("# TYPE reveal_gpu_pod_info gauge\nreveal_gpu_pod_info{gpu=\"gpu0\",uuid=\"GPU-aaaa\",namespace=\"ml\","
                      "pod=\"trainer-0\",container=\"worker\",resource=\"nvidia.com/gpu\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nreveal_kubelet_pod_resources_up 1\n"), std::string::npos);
  EXPECT_NE(text.find("\nreveal_kubelet_pod_resources_errors_total 2\n"), std::string::npos);
  EXPECT_NE(text.find("reveal_nvml_utilization_gpu{channel=\"nvml:utilization_gpu.gpu0\",subsystem=\"gpu\",unit=\"%\","
                      "entity=\"gpu0\",namespace=\"ml\",pod=\"trainer-0\",container=\"worker\"} 90\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("reveal_nvml_utilization_gpu{channel=\"nvml:utilization_gpu.gpu1\",subsystem=\"gpu\",unit=\"%\","
                      "entity=\"gpu1\"} 10\n"),
            std::string::npos);

  // An open incident on gpu0 names its pod (as the sampling side attaches it, from the holders'
  // events); one elsewhere names none.
  const GpuPodsHistory history(gpu_pods_events(0, {}, s.gpu_pods));
  Incident inc;
  inc.subsystem = Subsystem::gpu;
  inc.focus = "gpu0";
  inc.top = {{"nvml:utilization_gpu.gpu0", "%", Subsystem::gpu, 10, 90, -12}};
  attach_gpu_pods(inc, history);
  s.active = inc;
  Incident net;
  net.subsystem = Subsystem::network;
  net.focus = "eth0";
  net.top = {{"proc.net.dev:rx_bytes.eth0", "bytes/s", Subsystem::network, 1, 2, 9}};
  attach_gpu_pods(net, history);
  s.pending = net;
  const auto j = nlohmann::json::parse(render_incidents_json(s));
  ASSERT_EQ(j["active"]["gpu_pods"].size(), 1u);
  EXPECT_EQ(j["active"]["gpu_pods"][0]["pod"], "trainer-0");
  EXPECT_EQ(j["active"]["gpu_pods"][0]["namespace"], "ml");
  EXPECT_TRUE(j["pending"]["gpu_pods"].empty());
  ASSERT_EQ(j["gpu_pods"].size(), 1u);
  EXPECT_EQ(j["gpu_pods"][0]["uuid"], "GPU-aaaa");
}

// A short directory of its own (a unix socket path holds at most 107 bytes).
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/reveal-gpw-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

template <typename Pred>
bool wait_for(SharedState& shared, Pred pred) {
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard<PiMutex> lock(shared.mu);
      if (pred(shared.snap)) return true;
    }
    std::this_thread::sleep_for(25ms);
  }
  return false;
}

TEST(GpuPodWatcher, FollowsTheKubeletAndSurvivesItsRestart) {
  TempDir dir;
  const fs::path sock = dir.path / "kubelet.sock";
  SharedState shared;
  shared.snap = gpu_host();
  std::vector<std::string> log;
  std::mutex log_mu;
  auto logger = [&](const std::string& l) {
    std::lock_guard<std::mutex> g(log_mu);
    log.push_back(l);
  };
  {
    GpuPodWatcher w(shared, sock, 50ms, logger);
    // No socket yet (the kubelet not up): nothing asked, nothing shown.
    std::this_thread::sleep_for(200ms);
    {
      std::lock_guard<PiMutex> lock(shared.mu);
      EXPECT_EQ(shared.snap.pod_resources_up, -1);
    }
    auto k = std::make_unique<test::FakeKubelet>(sock.string());
    k->set_pods({{"ml", "trainer-0", {{"worker", "nvidia.com/gpu", {"GPU-bbbb::0"}}}},
                 {"ml", "cpu-only", {{"app", "", {}}}}});
    ASSERT_TRUE(wait_for(shared, [](const AgentSnapshot& s) { return s.pod_resources_up == 1 && s.gpu_pods.size() == 1; }));
    {
      std::lock_guard<PiMutex> lock(shared.mu);
      EXPECT_EQ(shared.snap.gpu_pods[0].gpu, "gpu1");
      EXPECT_EQ(shared.snap.channel_labels[2], (Labels{{"namespace", "ml"}, {"pod", "trainer-0"}, {"container", "worker"}}));
      shared.rendered_seq = 5;
    }
    // The kubelet fails: errors counted, the last answer's labels kept, the cache dropped.
    k->set_status(grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting"));
    ASSERT_TRUE(wait_for(shared, [](const AgentSnapshot& s) { return s.pod_resources_up == 0; }));
    {
      std::lock_guard<PiMutex> lock(shared.mu);
      EXPECT_GE(shared.snap.pod_resources_errors_total, 1u);
      EXPECT_EQ(shared.snap.gpu_pods.size(), 1u);
      EXPECT_EQ(shared.rendered_seq, ~0ull);
    }
    // Back, with the trainer gone and another pod on gpu0.
    k->set_status(grpc::Status::OK);
    k->set_pods({{"infer", "server", {{"main", "nvidia.com/gpu", {"GPU-aaaa"}}}}});
    ASSERT_TRUE(wait_for(shared, [](const AgentSnapshot& s) {
      return s.pod_resources_up == 1 && s.gpu_pods.size() == 1 && s.gpu_pods[0].gpu == "gpu0";
    }));
    std::lock_guard<PiMutex> lock(shared.mu);
    EXPECT_TRUE(shared.snap.channel_labels[2].empty());
    EXPECT_EQ(shared.snap.channel_labels[0][1].second, "server");
  }  // the watcher stops and joins
  std::lock_guard<std::mutex> g(log_mu);
  ASSERT_EQ(log.size(), 3u) << "one line per change of state, not per call";
  EXPECT_NE(log[0].find(": 1 GPU holder(s)"), std::string::npos) << log[0];
  EXPECT_NE(log[1].find("UNAVAILABLE restarting"), std::string::npos) << log[1];
}

TEST(GpuPodWatcher, StopsPromptlyWhileTheKubeletHangs) {
  TempDir dir;
  const fs::path sock = dir.path / "kubelet.sock";
  test::FakeKubelet k(sock.string());
  k.set_delay(3000ms);
  SharedState shared;
  shared.snap = gpu_host();
  const auto t0 = std::chrono::steady_clock::now();
  {
    GpuPodWatcher w(shared, sock, 10s, [](const std::string&) {});
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s) << "a call under way ends within its deadline";
}

}  // namespace
}  // namespace reveal::agent
