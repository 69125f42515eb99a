// libFuzzer target: the agent's HTTP server (src/agent/http_server.h, Boost.Beast) on raw request
// bytes (bench/fuzz/run.sh). One server on 127.0.0.1 (port 0) serves in a thread for the whole
// run, with short deadlines; each input goes over a fresh loopback connection, whose write side
// is then shut, and the answer is read to the end. Traps (a crash for libFuzzer) when the answer
// is neither empty nor HTTP (1.0 or 1.1), when the server does not close the connection within 5 s, or
// when it stops accepting connections.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

#include "agent/http_server.h"

namespace {

using reveal::agent::HttpLimits;
using reveal::agent::HttpRequest;
using reveal::agent::HttpResponse;
using reveal::agent::HttpServer;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

int server_port() {
  static HttpServer* server = [] {
    HttpLimits limits;
    limits.request_deadline = std::chrono::milliseconds(1000);
    limits.write_deadline = std::chrono::milliseconds(1000);
    limits.idle_deadline = std::chrono::milliseconds(1000);
    auto* s = new HttpServer(
        [](const HttpRequest& req) {
          HttpResponse res;
          if (req.path == "/metrics" || req.path == "/healthz") {
            res.body = "ok " + std::string(req.target) + "\n";
          } else {
            res.status = 404;
            res.body = "not found\n";
          }
          return res;
        },
        limits, [](std::string_view path) { return path == "/metrics" || path == "/healthz"; });
    s->bind("127.0.0.1", 0, "127.0.0.1:0");
    std::thread([s] { s->serve(); }).detach();
    return s;
  }();
  return server->port();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  require(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(std::uint16_t(server_port()));
  require(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  // The server may answer (and close) before all is sent: a failed send is fine.
  for (std::size_t sent = 0; sent < size;) {
    const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += std::size_t(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    require(left.count() > 0);  // the server must close a half-closed connection
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, int(left.count())) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;  // closed (or reset after a refusal)
    answer.append(buf, std::size_t(n));
    require(answer.size() < (1u << 20));
  }
  ::close(fd);
  // Beast answers in the version of the request (HTTP/1.0 or 1.1).
  require(answer.empty() || answer.rfind("HTTP/1.1 ", 0) == 0 || answer.rfind("HTTP/1.0 ", 0) == 0);
  return 0;
}
