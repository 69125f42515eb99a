// The kubelet pod-resources client: see pod_resources.h.
#include "telemetry/kubelet/pod_resources.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <stdexcept>

#include "podresources_v1.grpc.pb.h"

namespace reveal::telemetry::kubelet {
namespace {

const char* code_name(grpc::StatusCode c) {
  switch (c) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    default: return "status";
  }
}

// One line of printable ASCII, at most 300 bytes: gRPC's messages may hold the peer's text.
std::string one_line(std::string s) {
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20) c = ' ';
    else if (u >= 0x7f) c = '?';
  }
  if (s.size() > 300) s.resize(300);
  return s;
}

// At most kMaxNameBytes, never ending inside a UTF-8 sequence (two long names that differ only
// past the cut stay apart no more than the cut allows, but neither ends in a broken character).
std::string cut(const std::string& s) {
  if (s.size() <= kMaxNameBytes) return s;
  std::size_t n = kMaxNameBytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

}  // namespace

std::filesystem::path default_pod_resources_socket(const std::filesystem::path& root) {
  return root / "var/lib/kubelet/pod-resources/kubelet.sock";
}

struct PodResourcesClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

PodResourcesClient::PodResourcesClient(const std::filesystem::path& socket)
    : socket_(socket), impl_(std::make_unique<Impl>()) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(1 << 10);
  // A local socket: no DNS, no proxy, no retries beyond the caller's next poll.
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  // After a kubelet restart, reconnect within seconds: gRPC's default backoff grows to 120 s.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  impl_->channel = grpc::CreateCustomChannel("unix:" + std::filesystem::absolute(socket).string(),
                                             grpc::InsecureChannelCredentials(), args);
  impl_->stub = v1::PodResourcesLister::NewStub(impl_->channel);
}

PodResourcesClient::~PodResourcesClient() = default;

PodDevices PodResourcesClient::list(std::chrono::milliseconds deadline, const Keep& keep) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::ListPodResourcesRequest req;
  v1::ListPodResourcesResponse resp;
  const grpc::Status st = impl_->stub->List(&ctx, req, &resp);
  if (!st.ok())
    throw std::runtime_error(one_line("kubelet pod-resources " + socket_.string() + ": " + code_name(st.error_code()) +
                                      " " + st.error_message()));
  PodDevices out;
  for (const auto& pod : resp.pod_resources())
    for (const auto& c : pod.containers())
      for (const auto& d : c.devices())
        for (const auto& id : d.device_ids()) {
          if (keep && !keep(id)) continue;
          if (out.devices.size() >= kMaxDevices) {
            ++out.left_out;
            continue;
          }
          out.devices.push_back({cut(pod.namespace_()), cut(pod.name()), cut(c.name()), cut(d.resource_name()), cut(id)});
        }
  std::sort(out.devices.begin(), out.devices.end());
  out.devices.erase(std::unique(out.devices.begin(), out.devices.end()), out.devices.end());
  return out;
}

}  // namespace reveal::telemetry::kubelet
