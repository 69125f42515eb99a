// `reveal agent` daemon loop; contract in agent_runtime.h.
#include "agent/agent_runtime.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>


#include "agent/gpu_pod_watcher.h"
#include "agent/http_routes.h"
#include "agent/replay.h"
#include "agent/restart.h"
#include "agent/snapshot.h"
#include "reveal/absence_tracker.h"
#include "reveal/agent.h"
#include "reveal/host_info.h"
#include "reveal/recorder.h"
#include "reveal/sampler.h"
#include "reveal/store.h"
#include "reveal/streaming.h"
#include "reveal/tenants.h"
#include "reveal/version.h"
#include "telemetry/kubelet/pod_resources.h"

namespace reveal::agent {
namespace {

namespace fs = std::filesystem;

void log_line(bool quiet, const std::string& s) {
  if (!quiet) std::fprintf(stderr, "reveal agent: %s\n", s.c_str());
}

// Moves a previous store (and its side files, store_side_files) to <path>.prev.
// Refuses (StoreError) when either is not a store or the store is held by a running writer.
void rotate_previous(const fs::path& path) {
  std::error_code ec;
  check_replaceable_store(path);
  if (!fs::exists(path, ec)) return;
  check_replaceable_store(path.string() + ".prev");
  const auto move = [&](const std::string& sfx) {
    const fs::path from = path.string() + sfx, to = path.string() + ".prev" + sfx;
    fs::remove(to, ec);
    if (fs::exists(from, ec)) fs::rename(from, to, ec);
  };
  move("");
  for (const auto& side : store_side_files()) move(side.suffix);
}

std::atomic<bool> g_stop{false};
std::atomic<bool> g_reload{false};

void signal_thread(sigset_t set) {
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGHUP) {
      g_reload.store(true);
    } else {
      g_stop.store(true);
      return;
    }
  }
}

// Where samples come from: live probes, or a recording replayed (`sampler` null), and the run
// metadata the store gets.
struct Source {
  std::unique_ptr<Sampler> sampler;
  Recording replay;
  RunMetadata meta;
  std::vector<ChannelInfo> channels;
};

// Opens the probes or loads the replay; a replay sets cfg.interval to its own.
Source open_source(const RunOptions& opts, AgentConfig& cfg) {
  Source src;
  RunMetadata& meta = src.meta;
  if (opts.replay.empty()) {
    src.sampler = std::make_unique<Sampler>(make_probes(cfg.probes, cfg.exclude), cfg.root);
    fill_host_info(cfg.root, meta);
    meta.probes = src.sampler->probe_records();
    meta.root = cfg.root;
    src.channels = src.sampler->channels();
    meta.command = "reveal agent";
  } else {
    src.replay = load_recording(opts.replay);
    if (src.replay.t_unix_ns.size() < 2) throw std::runtime_error("replay '" + opts.replay + "' holds fewer than 2 samples");
    meta = src.replay.meta;
    src.channels = src.replay.channels;
    meta.command = "reveal agent --replay " + opts.replay;
    cfg.interval = std::chrono::nanoseconds(std::int64_t(std::max(src.replay.meta.interval_s, 1e-3) * 1e9));
  }
  meta.interval_s = double(cfg.interval.count()) * 1e-9;
  meta.reveal_version = kVersion;
  meta.start_unix_ns = realtime_ns();
  meta.end_unix_ns = 0;
  meta.complete = true;
  return src;
}

// The sampling side: each sample is stored, scored, logged and copied into the snapshot.
class SampleLoop {
 public:
  SampleLoop(const RunOptions& opts, AgentConfig& cfg, const Source& src, Recorder& recorder,
             StreamingDetector& detector, AbsenceTracker& absences, SharedState& shared)
      : opts_(opts), cfg_(cfg), src_(src), recorder_(recorder), detector_(detector), absences_(absences),
        shared_(shared), store_path_(cfg.store_path), last_t_(src.meta.start_unix_ns) {}

  void on_sample(std::int64_t t, std::span<const double> row, std::span<const Event> events);
  // SIGHUP: re-reads the configuration and applies what may change while running.
  void apply_reload();
  // The agent stops (SIGTERM, SIGINT, the end of a replay): what the detector has open ends
  // now (StreamingDetector::end_segment), noted in the log and the store as any close, so the
  // store says how each incident ended and a replay of it (`reveal detect --streaming`, which
  // ends the segment at the agent_restart that follows) reports the same.
  void stop();

  std::uint64_t samples() const { return samples_; }
  std::int64_t last_t() const { return last_t_; }
  const std::string& store_error() const { return store_error_; }

 private:
  // Keep detecting and serving; say so once, on the log, on /metrics (reveal_store_write_failed)
  // and on /healthz (503).
  void store_failed(const std::exception& e) {
    store_error_ = e.what();
    log_line(false, "store write failed, samples are no longer stored: " + store_error_);
    std::lock_guard<PiMutex> lock(shared_.mu);
    shared_.snap.store_error = store_error_;
    shared_.rendered_seq = ~0ull;
  }
  // Incidents are logged and kept in the store as events (source "agent"), so they outlive the
  // process.
  void note(std::int64_t t, const char* kind, const Incident& inc, const std::string& line);
  void note_incidents(std::int64_t t, const StreamUpdate& u, const AbsenceUpdate& au);
  // Names the open (and just closed) incident's tenants from the recorder's recent scans, and
  // withdraws an incident that is a new workload starting (TenantFeed, reveal/streaming.h;
  // the replay runs the same code). Notes a withdrawal; true when there was one.
  bool feed_tenants(std::int64_t t, const StreamUpdate& u);
  const TenantTimeline& tenant_timeline() const {
    return src_.sampler ? recorder_.recent_tenants() : src_.replay.tenants;
  }
  // The GPU holders' changes the watcher queued, stamped `t` and appended to `events` for the
  // store (and kept in kubelet_history_ for name_gpu_pods()); called only when there are some.
  std::span<const Event> take_kubelet_events(std::int64_t t, std::span<const Event> events);
  // Names the pods on the GPUs of the incident just closed, the change just closed, and the open
  // incident when it first shows (attach_gpu_pods(), from the holders' events).
  void name_gpu_pods(const StreamUpdate& u);

  const RunOptions& opts_;
  AgentConfig& cfg_;
  const Source& src_;
  Recorder& recorder_;
  StreamingDetector& detector_;
  AbsenceTracker& absences_;
  SharedState& shared_;
  const fs::path store_path_;  // cfg.store_path, converted once
  std::string store_error_;
  std::int64_t last_t_;
  std::uint64_t samples_ = 0;
  TenantFeed tenants_;
  std::int64_t pending_noted_ = 0;  // start of the last pending incident noted
  std::uint64_t config_seen_ = 0;   // recorder_.config_version() last copied to the snapshot
  GpuPodsHistory kubelet_history_;  // the GPU holders' events stored so far (bounded per GPU)
  std::vector<Event> merged_;        // a sample's events with the kubelet's appended
  std::int64_t gpu_pods_onset_ = 0;    // start of the open incident last named
};

void SampleLoop::on_sample(std::int64_t t, std::span<const double> row, std::span<const Event> events) {
  std::span<const Event> stored = events;
  if (shared_.kubelet_events_pending.load(std::memory_order_acquire)) stored = take_kubelet_events(t, events);
  for (const Event& e : events) kubelet_history_.add(e);  // a replay's recorded holders and restarts
  if (store_error_.empty()) {
    try {
      recorder_.append(t, row, stored);
    } catch (const std::exception& e) {
      store_failed(e);
    }
  }
  last_t_ = t;
  const std::int64_t d0 = monotonic_ns();
  // A (re)fit takes milliseconds to seconds of CPU and can wait: at normal priority, outside
  // the real-time sampler's budget (reveal/sampler.h, "Priority").
  std::optional<Sampler::AtNormalPriority> refit_at_normal;
  if (src_.sampler && detector_.fit_due()) refit_at_normal.emplace(*src_.sampler);
  const StreamUpdate& u = detector_.push(t, row);
  refit_at_normal.reset();
  const AbsenceUpdate& au = absences_.push(t, row);
  const double detect_s = double(monotonic_ns() - d0) * 1e-9;
  ++samples_;
  const bool withdrawn = feed_tenants(t, u);
  if (!kubelet_history_.empty()) name_gpu_pods(u);
  note_incidents(t, u, au);
  std::lock_guard<PiMutex> lock(shared_.mu);
  update_snapshot(shared_.snap, {t, row, samples_, detect_s, withdrawn}, detector_, u, absences_, au, src_.sampler.get(),
                  store_path_);
  // Absences name the pods on their GPUs too (a GPU that fell off the bus: whose job lost it),
  // in the snapshot's copies: as `reveal detect` names them, from the holders at their start,
  // so only when the open ones changed (update_snapshot keeps the copies' pods otherwise).
  if (!kubelet_history_.empty() && au.changed) {
    for (auto& a : shared_.snap.active_absences) attach_gpu_pods(a.incident, kubelet_history_);
    if (au.closed)
      for (auto& inc : shared_.snap.recent_absences) attach_gpu_pods(inc, kubelet_history_);
  }
  // The configuration (reveal_host_config_info): copied only when a re-read found a change.
  if (recorder_.config_version() != config_seen_ && recorder_.config()) {
    config_seen_ = recorder_.config_version();
    shared_.snap.config = *recorder_.config();
  }
  // XID counts outlive the process (a file beside the store); a replay counts its own only.
  if (!events.empty() && note_gpu_events(shared_.snap, events) && src_.sampler &&
      !save_xid_counts(shared_.snap, gpu_xid_counts_path(store_path_)))
    log_line(false, "cannot save the XID counts beside the store: " + gpu_xid_counts_path(store_path_).string());
}

std::span<const Event> SampleLoop::take_kubelet_events(std::int64_t t, std::span<const Event> events) {
  merged_.assign(events.begin(), events.end());
  {
    std::lock_guard<PiMutex> lock(shared_.mu);
    for (Event& e : shared_.kubelet_events) {
      e.t_unix_ns = t;
      kubelet_history_.add(e);
      merged_.push_back(std::move(e));
    }
    shared_.kubelet_events.clear();
    shared_.kubelet_events_pending.store(false, std::memory_order_relaxed);
  }
  return merged_;
}

void SampleLoop::name_gpu_pods(const StreamUpdate& u) {
  const auto name = [this](Incident& inc) { attach_gpu_pods(inc, kubelet_history_); };
  // As `reveal detect` names them (attach_gpu_pods(DetectResult&, ...)): from the holders at
  // the start, by the GPUs of the incident as it ended; an open one when it first shows.
  if (u.closed)
    if (Incident* c = detector_.last_closed_for_evidence()) name(*c);
  if (u.change_closed)
    if (Incident* c = detector_.last_change_for_evidence()) name(*c);
  if (Incident* a = detector_.active_for_evidence(); a && a->start_unix_ns != gpu_pods_onset_) {
    gpu_pods_onset_ = a->start_unix_ns;
    name(*a);
  }
}

void SampleLoop::stop() {
  if (samples_ == 0) return;
  try {
    const StreamUpdate& u = detector_.end_segment();
    feed_tenants(last_t_, u);
    if (!kubelet_history_.empty()) name_gpu_pods(u);
    note_incidents(last_t_, u, AbsenceUpdate{});
  } catch (const std::exception& e) {  // the store is still flushed: nothing recorded is lost
    log_line(false, std::string("stopping: the open incident was not closed: ") + e.what());
  }
}

bool SampleLoop::feed_tenants(std::int64_t t, const StreamUpdate& u) {
  // A replay feeds the scans recorded with it (TenantFeed looks only at those up to t).
  if (!tenants_.after_push(detector_, u, tenant_timeline(), t)) return false;
  if (const auto& c = detector_.active_change())
    note(t, "incident_withdrawn", *c, "incident withdrawn: " + c->withdrawn);
  return true;
}

void SampleLoop::note(std::int64_t t, const char* kind, const Incident& inc, const std::string& line) {
  log_line(opts_.quiet, line);
  if (!store_error_.empty()) return;
  try {
    recorder_.append_event({t, "agent", kind, inc.peak_score, line});
  } catch (const std::exception& e) {
    store_failed(e);
  }
}

namespace {

// "; pods on its GPUs: gpu0 ml/trainer-0 (worker), ..." (at most three), or "".
std::string gpu_pods_note(const Incident& inc) {
  std::string o;
  for (std::size_t i = 0; i < inc.gpu_pods.size() && i < 3; ++i) {
    const GpuPod& p = inc.gpu_pods[i];
    o += (i ? ", " : "; pods on its GPUs: ") + p.gpu + " " + p.ns + "/" + p.pod + " (" + p.container + ")";
  }
  if (inc.gpu_pods.size() > 3) o += ", " + std::to_string(inc.gpu_pods.size() - 3) + " more";
  return o;
}

}  // namespace

void SampleLoop::note_incidents(std::int64_t t, const StreamUpdate& u, const AbsenceUpdate& au) {
  // An incident pending (not reported until it lasts detect.min_duration): noted once, when it
  // opens, so the store says when the agent first saw it.
  if (const Incident* p = detector_.pending(); p && p->start_unix_ns != pending_noted_) {
    pending_noted_ = p->start_unix_ns;
    note(t, "incident_pending", *p,
         "incident pending: " + std::string(to_string(p->subsystem)) + (p->top.empty() ? "" : " (" + p->top.front().name + ")") +
             ", reported if it lasts detect.min_duration");
  }
  const auto note_closed = [&] {
    const Incident& inc = detector_.closed().back();
    note(t, "incident_closed", inc,
         "incident closed: " + std::string(to_string(inc.subsystem)) + ", " +
             std::to_string(int(inc.end_s - inc.start_s + 0.5)) + " s" +
             (inc.top.empty() ? "" : " (" + inc.top.front().name + ")") +
             (inc.victims.empty() ? "" : "; hurt: " + inc.victims.front().text) +
             (inc.aggressors.empty() ? "" : "; neighbour: " + inc.aggressors.front().text) + gpu_pods_note(inc));
  };
  const Incident* opened = detector_.opened_incident();
  const bool closed = u.closed && !detector_.closed().empty();
  // One incident closed and another opened in one push (a second cause): the close comes first.
  // One opened and closed at once: its opening first.
  const bool close_first = closed && opened && opened != &detector_.closed().back();
  if (close_first) note_closed();
  if (opened) {
    const Incident& inc = *opened;
    note(t, "incident_opened", inc,
         "incident opened: " + std::string(to_string(inc.subsystem)) +
             (inc.top.empty() ? "" : " (" + inc.top.front().name + ")") + (inc.action.empty() ? "" : " — " + inc.action) +
             gpu_pods_note(inc));
  }
  if (closed && !close_first) note_closed();
  if (u.change_closed && !detector_.workload_changes().empty() && detector_.workload_changes().back().kind == "transient") {
    const Incident& c = detector_.workload_changes().back();
    note(t, "transient", c,
         "transient: " + std::string(to_string(c.subsystem)) + (c.top.empty() ? "" : " (" + c.top.front().name + ")") +
             ", " + c.withdrawn);
  } else if (u.change_closed && !detector_.workload_changes().empty()) {
    const Incident& c = detector_.workload_changes().back();
    note(t, "workload_change", c,
         "workload change: " + std::string(to_string(c.subsystem)) + " load moved" +
             (c.top.empty() ? "" : " (" + c.top.front().name + ")") + ", " +
             std::to_string(int(c.end_s - c.start_s + 0.5)) + " s, " + c.action +
             (c.aggressors.empty() ? "" : "; with it: " + c.aggressors.front().text));
  }
  for (std::size_t k = absences_.active().size() - au.opened; k < absences_.active().size(); ++k)
    note(t, "absence_opened", absences_.active()[k], "absence opened: " + absences_.active()[k].action);
  for (std::size_t k = absences_.closed().size() - au.closed; k < absences_.closed().size(); ++k)
    note(t, "absence_closed", absences_.closed()[k], "absence closed: " + absences_.closed()[k].action);
}

void SampleLoop::apply_reload() {
  g_reload.store(false);
  if (!opts_.reload) {
    log_line(opts_.quiet, "SIGHUP: no configuration file to reload");
    return;
  }
  try {
    AgentConfig next = opts_.reload();
    check_detector_options(next);
    for (const auto& key : restart_only_changes(cfg_, next)) log_line(opts_.quiet, "SIGHUP: '" + key + "' changed: ignored until restart");
    cfg_.store_max_age = next.store_max_age;
    cfg_.store_max_bytes = next.store_max_bytes;
    cfg_.metric_channels = next.metric_channels;
    cfg_.refit = next.refit;
    cfg_.history = next.history;
    cfg_.min_windows = next.min_windows;
    cfg_.end_after = next.end_after;
    cfg_.min_duration = next.min_duration;
    cfg_.false_per_day = next.false_per_day;
    recorder_.store().set_retention(cfg_.store_max_age.count(), cfg_.store_max_bytes);
    detector_.set_incident_rule(incident_rule(cfg_));
    detector_.set_refit_samples(samples_in(cfg_.refit, cfg_.interval));
    detector_.set_false_per_day(cfg_.false_per_day);
    detector_.set_history_samples(samples_in(cfg_.history, cfg_.interval));
    {
      std::lock_guard<PiMutex> lock(shared_.mu);
      shared_.snap.exported = export_mask(src_.channels, cfg_.metric_channels);
      shared_.snap.store_max_bytes = cfg_.store_max_bytes;
      shared_.rendered_seq = ~0ull;
    }
    log_line(opts_.quiet, "SIGHUP: configuration reloaded");
  } catch (const std::exception& e) {
    log_line(false, std::string("SIGHUP: configuration not reloaded, keeping the running one: ") + e.what());
  }
}

}  // namespace

void check_detector_options(const AgentConfig& cfg) {
  try {
    StreamingDetector probe({}, {}, streaming_options(cfg));
  } catch (const DetectError& e) {
    throw std::runtime_error(std::string("detector options: ") + e.what());
  }
}

int run(const RunOptions& opts) {
  AgentConfig cfg = opts.config;
  check_detector_options(cfg);
  const auto listen = parse_listen(cfg.listen);
  if (!listen) throw std::runtime_error("listen '" + cfg.listen + "' is not host:port");

  // Signals go to the signal thread only: block them before any other thread starts.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  g_stop.store(false);
  g_reload.store(false);

  const Source src = open_source(opts, cfg);
  const RunMetadata& meta = src.meta;
  const std::vector<ChannelInfo>& channels = src.channels;
  StreamingDetector detector(meta, channels, streaming_options(cfg));
  // Channels that stop producing data (absence_tracker.h): the same raw rows, a gap of at
  // least one window, as `reveal detect` reports them.
  AbsenceTracker absences(channels, cfg.window, meta.interval_s, streaming_options(cfg).detect.top_channels);

  // HTTP server: bind before touching the store, so a taken port changes nothing on disk.
  SharedState shared;
  shared.interval_ns = cfg.interval.count();
  init_snapshot(shared.snap, meta, channels, cfg, src.sampler != nullptr, absences);
  if (src.sampler) load_xid_counts(shared.snap, gpu_xid_counts_path(cfg.store_path));
  HttpServer server(routes(shared), HttpLimits{}, served_path);
  server.bind(listen->first, listen->second, cfg.listen);

  // The store: live, with the host configuration (snapshot, then changes), continued across
  // restarts when it can be (else moved to .prev, and why is logged); a replay's starts anew.
  std::optional<Recorder> recorder;
  if (src.sampler) {
    check_replaceable_store(cfg.store_path);  // a foreign file, a store another agent writes: untouched
    if (const std::string why = store_continuation_blocker(cfg.store_path, meta, channels); !why.empty()) {
      log_line(false, "starting a new store (the previous one kept as " + cfg.store_path + ".prev): " + why);
      rotate_previous(cfg.store_path);
    }
    recorder.emplace(cfg.store_path, meta, channels, cfg.root, samples_in(cfg.config_interval, cfg.interval),
                     StoreOpen::append);
  } else {
    rotate_previous(cfg.store_path);
    recorder.emplace(cfg.store_path, meta, channels);
  }
  recorder->store().set_retention(cfg.store_max_age.count(), cfg.store_max_bytes);
  {
    std::lock_guard<PiMutex> lock(shared.mu);
    shared.snap.config = recorder->config() ? *recorder->config() : src.replay.config;
  }
  if (const StoreContinuation& c = recorder->store().continuation(); c.continued) {
    // A restart: say so (log and store), and fit from the stored history instead of warming up.
    const std::string note = continuation_note(c, meta.start_unix_ns);
    log_line(opts.quiet, note);
    recorder->append_event({meta.start_unix_ns, "agent", "agent_restart",
                            double(meta.start_unix_ns - c.last_t_unix_ns) * 1e-9, note});
    Priming p;
    try {
      p = prime_from_store(detector, cfg.store_path, channels, c.last_t_unix_ns, meta.start_unix_ns, cfg.history);
    } catch (const std::exception& e) {
      p.skipped = e.what();
    }
    if (p.rows > 0)
      log_line(opts.quiet, "history: " + std::to_string(p.rows) + " stored samples" +
                               (detector.model_ready() ? ", reference fitted" : ", too few to fit yet"));
    else if (!p.skipped.empty())
      log_line(opts.quiet, "history not used: " + p.skipped);
  }
  if (src.sampler && has_probe(meta, "cgroup")) {  // tenant scans follow the cgroup probe's selection
    std::string why;
    if (!recorder->enable_tenant_scans(cfg.root, kTenantScanPeriod, why))
      log_line(opts.quiet, "no tenant scans (incidents will not name cgroups): " + why);
  }

  // Who holds each GPU (the kubelet's pod-resources API), live on a GPU host only.
  std::optional<GpuPodWatcher> gpu_pods;
  if (src.sampler && !shared.snap.gpus.empty() && cfg.pod_resources_interval.count() > 0)
    gpu_pods.emplace(shared,
                     cfg.pod_resources_socket.empty() ? telemetry::kubelet::default_pod_resources_socket(cfg.root)
                                                      : fs::path(cfg.pod_resources_socket),
                     cfg.pod_resources_interval, [&opts](const std::string& line) { log_line(opts.quiet, line); });

  std::thread http([&server] { server.serve(); });
  std::thread(signal_thread, sigs).detach();
  log_line(opts.quiet, "serving http://" + cfg.listen + "/metrics; " + std::to_string(channels.size()) +
                           " channels every " + std::to_string(cfg.interval.count() / 1000000) + " ms into " +
                           cfg.store_path + (opts.replay.empty() ? "" : " (replay of " + opts.replay + ")"));

  SampleLoop loop(opts, cfg, src, *recorder, detector, absences, shared);
  if (src.sampler) {
    // Sampler::run checks the stop flag after every tick; reloads are applied between ticks.
    Sampler& sampler = *src.sampler;
    SamplingPriority priority;
    priority.realtime = cfg.realtime_sampling;
    priority.note = [&opts](const std::string& line) { log_line(opts.quiet, line); };
    sampler.set_priority(std::move(priority));
    sampler.run(cfg.interval, 0, g_stop, [&](std::int64_t t, std::span<const double> row) {
      if (g_reload.load()) loop.apply_reload();
      loop.on_sample(t, row, sampler.events());
    });
  } else {
    replay_in_real_time(
        src.replay, g_stop, [&] { if (g_reload.load()) loop.apply_reload(); },
        [&](std::int64_t t, std::span<const double> row, std::span<const Event> events) { loop.on_sample(t, row, events); });
    {
      std::lock_guard<PiMutex> lock(shared.mu);
      shared.replay_done = true;
    }
    if (!g_stop.load()) log_line(opts.quiet, "replay finished after " + std::to_string(loop.samples()) + " samples");
    while (!g_stop.load() && !opts.exit_after_replay) {
      timespec ts{0, 200'000'000};
      nanosleep(&ts, nullptr);
      if (g_reload.load()) loop.apply_reload();
    }
  }

  loop.stop();
  gpu_pods.reset();
  server.stop();
  http.join();
  recorder->finish(loop.last_t(), 0);
  log_line(opts.quiet, "stopped after " + std::to_string(loop.samples()) + " samples; store " + cfg.store_path + " flushed");
  return loop.store_error().empty() ? 0 : 3;
}

}  // namespace reveal::agent
