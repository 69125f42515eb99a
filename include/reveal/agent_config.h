// Configuration of `reveal agent`: defaults, then the TOML file (--config), then flags.
// SIGHUP re-reads the file: keys marked (reload) take effect at once; the others need a
// restart and a changed value is reported on stderr as "ignored until restart".
//
// File format (deploy/reveal-agent.toml is the documented example):
//   listen = "127.0.0.1:9797"          # host:port of the HTTP server
//   root = "/"                         # read /proc and /sys under this directory
//   interval = "1s"                    # sampling interval (duration string)
//   probes = ["proc.*", "sys.net"]     # only these probes (default: all enabled by default)
//   exclude = ["perf.uncore"]          # skip these probes
//   config_interval = "60s"            # host configuration re-read period
//   sampling_priority = "realtime"     # "realtime": the sampling thread at SCHED_RR priority 1
//                                      # when permitted (CAP_SYS_NICE or RLIMIT_RTPRIO >= 1; else
//                                      # one line on stderr and normal priority), within a CPU
//                                      # budget of 10 % of a core (bursts up to 500 ms), model
//                                      # refits at normal priority (reveal/sampler.h, "Priority");
//                                      # "normal": the thread as started
//   [store]
//   path = "/var/lib/reveal/agent.db"  # rolling store; the previous one is kept as <path>.prev
//   max_age = "24h"                    # (reload) drop samples older than this
//   max_size = "256MiB"                # (reload) and keep the sample data below this size
//   [metrics]
//   channels = ["*"]                   # (reload) raw channels shown on /metrics: globs (reveal/glob.h)
//   [kubernetes]
//   pod_resources_socket = "..."       # the kubelet's pod-resources socket; unset:
//                                      # <root>/var/lib/kubelet/pod-resources/kubelet.sock
//   pod_resources_interval = "10s"     # ask it which pod holds each GPU this often ("0s": never;
//                                      # asked only while the host has GPUs and the socket exists)
//   [detect]
//   window = 3                         # samples per window
//   stride = 1                         # samples between windows
//   trail = 0                          # samples of the trailing mean the robust-z detector also
//                                      # scores (WindowOptions::trail; ≤ window: not scored, the
//                                      # agent's default; `reveal detect` scores 10)
//   warmup = "120s"                    # history needed before the first model is fitted
//   refit = "300s"                     # (reload) refit the reference model this often
//   history = "1h"                     # (reload) reference history length
//   min_windows = 2                    # (reload) anomalous windows in a row that open an incident
//   end_after = 3                      # (reload) normal windows in a row that close it
//   min_duration = "10s"               # (reload) how long an incident must last to be one
//                                      # (IncidentRule::min_duration_s); a shorter one is a
//                                      # transient, never reported; "0s" reports every one
//   false_per_day = 1.0                # (reload, at the next refit) expected false incidents per
//                                      # day: the EVT-calibrated fused score's rate (offline.h)
//   seed = 42                          # Isolation Forest seed
//   workload_changes = true            # tell workload changes from incidents, re-learn (streaming.h)
//   relearn = "30s"                    # rows of a new regime, past its transition, to learn it
//   regimes = 8                        # past regimes' models remembered (0..64)
// Durations: parse_duration() strings ("90s", "2m", "500ms", "1h"). Sizes: bytes with an
// optional unit B, kB/MB/GB (10^3) or KiB/MiB/GiB (2^10), e.g. "256MiB".
// Unknown keys and wrong types are errors, never silently ignored.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/units.h"  // parse_duration, parse_size

namespace reveal {

struct StreamingOptions;
struct IncidentRule;

struct AgentConfig {
  std::string listen = "127.0.0.1:9797";
  std::string root = "/";
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  std::vector<std::string> probes, exclude;
  std::chrono::nanoseconds config_interval = std::chrono::seconds(60);
  bool realtime_sampling = true;  // sampling_priority: "realtime" (true) or "normal"

  std::string store_path = "/var/lib/reveal/agent.db";
  std::chrono::nanoseconds store_max_age = std::chrono::hours(24);
  std::uint64_t store_max_bytes = 256ull << 20;

  std::vector<std::string> metric_channels = {"*"};

  // [kubernetes]: the kubelet's pod-resources socket ("": <root>/var/lib/kubelet/pod-resources/
  // kubelet.sock), asked this often which pod holds each GPU (0: never).
  std::string pod_resources_socket;
  std::chrono::nanoseconds pod_resources_interval = std::chrono::seconds(10);

  // trail: off by default in the agent, whose reference moves with the host (refits, regimes):
  // on the benchmark's host days, replayed, a 10-sample trail made incidents outlast their
  // faults (day 6: p90 3 → 24 s) and named memory for CPU faults, for no event F1 gained
  // (docs/BENCHMARKS.md, 2026-12-03). `reveal detect`'s whole-run reference is where a moderate
  // shift that holds otherwise stays under the threshold.
  std::size_t window = 3, stride = 1, trail = 0;
  std::chrono::nanoseconds warmup = std::chrono::seconds(120);
  std::chrono::nanoseconds refit = std::chrono::seconds(300);
  std::chrono::nanoseconds history = std::chrono::hours(1);
  int min_windows = 2, end_after = 3;
  std::chrono::nanoseconds min_duration = std::chrono::seconds(10);
  double false_per_day = 1.0;
  std::uint64_t seed = 42;
  bool workload_changes = true;
  std::chrono::nanoseconds relearn = std::chrono::seconds(30);
  std::size_t regimes = 8;
};

// One-line error: "<file>:<line>:<col>: <what>" (or "<file>: <what>" without a position).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads `path` over `base` (keys absent from the file keep base's value). Throws ConfigError
// for a missing/unreadable file, TOML syntax errors, unknown keys, wrong types, bad durations
// or sizes, and values out of range (interval < 1ms, window < 2, stride < 1, listen without a
// port, max_size < 1 MiB, sampling_priority other than "realtime" or "normal").
AgentConfig load_agent_config(const std::filesystem::path& path, const AgentConfig& base = {});

// "listen" split into host and port; nullopt when malformed (no ':', port not 1..65535).
std::optional<std::pair<std::string, int>> parse_listen(std::string_view listen);

// Whole intervals in d (at least 1): a duration key in samples.
std::size_t samples_in(std::chrono::nanoseconds d, std::chrono::nanoseconds interval);

// The agent's streaming detector options (reveal/streaming.h) for this configuration: its
// [detect] keys converted to samples at its interval (warm-up and re-learning at least 4
// windows: window + 3 × stride samples), and the agent's 10 s start-up settle.
// The one mapping `reveal agent` and `reveal detect --streaming` share.
StreamingOptions streaming_options(const AgentConfig& c);
// Its incident rule: min_windows, end_after, min_duration (reveal/incident.h).
IncidentRule incident_rule(const AgentConfig& c);

// Keys whose value differs between a and b and that only a restart applies (for SIGHUP).
std::vector<std::string> restart_only_changes(const AgentConfig& a, const AgentConfig& b);

}  // namespace reveal
