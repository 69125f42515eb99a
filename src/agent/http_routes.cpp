// The agent's HTTP routes and binding: see http_routes.h.
#include "agent/http_routes.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

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

bool served_path(std::string_view path) {
  return path == "/metrics" || path == "/incidents" || path == "/healthz" || path == "/";
}

HttpHandler routes(SharedState& shared) {
  return [&shared](const HttpRequest& req) {
    HttpResponse res;
    if (req.path == "/metrics") {
      std::lock_guard<PiMutex> lock(shared.mu);
      if (shared.rendered_seq != shared.snap.samples_total) {
        read_process(shared.snap.process_cpu_seconds, shared.snap.process_resident_bytes);
        shared.metrics_text = render_metrics(shared.snap);
        shared.rendered_seq = shared.snap.samples_total;
      }
      res.content_type = "text/plain; version=0.0.4; charset=utf-8";
      res.body = shared.metrics_text;
    } else if (req.path == "/incidents") {
      std::lock_guard<PiMutex> lock(shared.mu);
      res.content_type = "application/json";
      res.body = render_incidents_json(shared.snap);
    } else if (req.path == "/healthz") {
      std::lock_guard<PiMutex> lock(shared.mu);
      const std::int64_t age = monotonic_ns() - shared.snap.last_sample_monotonic_ns;
      if (!shared.snap.store_error.empty()) {
        res.status = 503;
        res.body = "store write failed, samples are no longer stored: " + shared.snap.store_error + "\n";
      } else if (shared.replay_done || (shared.snap.samples_total > 0 && age < 3 * shared.interval_ns + 2'000'000'000)) {
        res.body = "ok\n";
      } else {
        res.status = 503;
        res.body = shared.snap.samples_total == 0 ? "no sample yet\n"
                                                  : "no sample for " + std::to_string(age / 1'000'000'000) + " s\n";
      }
    } else if (req.path == "/") {
      res.body = "reveal agent: /metrics /incidents /healthz\n";
    } else {
      res.status = 404;
      res.body = "not found: /metrics /incidents /healthz\n";
    }
    return res;
  };
}

}  // namespace reveal::agent
