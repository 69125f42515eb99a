// The agent's HTTP/1.1 server: GET and HEAD only, every request bounded in size and time, a fixed
// number of connections, one thread. Built on Boost.Beast (Debian libboost-dev, header-only):
// its request parser takes explicit header and body limits and its stream a deadline for each
// operation, which bounds slow clients as well as large ones; the server never reads or inflates
// a request body. (cpp-httplib 0.11, Debian's, has neither line, header nor total-time limits;
// libmicrohttpd's timeouts count inactivity only, which a client sending a byte a second
// resets.)
//
// Per connection, in order:
//   * over HttpLimits::max_connections open at once: "503 Service Unavailable" (Retry-After: 1),
//     closed, without reading;
//   * the request line and headers must arrive within request_deadline and fit header_bytes:
//     otherwise closed (timeout) or "431 Request Header Fields Too Large"; a malformed request
//     "400 Bad Request"; both close the connection;
//   * a method other than GET or HEAD: "405 Method Not Allowed" with "Allow: GET, HEAD" on a path
//     the server serves (the `serves` predicate; all paths when none is given), "404 Not Found"
//     on any other; its body left unread, connection closed;
//   * GET or HEAD with a body (Content-Length > 0, chunked): "413 Content Too Large", closed;
//     (after a refusal, what the client still sends is read and dropped for up to 0.5 s and
//     1 MiB before the close, so that its answer is not lost to a reset);
//   * otherwise the handler's answer (HEAD: its headers and Content-Length, no body), written
//     within write_deadline; the connection then waits up to idle_deadline for the next request,
//     for at most max_requests_per_connection requests.
// The handler runs on the server's thread: it must be quick (the agent's routes render from a
// snapshot under a mutex) and must not throw (an exception becomes "500 Internal Server Error").
// Shapes: bodies are std::string; times in milliseconds.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reveal::agent {

struct HttpLimits {
  std::size_t max_connections = 512;  // idle ones cost a socket and no buffer until they send
  std::size_t header_bytes = 8192;  // request line and headers together
  std::chrono::milliseconds request_deadline{5000};
  std::chrono::milliseconds write_deadline{10000};
  std::chrono::milliseconds idle_deadline{5000};
  std::size_t max_requests_per_connection = 100;
};

struct HttpRequest {
  std::string_view method;  // "GET" or "HEAD"
  std::string_view target;  // as sent: path and query, e.g. "/metrics?x=1"
  std::string_view path;    // target up to '?'
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;
// Whether a path (target up to '?') is one the handler serves: only to tell 405 from 404 for
// methods the server refuses before the handler.
using HttpPathFilter = std::function<bool(std::string_view path)>;

class HttpServer {
 public:
  HttpServer(HttpHandler handler, HttpLimits limits = {}, HttpPathFilter serves = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds (host, port) and listens, without serving yet. Throws std::runtime_error (one line
  // naming `listen`, the configured text) when the host does not resolve or the port cannot be
  // bound. SO_REUSEADDR only: a second agent cannot share the port.
  void bind(const std::string& host, int port, const std::string& listen);
  // Serves until stop(); call from one thread.
  void serve();
  // Thread-safe, also before serve(); serve() returns soon after. The listening socket and open
  // connections close when the server is destroyed.
  void stop();

  // The bound port (after bind(); useful with port 0: the kernel's choice).
  int port() const;
  // Connections open now and requests answered since start (tests, /metrics).
  std::size_t open_connections() const;
  std::size_t requests_total() const;
  std::size_t rejected_total() const;  // 503 (too many connections), 4xx before the handler

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reveal::agent
