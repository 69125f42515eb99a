// A stand-in kubelet for the pod-resources client's tests: a gRPC server of
// v1.PodResourcesLister on a unix socket (the stubs generated from
// src/telemetry/kubelet/podresources_v1.proto), answering what the test scripts: pods with
// their containers' devices (given, or read from a file at every call), an error status, a delay.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "podresources_v1.grpc.pb.h"

namespace reveal::test {

struct FakeContainer {
  std::string name, resource;
  std::vector<std::string> device_ids;
};
struct FakePod {
  std::string ns, name;
  std::vector<FakeContainer> containers;
};

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  explicit FakeKubelet(const std::string& socket_path) {
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials());
    b.RegisterService(this);
    b.SetMaxSendMessageSize(64 << 20);
    server_ = b.BuildAndStart();
    if (!server_) throw std::runtime_error("fake kubelet: cannot listen on " + socket_path);
  }
  ~FakeKubelet() override { server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100)); }

  void set_pods(std::vector<FakePod> pods) {
    std::lock_guard<std::mutex> l(mu_);
    pods_ = std::move(pods);
  }
  // Every call re-reads `path`: one container per line, "namespace pod container resource
  // device_id[,device_id...]" (a missing file: no pods).
  void set_pods_file(std::string path) {
    std::lock_guard<std::mutex> l(mu_);
    pods_file_ = std::move(path);
  }
  void set_status(grpc::Status s) {
    std::lock_guard<std::mutex> l(mu_);
    status_ = std::move(s);
  }
  void set_delay(std::chrono::milliseconds d) {
    std::lock_guard<std::mutex> l(mu_);
    delay_ = d;
  }
  int calls() {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*, v1::ListPodResourcesResponse* r) override {
    std::vector<FakePod> pods;
    grpc::Status status;
    std::chrono::milliseconds delay;
    {
      std::lock_guard<std::mutex> l(mu_);
      ++calls_;
      pods = pods_file_.empty() ? pods_ : read_pods(pods_file_);
      status = status_;
      delay = delay_;
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    if (!status.ok()) return status;
    for (const FakePod& p : pods) {
      auto* pr = r->add_pod_resources();
      pr->set_name(p.name);
      pr->set_namespace_(p.ns);
      for (const FakeContainer& c : p.containers) {
        auto* cr = pr->add_containers();
        cr->set_name(c.name);
        if (c.device_ids.empty()) continue;
        auto* d = cr->add_devices();
        d->set_resource_name(c.resource);
        for (const auto& id : c.device_ids) d->add_device_ids(id);
      }
    }
    return grpc::Status::OK;
  }

 private:
  static std::vector<FakePod> read_pods(const std::string& path) {
    std::vector<FakePod> pods;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      std::istringstream f(line);
      FakePod p;
      FakeContainer c;
      std::string ids;
      if (!(f >> p.ns >> p.name >> c.name >> c.resource >> ids)) continue;
      std::istringstream idl(ids);
      for (std::string id; std::getline(idl, id, ',');) c.device_ids.push_back(id);
      p.containers.push_back(std::move(c));
      pods.push_back(std::move(p));
    }
    return pods;
  }

  std::unique_ptr<grpc::Server> server_;
  std::mutex mu_;
  std::vector<FakePod> pods_;
  std::string pods_file_;
  grpc::Status status_ = grpc::Status::OK;
  std::chrono::milliseconds delay_{0};
  int calls_ = 0;
};

}  // namespace reveal::test
