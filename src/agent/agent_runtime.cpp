// `reveal agent` daemon loop; contract in agent_runtime.h.
#include "agent/agent_runtime.h"

#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <httplib.h>

#include "reveal/absence_tracker.h"
#include "reveal/agent.h"
#include "reveal/config.h"
#include "reveal/glob.h"
#include "reveal/host_info.h"
#include "reveal/sampler.h"
#include "reveal/store.h"
#include "reveal/streaming.h"
#include "reveal/version.h"

namespace reveal::agent {
namespace {

namespace fs = std::filesystem;

std::size_t samples_in(std::chrono::nanoseconds d, std::chrono::nanoseconds interval) {
  return std::size_t(std::max<std::int64_t>(1, d.count() / std::max<std::int64_t>(1, interval.count())));
}

StreamingOptions streaming_options(const AgentConfig& c) {
  StreamingOptions o;
  o.detect.window = {c.window, c.stride};
  o.detect.incident = {c.min_windows, c.end_after};
  o.detect.seed = c.seed;
  o.detect.false_per_day = c.false_per_day;
  o.warmup_samples = samples_in(c.warmup, c.interval);
  o.refit_samples = samples_in(c.refit, c.interval);
  o.history_samples = std::max(samples_in(c.history, c.interval), o.warmup_samples);
  // The agent's own start-up (loading, opening probes, the first store pages) is not the
  // host's normal behaviour: the first 10 s stay out of the reference.
  o.settle_samples = samples_in(std::chrono::seconds(10), c.interval);
  return o;
}

void log_line(bool quiet, const std::string& s) {
  if (!quiet) std::fprintf(stderr, "reveal agent: %s\n", s.c_str());
}

// Moves a previous store (and its -wal/-shm/-head companions) to <path>.prev.
// Refuses (StoreError) when either is not a store or the store is held by a running writer.
void rotate_previous(const fs::path& path) {
  std::error_code ec;
  check_replaceable_store(path);
  if (!fs::exists(path, ec)) return;
  check_replaceable_store(path.string() + ".prev");
  for (const char* sfx : {"", "-wal", "-shm", "-head"}) {
    const fs::path from = path.string() + sfx, to = path.string() + ".prev" + sfx;
    fs::remove(to, ec);
    if (fs::exists(from, ec)) fs::rename(from, to, ec);
  }
}

std::uint64_t file_bytes(const fs::path& p) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const char* sfx : {"", "-wal", "-head"}) {
    const auto n = fs::file_size(p.string() + sfx, ec);
    if (!ec) total += n;
  }
  return total;
}

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

std::vector<char> export_mask(const std::vector<ChannelInfo>& chans, const std::vector<std::string>& globs) {
  std::vector<char> m(chans.size(), 0);
  for (std::size_t i = 0; i < chans.size(); ++i)
    for (const auto& g : globs)
      if (glob_match(g, chans[i].name)) { m[i] = 1; break; }
  return m;
}

// Shared between the sampling thread and the HTTP handlers.
struct Shared {
  std::mutex mu;
  AgentSnapshot snap;
  std::uint64_t rendered_seq = ~0ull;  // samples_total the cached /metrics text was rendered at
  std::string metrics_text;
  std::int64_t interval_ns = 1'000'000'000;
  bool replay_done = false;
};

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

  // Source: live probes or a recording.
  std::unique_ptr<Sampler> sampler;
  Recording replay;
  RunMetadata meta;
  std::vector<ChannelInfo> channels;
  if (opts.replay.empty()) {
    sampler = std::make_unique<Sampler>(make_probes(cfg.probes, cfg.exclude), cfg.root);
    fill_host_info(cfg.root, meta);
    meta.probes = sampler->probe_records();
    meta.root = cfg.root;
    channels = sampler->channels();
    meta.command = "reveal agent";
  } else {
    replay = load_recording(opts.replay);
    if (replay.t_unix_ns.size() < 2) throw std::runtime_error("replay '" + opts.replay + "' holds fewer than 2 samples");
    meta = replay.meta;
    channels = replay.channels;
    meta.command = "reveal agent --replay " + opts.replay;
    cfg.interval = std::chrono::nanoseconds(std::int64_t(std::max(replay.meta.interval_s, 1e-3) * 1e9));
  }
  meta.interval_s = double(cfg.interval.count()) * 1e-9;
  meta.reveal_version = kVersion;
  meta.start_unix_ns = realtime_ns();
  meta.end_unix_ns = 0;
  meta.complete = true;

  StreamingDetector detector(meta, channels, streaming_options(cfg));
  // Channels that stop producing data (absence_tracker.h): the same raw rows, a gap of at
  // least one window, as `reveal detect` reports them.
  AbsenceTracker absences(channels, cfg.window, meta.interval_s, streaming_options(cfg).detect.top_channels);

  // HTTP server: bind before touching the store, so a taken port changes nothing on disk.
  Shared shared;
  shared.interval_ns = cfg.interval.count();
  {
    AgentSnapshot& s = shared.snap;
    s.hostname = meta.hostname;
    s.mode = opts.replay.empty() ? "live" : "replay";
    s.channels = channels;
    s.exported = export_mask(channels, cfg.metric_channels);
    s.values.assign(channels.size(), std::nan(""));
    s.anomaly_score = std::nan("");
    s.subsystem_score.fill(std::nan(""));
    s.process_start_unix_s = double(meta.start_unix_ns) * 1e-9;
    s.store_max_bytes = cfg.store_max_bytes;
    s.absence_sources = absences.sources();
    s.absence_incidents_total.assign(s.absence_sources.size(), 0);
    if (sampler) {
      for (const auto& p : meta.probes) s.probes.push_back({p.name, p.available, p.reason, false, 0, p.n_channels, 0, 0});
    } else {
      for (const auto& p : meta.probes) s.probes.push_back({p.name, p.available, p.reason, p.available, 0, p.n_channels, 0, 0});
    }
  }
  httplib::Server server;
  server.Get("/metrics", [&shared](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(shared.mu);
    if (shared.rendered_seq != shared.snap.samples_total) {
      read_process(shared.snap.process_cpu_seconds, shared.snap.process_resident_bytes);
      shared.metrics_text = render_metrics(shared.snap);
      shared.rendered_seq = shared.snap.samples_total;
    }
    res.set_content(shared.metrics_text, "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/incidents", [&shared](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(shared.mu);
    res.set_content(render_incidents_json(shared.snap), "application/json");
  });
  server.Get("/healthz", [&shared](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(shared.mu);
    const std::int64_t age = realtime_ns() - shared.snap.last_sample_unix_ns;
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
  // A host that does not resolve is named as such (bind() would leave an unrelated errno).
  {
    addrinfo hints{}, *ai = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    const int rc = getaddrinfo(listen->first.c_str(), nullptr, &hints, &ai);
    if (rc != 0)
      throw std::runtime_error("cannot listen on " + cfg.listen + ": address '" + listen->first +
                               "' does not resolve (" + gai_strerror(rc) + ")");
    freeaddrinfo(ai);
  }
  errno = 0;
  if (!server.bind_to_port(listen->first.c_str(), listen->second))
    throw std::runtime_error("cannot listen on " + cfg.listen + ": " + std::strerror(errno ? errno : EADDRINUSE));

  rotate_previous(cfg.store_path);
  StoreWriter store(cfg.store_path, meta, channels);
  store.set_retention(cfg.store_max_age.count(), cfg.store_max_bytes);
  std::optional<ConfigWatcher> config;
  if (sampler) {
    config.emplace(cfg.root, samples_in(cfg.config_interval, cfg.interval));
    store.append_config(meta.start_unix_ns, config->snapshot());
  }

  std::thread http([&server] { server.listen_after_bind(); });
  std::thread(signal_thread, sigs).detach();
  log_line(opts.quiet, "serving http://" + cfg.listen + "/metrics; " + std::to_string(channels.size()) +
                           " channels every " + std::to_string(cfg.interval.count() / 1000000) + " ms into " +
                           cfg.store_path + (opts.replay.empty() ? "" : " (replay of " + opts.replay + ")"));

  std::string store_error;
  std::int64_t last_t = meta.start_unix_ns;
  auto apply_reload = [&] {
    g_reload.store(false);
    if (!opts.reload) {
      log_line(opts.quiet, "SIGHUP: no configuration file to reload");
      return;
    }
    try {
      AgentConfig next = opts.reload();
      check_detector_options(next);
      for (const auto& key : restart_only_changes(cfg, next)) log_line(opts.quiet, "SIGHUP: '" + key + "' changed: ignored until restart");
      cfg.store_max_age = next.store_max_age;
      cfg.store_max_bytes = next.store_max_bytes;
      cfg.metric_channels = next.metric_channels;
      cfg.refit = next.refit;
      cfg.history = next.history;
      cfg.min_windows = next.min_windows;
      cfg.end_after = next.end_after;
      cfg.false_per_day = next.false_per_day;
      store.set_retention(cfg.store_max_age.count(), cfg.store_max_bytes);
      detector.set_incident_rule({cfg.min_windows, cfg.end_after});
      detector.set_refit_samples(samples_in(cfg.refit, cfg.interval));
      detector.set_false_per_day(cfg.false_per_day);
      detector.set_history_samples(samples_in(cfg.history, cfg.interval));
      {
        std::lock_guard<std::mutex> lock(shared.mu);
        shared.snap.exported = export_mask(channels, cfg.metric_channels);
        shared.snap.store_max_bytes = cfg.store_max_bytes;
        shared.rendered_seq = ~0ull;
      }
      log_line(opts.quiet, "SIGHUP: configuration reloaded");
    } catch (const std::exception& e) {
      log_line(false, std::string("SIGHUP: configuration not reloaded, keeping the running one: ") + e.what());
    }
  };

  std::uint64_t samples = 0;
  auto on_sample = [&](std::int64_t t, std::span<const double> row, const std::vector<Event>* events) {
    if (store_error.empty()) {
      try {
        store.append(t, row);
        if (events)
          for (const auto& e : *events) store.append_event(e);
        if (config)
          if (auto changes = config->tick(t); !changes.empty()) {
            store.append_config_changes(changes);
            for (const auto& c : changes) store.append_event(config_event(c));
          }
      } catch (const std::exception& e) {  // keep detecting and serving; say so once
        store_error = e.what();
        log_line(false, "store write failed, samples are no longer stored: " + store_error);
      }
    }
    last_t = t;
    const std::int64_t d0 = monotonic_ns();
    const StreamUpdate& u = detector.push(t, row);
    const AbsenceUpdate& au = absences.push(t, row);
    const double detect_s = double(monotonic_ns() - d0) * 1e-9;
    ++samples;
    // Incidents are logged and kept in the store as events (source "agent"), so they outlive
    // the process.
    auto note = [&](const char* kind, const Incident& inc, const std::string& line) {
      log_line(opts.quiet, line);
      if (!store_error.empty()) return;
      try {
        store.append_event({t, "agent", kind, inc.peak_score, line});
      } catch (const std::exception& e) {
        store_error = e.what();
        log_line(false, "store write failed, samples are no longer stored: " + store_error);
      }
    };
    if (u.opened && detector.active()) {
      const Incident& inc = *detector.active();
      note("incident_opened", inc,
           "incident opened: " + std::string(to_string(inc.subsystem)) +
               (inc.top.empty() ? "" : " (" + inc.top.front().name + ")") + (inc.action.empty() ? "" : " — " + inc.action));
    }
    if (u.closed && !detector.closed().empty()) {
      const Incident& inc = detector.closed().back();
      note("incident_closed", inc,
           "incident closed: " + std::string(to_string(inc.subsystem)) + ", " +
               std::to_string(int(inc.end_s - inc.start_s + 0.5)) + " s" +
               (inc.top.empty() ? "" : " (" + inc.top.front().name + ")"));
    }
    for (std::size_t k = absences.active().size() - au.opened; k < absences.active().size(); ++k)
      note("absence_opened", absences.active()[k], "absence opened: " + absences.active()[k].action);
    for (std::size_t k = absences.closed().size() - au.closed; k < absences.closed().size(); ++k)
      note("absence_closed", absences.closed()[k], "absence closed: " + absences.closed()[k].action);
    std::lock_guard<std::mutex> lock(shared.mu);
    AgentSnapshot& s = shared.snap;
    std::copy(row.begin(), row.end(), s.values.begin());
    if (au.changed || !absences.active().empty()) {  // open ones: their end moves every sample
      s.active_absences.resize(absences.active().size());
      for (std::size_t k = 0; k < absences.active().size(); ++k) {
        s.active_absences[k].source = absences.active_source(k);
        s.active_absences[k].channels = absences.active_channels(k);
        s.active_absences[k].incident = absences.active()[k];
      }
      s.absence_incidents_total = absences.opened_total();
    }
    if (au.closed) s.recent_absences = absences.closed();
    s.last_sample_unix_ns = t;
    s.samples_total = samples;
    s.windows_scored_total = detector.windows_scored();
    s.model_ready = detector.model_ready();
    s.reference_windows = detector.reference_windows();
    s.model_fit_unix_s = double(detector.last_fit_unix_ns()) * 1e-9;
    if (u.scored) {
      s.anomaly_score = u.fused;
      s.subsystem_score = u.subsystem;
    }
    if (u.opened && detector.active()) ++s.incidents_total[std::size_t(detector.active()->subsystem)];
    if (u.scored) s.active = detector.active();
    if (u.closed) s.recent = detector.closed();
    s.detect_duration_s = detect_s;
    if (sampler) {
      s.samples_skipped_total = sampler->skipped_ticks();
      const auto& ps = sampler->probe_stats();
      std::size_t k = 0;
      for (auto& h : s.probes) {
        if (!h.available || k >= ps.size()) continue;
        const auto& p = ps[k++];
        h.up = p.missing < p.channels;
        h.last_duration_s = double(p.last_duration_ns) * 1e-9;
        h.channels_missing = p.missing;
        h.errors_total = p.errors;
      }
    }
    if (samples % 16 == 1) s.store_bytes = file_bytes(cfg.store_path);
  };

  if (sampler) {
    // Sampler::run checks the stop flag after every tick; reloads are applied between ticks.
    sampler->run(cfg.interval, 0, g_stop, [&](std::int64_t t, std::span<const double> row) {
      if (g_reload.load()) apply_reload();
      on_sample(t, row, &sampler->events());
    });
  } else {
    // Replay in real time: sample i is served at start + (t_i − t_0), stamped with that
    // wall-clock time as if it had just been taken.
    const std::int64_t mono0 = monotonic_ns(), wall0 = realtime_ns(), rec0 = replay.t_unix_ns.front();
    std::size_t ev = 0;
    std::vector<Event> events;
    for (std::size_t i = 0; i < replay.t_unix_ns.size() && !g_stop.load(); ++i) {
      const std::int64_t offset = replay.t_unix_ns[i] - rec0;
      const std::int64_t due = mono0 + offset;
      while (!g_stop.load()) {
        const std::int64_t now = monotonic_ns();
        if (now >= due) break;
        const std::int64_t nap = std::min<std::int64_t>(due - now, 200'000'000);
        timespec ts{time_t(nap / 1'000'000'000), long(nap % 1'000'000'000)};
        nanosleep(&ts, nullptr);
      }
      if (g_stop.load()) break;
      if (g_reload.load()) apply_reload();
      events.clear();
      for (; ev < replay.events.size() && replay.events[ev].t_unix_ns <= replay.t_unix_ns[i]; ++ev) {
        Event e = replay.events[ev];
        e.t_unix_ns = wall0 + (e.t_unix_ns - rec0);
        events.push_back(std::move(e));
      }
      on_sample(wall0 + offset, replay.values.row(i), &events);
    }
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      shared.replay_done = true;
    }
    if (!g_stop.load()) log_line(opts.quiet, "replay finished after " + std::to_string(samples) + " samples");
    while (!g_stop.load() && !opts.exit_after_replay) {
      timespec ts{0, 200'000'000};
      nanosleep(&ts, nullptr);
      if (g_reload.load()) apply_reload();
    }
  }

  server.stop();
  http.join();
  store.finish(last_t, 0);
  log_line(opts.quiet, "stopped after " + std::to_string(samples) + " samples; store " + cfg.store_path + " flushed");
  return store_error.empty() ? 0 : 3;
}

}  // namespace reveal::agent
