// The agent's shared snapshot: see snapshot.h.
#include "agent/snapshot.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <system_error>

#include "reveal/glob.h"
#include "reveal/sampler.h"
#include "reveal/store.h"
#include "telemetry/cgroup/kubernetes.h"

namespace reveal::agent {
namespace {

// The store's size as reveal_store_bytes documents it: the file, its WAL and its head log.
std::uint64_t file_bytes(const std::filesystem::path& p) {
  std::error_code ec;
  std::uint64_t total = std::filesystem::file_size(p, ec);
  if (ec) total = 0;
  for (const auto& side : store_side_files()) {
    if (!side.holds_data) continue;
    const auto n = std::filesystem::file_size(p.string() + side.suffix, ec);
    if (!ec) total += n;
  }
  return total;
}

}  // namespace

std::vector<char> export_mask(const std::vector<ChannelInfo>& chans, const std::vector<std::string>& globs) {
  std::vector<char> m(chans.size(), 0);
  for (std::size_t i = 0; i < chans.size(); ++i)
    for (const auto& g : globs)
      if (glob_match(g, chans[i].name)) { m[i] = 1; break; }
  return m;
}

void init_snapshot(AgentSnapshot& s, const RunMetadata& meta, const std::vector<ChannelInfo>& channels,
                   const AgentConfig& cfg, bool live, const AbsenceTracker& absences) {
  s.hostname = meta.hostname;
  s.mode = live ? "live" : "replay";
  s.channels = channels;
  s.exported = export_mask(channels, cfg.metric_channels);
  // Kubernetes pods behind cgroup channels: the UID (and container ID) from the path, their
  // names from the node's log directories (live only: a replay's host is elsewhere).
  telemetry::cgroup::PodNames pods;
  if (live) pods.load(cfg.root);
  // The GPUs: the entities of the nvml channels ("gpu0", "gpu1", ...), in channel order.
  for (const auto& c : channels)
    if (c.name.rfind("nvml:", 0) == 0) {
      const std::string g = channel_label(c.name);
      if (!g.empty() && std::find(s.gpus.begin(), s.gpus.end(), g) == s.gpus.end()) s.gpus.push_back(g);
    }
  s.gpu_up.assign(s.gpus.size(), 1);
  s.channel_labels.assign(channels.size(), {});
  for (std::size_t i = 0; i < channels.size(); ++i)
    if (channels[i].name.rfind("cgroup", 0) == 0)
      s.channel_labels[i] = telemetry::cgroup::pod_labels(channel_label(channels[i].name), pods);
  s.values.assign(channels.size(), std::nan(""));
  s.anomaly_score = std::nan("");
  s.subsystem_score.fill(std::nan(""));
  s.process_start_unix_s = double(meta.start_unix_ns) * 1e-9;
  s.store_max_bytes = cfg.store_max_bytes;
  s.absence_sources = absences.sources();
  s.absence_incidents_total.assign(s.absence_sources.size(), 0);
  if (live) {
    for (const auto& p : meta.probes) s.probes.push_back({p.name, p.available, p.reason, false, 0, p.n_channels, 0, 0});
  } else {
    for (const auto& p : meta.probes) s.probes.push_back({p.name, p.available, p.reason, p.available, 0, p.n_channels, 0, 0});
  }
}

void update_snapshot(AgentSnapshot& s, const SampleTaken& sample, const StreamingDetector& detector,
                     const StreamUpdate& u, const AbsenceTracker& absences, const AbsenceUpdate& au,
                     const Sampler* sampler, const std::filesystem::path& store_path) {
  std::copy(sample.row.begin(), sample.row.end(), s.values.begin());
  if (au.changed || s.active_absences.size() != absences.active().size()) {
    s.active_absences.resize(absences.active().size());
    for (std::size_t k = 0; k < absences.active().size(); ++k) {
      s.active_absences[k].source = absences.active_source(k);
      s.active_absences[k].channels = absences.active_channels(k);
      s.active_absences[k].incident = absences.active()[k];
    }
    s.absence_incidents_total = absences.opened_total();
  } else {
    // The same open absences (none opened, grew or closed): only their end and the action that
    // states their length move (update_absence_end), copied in place. What the agent added to
    // its copies (the pods on their GPUs) stays, and an open absence costs no allocation.
    for (std::size_t k = 0; k < absences.active().size(); ++k) {
      Incident& dst = s.active_absences[k].incident;
      const Incident& src = absences.active()[k];
      dst.end_unix_ns = src.end_unix_ns;
      dst.end_s = src.end_s;
      dst.action = src.action;
    }
  }
  if (au.closed) s.recent_absences = absences.closed();
  s.last_sample_unix_ns = sample.t_unix_ns;
  s.last_sample_monotonic_ns = monotonic_ns();
  s.samples_total = sample.samples_total;
  s.windows_scored_total = detector.windows_scored();
  s.symptom_led_windows_total = detector.symptom_led_windows();
  s.model_ready = detector.model_ready();
  s.reference_windows = detector.reference_windows();
  s.model_fit_unix_s = double(detector.last_fit_unix_ns()) * 1e-9;
  if (u.scored) {
    s.anomaly_score = u.fused;
    s.subsystem_score = u.subsystem;
  }
  if (const Incident* o = detector.opened_incident()) ++s.incidents_total[std::size_t(o->subsystem)];
  if (u.scored || sample.withdrawn) {
    s.active = detector.active();
    if (const Incident* pending = detector.pending())
      s.pending = *pending;  // copy-assigned: the buffers of the previous window's copy are reused
    else
      s.pending.reset();
  }
  if (u.closed) s.recent = detector.closed();
  s.workload_changes_total = detector.workload_changes_total();
  s.incidents_withdrawn_total = detector.incidents_withdrawn_total();
  s.incidents_transient_total = detector.transients_total();
  s.regimes_remembered = detector.regimes_remembered();
  if (u.scored || sample.withdrawn) s.active_workload_change = detector.active_change();
  if (u.change_closed) s.workload_changes = detector.workload_changes();
  s.detect_duration_s = sample.detect_s;
  if (sampler) {
    s.samples_skipped_total = sampler->skipped_ticks();
    s.sampler_realtime = sampler->realtime();
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
  if (sample.samples_total % 16 == 1) s.store_bytes = file_bytes(store_path);
}

bool note_gpu_events(AgentSnapshot& s, std::span<const Event> events) {
  bool counts_changed = false;
  for (const Event& e : events) {
    if (e.source != "nvml") continue;
    std::string gpu;
    if (e.kind == "gpu_lost") {
      gpu = "gpu" + std::to_string(std::int64_t(e.value));
    } else if (e.kind == "xid") {
      gpu = e.detail.substr(0, e.detail.find(' '));  // "gpu1 XID 79"
      const int code = int(e.value);
      auto it = std::find_if(s.xid_errors.begin(), s.xid_errors.end(),
                             [&](const GpuXidCount& x) { return x.gpu == gpu && x.xid == code; });
      if (it == s.xid_errors.end()) it = s.xid_errors.insert(s.xid_errors.end(), {gpu, code, 0});
      ++it->count;
      counts_changed = true;
      if (code != 79) continue;  // 79: the GPU has fallen off the bus
    } else {
      continue;
    }
    for (std::size_t g = 0; g < s.gpus.size(); ++g)
      if (s.gpus[g] == gpu) s.gpu_up[g] = 0;
  }
  return counts_changed;
}

std::filesystem::path gpu_xid_counts_path(const std::filesystem::path& store_path) {
  return store_path.string() + ".xid-counts";
}

void load_xid_counts(AgentSnapshot& s, const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string gpu;
  long long xid = 0;
  unsigned long long count = 0;
  std::vector<GpuXidCount> got;
  while (got.size() < 4096 && in >> gpu >> xid >> count) {
    if (gpu.size() > 64 || xid < 0 || xid > 1'000'000) return;  // not ours: no counts
    got.push_back({gpu, int(xid), count});
  }
  if (!in.eof() && got.size() < 4096) return;  // malformed
  s.xid_errors = std::move(got);
}

bool save_xid_counts(const AgentSnapshot& s, const std::filesystem::path& path) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const GpuXidCount& x : s.xid_errors) out << x.gpu << ' ' << x.xid << ' ' << x.count << '\n';
    out.flush();
    if (!out) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

}  // namespace reveal::agent
