// The agent's bounded HTTP server (src/agent/http_server.h), over loopback sockets.
#include "agent/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace reveal::agent {
namespace {

// A server on 127.0.0.1 (kernel-chosen port), serving on its own thread for the test's life.
struct Running {
  explicit Running(HttpLimits limits = {})
      : server([](const HttpRequest& r) {
          HttpResponse res;
          if (r.path == "/hello") {
            res.body = "hello " + std::string(r.target) + "\n";
          } else {
            res.status = 404;
            res.body = "no\n";
          }
          return res;
        }, limits, [](std::string_view path) { return path == "/hello"; }) {
    server.bind("127.0.0.1", 0, "127.0.0.1:0");
    thread = std::thread([this] { server.serve(); });
  }
  ~Running() {
    server.stop();
    thread.join();
  }
  HttpServer server;
  std::thread thread;
};

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(std::uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Everything the server sends until it closes or `timeout` passes.
std::string read_all(int fd, std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) {
  std::string out;
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, int(left.count())) <= 0) break;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, std::size_t(n));
  }
  return out;
}

// Sends `request` on a new connection and returns the whole answer (the connection closed).
std::string exchange(int port, const std::string& request) {
  const int fd = connect_to(port);
  if (fd < 0) return "connect failed";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out = read_all(fd);
  ::close(fd);
  return out;
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

TEST(HttpServer, GetAndHeadAnswer) {
  Running r;
  const int port = r.server.port();
  ASSERT_GT(port, 0);
  std::string a = exchange(port, "GET /hello?x=1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 200")) << a;
  EXPECT_NE(a.find("Content-Length: 17\r\n"), std::string::npos) << a;
  EXPECT_NE(a.find("\r\n\r\nhello /hello?x=1\n"), std::string::npos) << a;
  a = exchange(port, "HEAD /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 200")) << a;
  EXPECT_NE(a.find("Content-Length: 13\r\n"), std::string::npos) << a;
  EXPECT_EQ(a.substr(a.find("\r\n\r\n") + 4), "") << "HEAD: no body";
  a = exchange(port, "GET /other HTTP/1.0\r\n\r\n");
  EXPECT_TRUE(starts_with(a, "HTTP/1.0 404")) << a;
  EXPECT_EQ(r.server.requests_total(), 3u);
}

TEST(HttpServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  Running r;
  const int fd = connect_to(r.server.port());
  ASSERT_GE(fd, 0);
  const std::string two = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\nGET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  ::send(fd, two.data(), two.size(), MSG_NOSIGNAL);
  const std::string a = read_all(fd);
  ::close(fd);
  std::size_t n = 0;
  for (std::size_t at = a.find("HTTP/1.1 200"); at != std::string::npos; at = a.find("HTTP/1.1 200", at + 1)) ++n;
  EXPECT_EQ(n, 2u) << a;
}

TEST(HttpServer, OtherMethodsAre405OrOnUnservedPaths404AndTheirBodyIsNeverRead) {
  Running r;
  // A body announced as 2 GB: answered at once, without waiting for it.
  const auto t0 = std::chrono::steady_clock::now();
  std::string a = exchange(r.server.port(), "POST /hello HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000000\r\n\r\nxxxx");
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 405")) << a;
  EXPECT_NE(a.find("Allow: GET, HEAD\r\n"), std::string::npos) << a;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  a = exchange(r.server.port(), "OPTIONS /hello HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 405")) << a;
  a = exchange(r.server.port(), "DELETE /hello?x HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 405")) << a;
  // A path the server does not serve: 404, whatever the method (its body unread too).
  a = exchange(r.server.port(), "POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000000\r\n\r\nxx");
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 404")) << a;
  EXPECT_EQ(a.find("Allow:"), std::string::npos) << a;
  EXPECT_EQ(r.server.requests_total(), 0u) << "the handler never ran";
}

TEST(HttpServer, GetWithABodyIs413) {
  Running r;
  std::string a = exchange(r.server.port(), "GET /hello HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 413")) << a;
  a = exchange(r.server.port(),
               "GET /hello HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 413")) << a;
}

TEST(HttpServer, OversizedHeadersAre431AndGarbageIs400) {
  HttpLimits l;
  l.header_bytes = 1024;
  Running r(l);
  std::string a = exchange(r.server.port(), "GET /hello HTTP/1.1\r\nX-Big: " + std::string(4000, 'a') + "\r\n\r\n");
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 431")) << a.substr(0, 80);
  a = exchange(r.server.port(), "GET /" + std::string(4000, 'b') + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 431")) << a.substr(0, 80);
  a = exchange(r.server.port(), "\x16\x03\x01 not http at all\r\n\r\n");  // a TLS hello, say
  EXPECT_TRUE(starts_with(a, "HTTP/1.1 400")) << a.substr(0, 80);
}

TEST(HttpServer, SlowAndIdleClientsAreClosedAtTheDeadlineAndOthersAreServed) {
  HttpLimits l;
  l.request_deadline = std::chrono::milliseconds(300);
  Running r(l);
  const int idle = connect_to(r.server.port());
  const int slow = connect_to(r.server.port());
  ASSERT_GE(idle, 0);
  ASSERT_GE(slow, 0);
  ::send(slow, "GET /hel", 8, MSG_NOSIGNAL);
  // Meanwhile another client is served at once.
  EXPECT_TRUE(starts_with(exchange(r.server.port(), "GET /hello HTTP/1.1\r\nConnection: close\r\n\r\n"), "HTTP/1.1 200"));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(read_all(idle, std::chrono::milliseconds(2000)), "") << "closed without an answer";
  EXPECT_EQ(read_all(slow, std::chrono::milliseconds(2000)), "");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500)) << "closed by the deadline";
  ::close(idle);
  ::close(slow);
}

TEST(HttpServer, ConnectionsBeyondTheLimitAre503) {
  HttpLimits l;
  l.max_connections = 2;
  Running r(l);
  const int a = connect_to(r.server.port()), b = connect_to(r.server.port());
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both accepted
  EXPECT_TRUE(starts_with(exchange(r.server.port(), "GET /hello HTTP/1.1\r\n\r\n"), "HTTP/1.1 503"));
  EXPECT_GE(r.server.rejected_total(), 1u);
  ::close(a);
  ::close(b);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // their slots free again
  EXPECT_TRUE(starts_with(exchange(r.server.port(), "GET /hello HTTP/1.1\r\nConnection: close\r\n\r\n"), "HTTP/1.1 200"));
}

TEST(HttpServer, BindErrorsAreOneLine) {
  Running r;
  HttpServer second([](const HttpRequest&) { return HttpResponse{}; });
  try {
    second.bind("127.0.0.1", r.server.port(), "127.0.0.1:" + std::to_string(r.server.port()));
    FAIL() << "bound a taken port";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot listen on 127.0.0.1:"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  // stop() before serve(): serve() returns at once.
  HttpServer third([](const HttpRequest&) { return HttpResponse{}; });
  third.bind("127.0.0.1", 0, "127.0.0.1:0");
  third.stop();
  third.serve();
}

}  // namespace
}  // namespace reveal::agent
