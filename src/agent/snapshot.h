// What the agent's HTTP side reads: the AgentSnapshot (reveal/agent.h) and the state around it,
// shared between the sampling thread and the HTTP handlers; how the sampling side fills it.
//
// Locking: every field of SharedState is read and written under `mu`. The sampling thread
// holds it only to copy one sample's results in (update_snapshot), the handlers only to
// render (http_routes.h). `mu` inherits priority: the sampling thread may run at real-time
// priority (reveal/sampler.h, "Priority"), and a handler at normal priority that holds `mu`
// when the host is saturated would otherwise keep the sampler waiting as long as the handler
// itself waits for a CPU (priority inversion).
#pragma once

#include <atomic>

#include <pthread.h>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "reveal/absence_tracker.h"
#include "reveal/agent.h"
#include "reveal/agent_config.h"
#include "reveal/recording.h"
#include "reveal/sampler.h"
#include "reveal/streaming.h"

namespace reveal::agent {

// A mutex with priority inheritance (PTHREAD_PRIO_INHERIT; BasicLockable, for
// std::lock_guard): while a higher-priority thread waits for it, its holder runs at that
// priority.
class PiMutex {
 public:
  PiMutex() {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
    pthread_mutex_init(&m_, &a);
    pthread_mutexattr_destroy(&a);
  }
  ~PiMutex() { pthread_mutex_destroy(&m_); }
  PiMutex(const PiMutex&) = delete;
  PiMutex& operator=(const PiMutex&) = delete;
  void lock() { pthread_mutex_lock(&m_); }
  void unlock() { pthread_mutex_unlock(&m_); }

 private:
  pthread_mutex_t m_;
};

struct SharedState {
  PiMutex mu;
  AgentSnapshot snap;
  std::uint64_t rendered_seq = ~0ull;  // samples_total the cached /metrics text was rendered at
  std::string metrics_text;            // the cached /metrics text
  std::int64_t interval_ns = 1'000'000'000;  // sampling interval (/healthz's staleness bound)
  bool replay_done = false;            // a replay served its last sample (/healthz stays ok)
  // Changes of who holds each GPU (gpu_pods_events(), source "kubelet"), from the
  // pod-resources watcher to the sampling side, which stores them with its next sample;
  // kubelet_events_pending says there are some without taking the lock.
  std::vector<Event> kubelet_events;
  std::atomic<bool> kubelet_events_pending{false};
};

// Per channel: 1 when its name matches one of `globs` (glob_match), i.e. shown on /metrics.
std::vector<char> export_mask(const std::vector<ChannelInfo>& chans, const std::vector<std::string>& globs);

// The snapshot before the first sample: host, mode ("live" when `live`, else "replay"),
// channels, exported mask, values and scores NaN, probe list (a replay's available probes
// count as up), the absence sources, the store bound.
void init_snapshot(AgentSnapshot& s, const RunMetadata& meta, const std::vector<ChannelInfo>& channels,
                   const AgentConfig& cfg, bool live, const AbsenceTracker& absences);

// GPU health from the probes' events (nvml "xid": value = code, detail "gpu1 XID 79"; "gpu_lost":
// value = the GPU's index): XID counts by (GPU, code), gpu_up 0 after a loss or XID 79 (fell off
// the bus). Returns true when the XID counts changed (to be saved). Allocates only on events.
bool note_gpu_events(AgentSnapshot& s, std::span<const Event> events);

// The file beside the store that keeps XID counts across restarts: "<store>.xid-counts", one
// "<gpu> <xid> <count>" line each. Not a store side file: it is not moved to .prev at a start.
std::filesystem::path gpu_xid_counts_path(const std::filesystem::path& store_path);
// Reads it into s.xid_errors (a missing or malformed file: no counts, nothing thrown; at most
// 4096 lines). Writes it atomically (a temporary file renamed over it); false on failure.
void load_xid_counts(AgentSnapshot& s, const std::filesystem::path& path);
bool save_xid_counts(const AgentSnapshot& s, const std::filesystem::path& path);

// One sample as the sampling side took it.
struct SampleTaken {
  std::int64_t t_unix_ns = 0;
  std::span<const double> row;      // the raw sample
  std::uint64_t samples_total = 0;  // samples taken so far, this one included
  double detect_s = 0;              // seconds the detector and the absence tracker took on it
  bool withdrawn = false;           // the open incident was withdrawn after the push (TenantFeed)
};

// Copies one sample's results into `s` (the caller holds SharedState::mu): raw values, counts,
// model state, scores when a window was scored (`u`), incidents and absences (`au`), probe
// health from `sampler` (null for a replay), and every 16th sample the store's size on disk:
// the store at `store_path` with its data-holding side files (store_side_files).
void update_snapshot(AgentSnapshot& s, const SampleTaken& sample, const StreamingDetector& detector,
                     const StreamUpdate& u, const AbsenceTracker& absences, const AbsenceUpdate& au,
                     const Sampler* sampler, const std::filesystem::path& store_path);

}  // namespace reveal::agent
