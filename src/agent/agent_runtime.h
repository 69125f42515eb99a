// The `reveal agent` daemon loop: a sample source (live probes, or a recording replayed in real
// time), the rolling store, the streaming detector and the HTTP server (reveal/agent.h).
//
// Threads: the caller's thread samples, stores and scores (at real-time priority 1 with
// sampling_priority = "realtime", within the sampler's CPU budget; model refits at normal
// priority: reveal/sampler.h, "Priority"); one thread serves HTTP; one waits
// for signals (SIGTERM/SIGINT: stop, flush the store, exit 0; SIGHUP: reload the
// configuration through `reload`). HTTP handlers read the snapshot under a mutex held only to
// copy (sampling side) or render (HTTP side); /metrics renders at most once per sample and
// serves that text to every scrape until the next sample.
//
// The pieces: agent_runtime.cpp (start-up, the per-sample loop, SIGHUP reload, shutdown),
// http_routes.h (the routes and binding), replay.h (a recording served in real time),
// snapshot.h (the state the HTTP side reads); samples go to the store through
// reveal/recorder.h.
#pragma once

#include <functional>
#include <string>

#include "reveal/agent_config.h"

namespace reveal::agent {

struct RunOptions {
  AgentConfig config;
  // Re-reads the configuration (file, then flags) for SIGHUP; throws ConfigError. Null: SIGHUP
  // only logs that there is no file to reload.
  std::function<AgentConfig()> reload;
  std::string replay;              // recording to serve instead of live probes ("" = live)
  bool exit_after_replay = false;  // exit 0 once the replay's last sample is served
  bool quiet = false;              // no start/stop/incident lines on stderr
};

// Runs until SIGTERM/SIGINT (or the replay ends with exit_after_replay). Returns the exit code;
// throws std::runtime_error (one line) when it cannot start: the port is taken, the store
// cannot be created, the replay file does not load, the options do not fit the detector.
int run(const RunOptions& opts);

// Throws std::runtime_error (one line) when the detector options the configuration implies
// (sample counts from durations) cannot work, e.g. a warm-up shorter than 4 windows.
void check_detector_options(const AgentConfig& cfg);

}  // namespace reveal::agent
