// The agent's HTTP routes and binding: see http_routes.h.
#include "agent/http_routes.h"

#include <netdb.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace reveal::agent {
namespace {

// process_cpu_seconds_total and process_resident_memory_bytes from /proc/self.
void read_process(double& cpu_s, double& rss_bytes) {
  std::ifstream st("/proc/self/stat");
  std::string line;
  if (std::getline(st, line)) {
    const auto close = line.rfind(')');
    if (close != std::string::npos) {
      std::istringstream in(line.substr(close + 2));
      std::string f;
      unsigned long long utime = 0, stime = 0;
      for (int field = 3; field <= 15 && (in >> f); ++field) {
        if (field == 14) utime = std::strtoull(f.c_str(), nullptr, 10);
        if (field == 15) stime = std::strtoull(f.c_str(), nullptr, 10);
      }
      cpu_s = double(utime + stime) / double(sysconf(_SC_CLK_TCK));
    }
  }
  std::ifstream sm("/proc/self/statm");
  unsigned long long size = 0, resident = 0;
  if (sm >> size >> resident) rss_bytes = double(resident) * double(sysconf(_SC_PAGESIZE));
}

}  // namespace

void add_routes(httplib::Server& server, SharedState& shared) {
  server.Get("/metrics", [&shared](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<PiMutex> lock(shared.mu);
    if (shared.rendered_seq != shared.snap.samples_total) {
      read_process(shared.snap.process_cpu_seconds, shared.snap.process_resident_bytes);
      shared.metrics_text = render_metrics(shared.snap);
      shared.rendered_seq = shared.snap.samples_total;
    }
    res.set_content(shared.metrics_text, "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/incidents", [&shared](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<PiMutex> lock(shared.mu);
    res.set_content(render_incidents_json(shared.snap), "application/json");
  });
  server.Get("/healthz", [&shared](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<PiMutex> lock(shared.mu);
    const std::int64_t age = monotonic_ns() - shared.snap.last_sample_monotonic_ns;
    if (shared.replay_done || (shared.snap.samples_total > 0 && age < 3 * shared.interval_ns + 2'000'000'000)) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content(shared.snap.samples_total == 0 ? "no sample yet\n"
                                                     : "no sample for " + std::to_string(age / 1'000'000'000) + " s\n",
                      "text/plain");
    }
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("reveal agent: /metrics /incidents /healthz\n", "text/plain");
  });
  // cpp-httplib's default socket options add SO_REUSEPORT, which lets a second agent bind the
  // same port and silently share the scrapes: keep SO_REUSEADDR only.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // Idle or slow clients must not hold every worker: more workers than cpp-httplib's default
  // 8, and short read/keep-alive timeouts (a scrape is one quick request).
  server.new_task_queue = [] { return new httplib::ThreadPool(16); };
  server.set_read_timeout(1, 0);
  server.set_keep_alive_timeout(1);
  // The served paths answer other methods with 405 and the methods they allow.
  const auto not_allowed = [](const httplib::Request&, httplib::Response& res) {
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("method not allowed: use GET\n", "text/plain");
  };
  const char* served = R"(/(metrics|incidents|healthz)?)";
  server.Post(served, not_allowed);
  server.Put(served, not_allowed);
  server.Patch(served, not_allowed);
  server.Delete(served, not_allowed);
}

void bind_address(httplib::Server& server, const std::pair<std::string, int>& address, const std::string& listen) {
  // A host that does not resolve is named as such (bind() would leave an unrelated errno).
  {
    addrinfo hints{}, *ai = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    const int rc = getaddrinfo(address.first.c_str(), nullptr, &hints, &ai);
    if (rc != 0)
      throw std::runtime_error("cannot listen on " + listen + ": address '" + address.first +
                               "' does not resolve (" + gai_strerror(rc) + ")");
    freeaddrinfo(ai);
  }
  errno = 0;
  if (!server.bind_to_port(address.first.c_str(), address.second))
    throw std::runtime_error("cannot listen on " + listen + ": " + std::strerror(errno ? errno : EADDRINUSE));
}

}  // namespace reveal::agent
