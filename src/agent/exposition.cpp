// /metrics and /incidents renderers; contract (metric names, labels) in include/reveal/agent.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/json.h"
#include "util/utf8.h"
#include "reveal/agent.h"
#include "reveal/config_drift.h"

namespace reveal {
namespace {

using Out = std::back_insert_iterator<std::string>;

constexpr bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Appends `s` to `out` with every character outside [a-zA-Z0-9_] replaced by '_' and runs of
// '_' (including one already ending `out`) collapsed.
void append_sanitised(std::string& out, std::string_view s) {
  for (char c : s) {
    if (!name_char(c)) c = '_';
    if (c == '_' && !out.empty() && out.back() == '_') continue;
    out.push_back(c);
  }
}

// Escaping of the text format: backslash and line feed, and in label values the double quote
// (HELP text keeps it); a byte that is not valid UTF-8 (an interface or cgroup name the kernel
// allowed) as U+FFFD, since Prometheus rejects the whole scrape for one invalid label value.
void append_escaped(std::string& out, std::string_view v, bool quote) {
  for (std::size_t i = 0; i < v.size();) {
    const char c = v[i];
    if (c == '\\') out += "\\\\";
    else if (c == '"' && quote) out += "\\\"";
    else if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x80) out.push_back(c);
    else if (const std::size_t n = utf8_sequence(v.substr(i)); n > 0) {
      out.append(v.substr(i, n));
      i += n;
      continue;
    } else {
      out += "\xef\xbf\xbd";
    }
    ++i;
  }
}
void append_label_value(std::string& out, std::string_view v) { append_escaped(out, v, true); }
// `,name="value"` after a series' first label.
void append_label(std::string& out, std::string_view name, std::string_view value) {
  out += ',';
  out += name;
  out += "=\"";
  append_label_value(out, value);
  out.push_back('"');
}
void append_help_text(std::string& out, std::string_view v) { append_escaped(out, v, false); }

// A sample value: shortest round-trip decimal; NaN, +Inf, -Inf spelled as Prometheus does.
void append_value(std::string& out, double v) {
  if (std::isnan(v)) out += "NaN";
  else if (std::isinf(v)) out += v > 0 ? "+Inf" : "-Inf";
  else fmt::format_to(Out(out), "{}", v);
}

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out.push_back(' ');
  append_help_text(out, help);
  out += "\n# TYPE ";
  out += name;
  out.push_back(' ');
  out += type;
  out.push_back('\n');
}

// One sample with labels given as alternating name, value pairs.
template <typename... L>
void sample(std::string& out, std::string_view name, double v, const L&... labels) {
  out += name;
  if constexpr (sizeof...(labels) > 0) {
    const std::string_view kv[] = {labels...};
    out.push_back('{');
    for (std::size_t i = 0; i + 1 < sizeof...(labels); i += 2) {
      if (i) out.push_back(',');
      out += kv[i];
      out += "=\"";
      append_label_value(out, kv[i + 1]);
      out.push_back('"');
    }
    out.push_back('}');
  }
  out.push_back(' ');
  append_value(out, v);
  out.push_back('\n');
}

// A raw channel's series: `name{channel,subsystem,unit[,entity]` then `extra`
// (AgentSnapshot::channel_labels: pod_uid, namespace, ...) and the closing brace.
void append_raw_series(std::string& out, std::string_view name, const ChannelInfo& c, std::string_view entity,
                       std::span<const std::pair<std::string, std::string>> extra) {
  out += name;
  out += "{channel=\"";
  append_label_value(out, c.name);
  out += "\",subsystem=\"";
  append_label_value(out, to_string(c.subsystem));
  out += "\",unit=\"";
  append_label_value(out, c.unit);
  out.push_back('"');
  if (!entity.empty()) append_label(out, "entity", entity);
  for (const auto& [label, value] : extra) append_label(out, label, value);
  out.push_back('}');
}

// A raw channel's sample: its series (append_raw_series) and value.
void raw_sample(std::string& out, std::string_view name, double v, const ChannelInfo& c, std::string_view entity,
                std::span<const std::pair<std::string, std::string>> extra) {
  append_raw_series(out, name, c, entity, extra);
  out.push_back(' ');
  append_value(out, v);
  out.push_back('\n');
}

void single(std::string& out, std::string_view name, std::string_view type, std::string_view help, double v) {
  family(out, name, type, help);
  sample(out, name, v);
}

constexpr double kNaN = __builtin_nan("");

// "<source>:<field>[.<index>]" -> ("<source>:<field>", "<index>"), as channel_label() splits
// it, without allocating.
std::pair<std::string_view, std::string_view> split_channel(std::string_view name) {
  const std::size_t colon = name.find(':');
  const std::size_t dot = name.find('.', colon == std::string_view::npos ? 0 : colon + 1);
  if (dot == std::string_view::npos) return {name, {}};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

// Subsystem index -> label value.
std::string_view subsystem_name(std::size_t i) { return to_string(static_cast<Subsystem>(i)); }

}  // namespace

double prometheus_unit_scale(const ChannelInfo& c) {
  if (c.unit == "ms") return 1e-3;
  if (c.unit == "us") return 1e-6;
  if (c.unit == "ns") return 1e-9;
  return 1.0;
}

std::string prometheus_metric_name(const ChannelInfo& c) {
  // "<source>:<field>[.<index>]": drop the index (it becomes the `entity` label), keep
  // source and field. channel_label() defines where the index starts.
  const std::string_view base = split_channel(c.name).first;
  std::string out;
  out.reserve(8 + base.size() + 6);
  out = "reveal_";
  append_sanitised(out, base);
  // Prometheus base units: a channel counted in ms, µs or ns is exported in seconds
  // (prometheus_unit_scale) and named so: an abbreviated unit token of the kernel's field name
  // ("io_time_ms") becomes "seconds", or "_seconds" is appended when the name has none
  // (PSI "cpu_some_total", in µs, becomes reveal_proc_pressure_cpu_some_seconds_total).
  // The one kernel field whose name has a token that reads as an abbreviated unit but is not
  // one: vmstat's nr_sec_page_table_pages (secondary page tables, in pages).
  if (const auto at = out.find("_sec_"); at != std::string::npos && prometheus_unit_scale(c) == 1.0)
    out.replace(at, 5, "_secondary_");
  if (prometheus_unit_scale(c) != 1.0) {
    if (out.size() >= 6 && out.compare(out.size() - 6, 6, "_total") == 0) out.resize(out.size() - 6);
    bool replaced = false;
    for (std::string_view abbr : {"ms", "us", "ns"})
      for (std::size_t at = out.find(abbr); at != std::string::npos; at = out.find(abbr, at + 1)) {
        const std::size_t end = at + abbr.size();
        if (out[at - 1] == '_' && (end == out.size() || out[end] == '_')) {
          out.replace(at, abbr.size(), "seconds");
          replaced = true;
        }
      }
    if (!replaced) out += "_seconds";
  }
  if (c.kind == Kind::counter) {
    const bool has_total = out.size() >= 6 && out.compare(out.size() - 6, 6, "_total") == 0;
    if (!has_total) {
      if (out.back() != '_') out.push_back('_');
      out += "total";
    }
  } else {
    if (out.back() == '_' && out.size() > 7) out.pop_back();  // "reveal_x_" from a field ending in punctuation
    // `_total` means counter, to Prometheus and to the fleet reader (reveal/prometheus_source.h
    // rebuilds the kind from it): a gauge named so (nvml:memory_total, the GPU's memory size)
    // becomes reveal_nvml_memory_total_value.
    if (out.size() >= 6 && out.compare(out.size() - 6, 6, "_total") == 0) out += "_value";
  }
  return out;
}

std::string prometheus_series(const ChannelInfo& c, std::span<const std::pair<std::string, std::string>> labels) {
  std::string out;
  append_raw_series(out, prometheus_metric_name(c), c, split_channel(c.name).second, labels);
  return out;
}

std::string prometheus_config_label(std::string_view v) { return config_text(v); }

std::string prometheus_config_series(const std::string& key, const std::string& value,
                                     std::span<const std::pair<std::string, std::string>> labels) {
  std::string out = "reveal_host_config_info{key=\"";
  append_label_value(out, prometheus_config_label(key));
  out += "\",value=\"";
  append_label_value(out, prometheus_config_label(value));
  out.push_back('"');
  for (const auto& [n, v] : labels) append_label(out, n, v);
  out.push_back('}');
  return out;
}

std::string render_metrics(const AgentSnapshot& s) {
  const std::size_t nc = s.channels.size();
  std::string out;
  out.reserve(4096 + s.probes.size() * 400 + nc * 160);

  // --- The agent itself ---------------------------------------------------------------------
  family(out, "reveal_build_info", "gauge", "Reveal agent version and mode (live or replay); always 1");
  sample(out, "reveal_build_info", 1, "version", s.version, "mode", s.mode);
  if (!s.config.empty()) {
    family(out, "reveal_host_config_info", "gauge",
           "The host's configuration snapshot (reveal config show), one series per key with its value; always 1");
    for (const auto& [k, v] : s.config) {
      out += prometheus_config_series(k, v);
      out += " 1\n";
    }
  }

  // --- Detection ----------------------------------------------------------------------------
  single(out, "reveal_anomaly_score", "gauge",
         "Fused anomaly score of the last window (anomalous when >= 1; NaN before the model)",
         s.model_ready ? s.anomaly_score : kNaN);
  family(out, "reveal_subsystem_anomaly_score", "gauge",
         "Per subsystem: calibrated robust-z stream of its channels, >= 1 anomalous (NaN before the model)");
  for (std::size_t i = 0; i < kNumSubsystems; ++i)
    sample(out, "reveal_subsystem_anomaly_score", s.model_ready ? s.subsystem_score[i] : kNaN, "subsystem",
           subsystem_name(i));
  single(out, "reveal_model_ready", "gauge", "1 once a reference model is fitted (warm-up done)",
         s.model_ready ? 1 : 0);
  single(out, "reveal_model_reference_windows", "gauge", "Windows the current reference model was fitted on",
         double(s.reference_windows));
  single(out, "reveal_model_fit_timestamp_seconds", "gauge", "Unix time of the last model fit",
         s.model_fit_unix_s);
  single(out, "reveal_windows_scored_total", "counter", "Windows scored by the streaming detector",
         double(s.windows_scored_total));
  single(out, "reveal_symptom_led_windows_total", "counter",
         "Windows a symptom's material step made anomalous although their fused score was below the threshold",
         double(s.symptom_led_windows_total));
  family(out, "reveal_incidents_total", "counter", "Incidents opened, by attributed subsystem");
  for (std::size_t i = 0; i < kNumSubsystems; ++i)
    sample(out, "reveal_incidents_total", double(s.incidents_total[i]), "subsystem", subsystem_name(i));
  if (s.active) {
    const Incident& a = *s.active;
    const std::string_view channel = a.top.empty() ? std::string_view() : std::string_view(a.top.front().name);
    // `top_channel`, not `channel`: that label marks raw channels, which the fleet reader selects.
    family(out, "reveal_incident_active", "gauge",
           "1 while an incident is open: its subsystem, focus entity and strongest channel");
    sample(out, "reveal_incident_active", 1, "subsystem", to_string(a.subsystem), "focus", a.focus, "top_channel",
           channel);
    single(out, "reveal_incident_active_start_timestamp_seconds", "gauge", "Unix time the open incident started",
           double(a.start_unix_ns) / 1e9);
    single(out, "reveal_incident_active_confidence", "gauge",
           "Share of the open incident's evidence that belongs to its subsystem (0..1)", a.confidence);
    if (a.impact.known()) {
      single(out, "reveal_incident_active_slowdown_ratio", "gauge",
             "Estimated share of its speed the largest running tenant lost to the open incident (0..1), from its "
             "CPU time (absent when unknown)",
             a.impact.slowdown);
      single(out, "reveal_incident_active_lost_job_seconds", "gauge",
             "Estimated job-seconds of work the running tenants lost to the open incident so far", a.impact.job_seconds_lost);
    }
  }

  if (s.pending) {
    const Incident& p = *s.pending;
    family(out, "reveal_incident_pending", "gauge",
           "1 while an incident is open but not reported yet (shorter than detect.min_duration so far): its "
           "subsystem, focus entity and strongest channel");
    sample(out, "reveal_incident_pending", 1, "subsystem", to_string(p.subsystem), "focus", p.focus, "top_channel",
           p.top.empty() ? std::string_view() : std::string_view(p.top.front().name));
    single(out, "reveal_incident_pending_start_timestamp_seconds", "gauge",
           "Unix time the pending incident started", double(p.start_unix_ns) / 1e9);
  }

  single(out, "reveal_workload_changes_total", "counter",
         "Workload changes: anomalous windows in which no symptom rose (a job started, stopped or changed phase)",
         double(s.workload_changes_total));
  single(out, "reveal_incidents_withdrawn_total", "counter",
         "Incidents withdrawn as a new workload starting (new cgroups alone, nobody hurt); those reported "
         "before count in reveal_incidents_total too",
         double(s.incidents_withdrawn_total));
  single(out, "reveal_incidents_transient_total", "counter",
         "Incidents that ended shorter than detect.min_duration: transients, never reported as incidents",
         double(s.incidents_transient_total));
  if (s.active_workload_change) {
    const Incident& c = *s.active_workload_change;
    family(out, "reveal_workload_change_active", "gauge",
           "1 while a workload change is open: the subsystem whose load moved and its strongest channel");
    sample(out, "reveal_workload_change_active", 1, "subsystem", to_string(c.subsystem), "top_channel",
           c.top.empty() ? std::string_view() : std::string_view(c.top.front().name));
  }
  single(out, "reveal_regimes_remembered", "gauge", "Past regimes' reference models the detector remembers",
         double(s.regimes_remembered));

  if (!s.absence_sources.empty())
    family(out, "reveal_absence_incidents_total", "counter",
           "Absence incidents opened (channels of the source stopped producing data), by source");
  for (std::size_t i = 0; i < s.absence_sources.size(); ++i)
    sample(out, "reveal_absence_incidents_total",
           double(i < s.absence_incidents_total.size() ? s.absence_incidents_total[i] : 0), "source",
           s.absence_sources[i]);
  if (!s.active_absences.empty()) {
    family(out, "reveal_absence_active", "gauge",
           "1 while channels of the source are absent: its subsystem, focus entity and first absent channel");
    for (const ActiveAbsence& a : s.active_absences) {
      const Incident& inc = a.incident;
      sample(out, "reveal_absence_active", 1, "source", a.source, "subsystem", to_string(inc.subsystem), "focus",
             inc.focus, "top_channel", inc.top.empty() ? std::string_view() : std::string_view(inc.top.front().name));
    }
    family(out, "reveal_absence_active_channels", "gauge", "Channels in the source's open absence incident");
    for (const ActiveAbsence& a : s.active_absences)
      sample(out, "reveal_absence_active_channels", double(a.channels), "source", a.source);
    family(out, "reveal_absence_active_start_timestamp_seconds", "gauge",
           "Unix time of the first missing sample of the source's open absence incident");
    for (const ActiveAbsence& a : s.active_absences)
      sample(out, "reveal_absence_active_start_timestamp_seconds", double(a.incident.start_unix_ns) / 1e9, "source",
             a.source);
  }

  // --- Sampling, probes, store --------------------------------------------------------------
  single(out, "reveal_samples_total", "counter", "Samples taken", double(s.samples_total));
  single(out, "reveal_samples_skipped_total", "counter", "Sampling ticks missed because the host stalled",
         double(s.samples_skipped_total));
  single(out, "reveal_sampler_realtime", "gauge",
         "1 while the sampling thread runs at real-time priority (sampling_priority), else 0",
         s.sampler_realtime ? 1.0 : 0.0);
  single(out, "reveal_last_sample_timestamp_seconds", "gauge", "Unix time of the last sample",
         double(s.last_sample_unix_ns) / 1e9);
  struct ProbeFamily {
    std::string_view name, type, help;
    double (*value)(const ProbeHealth&);
  };
  static constexpr ProbeFamily kProbeFamilies[] = {
      {"reveal_probe_up", "gauge", "1 when the probe's last read gave at least one value",
       [](const ProbeHealth& p) { return p.up ? 1.0 : 0.0; }},
      {"reveal_probe_duration_seconds", "gauge", "Duration of the probe's last read",
       [](const ProbeHealth& p) { return p.last_duration_s; }},
      {"reveal_probe_channels", "gauge", "Channels the probe opened",
       [](const ProbeHealth& p) { return double(p.channels); }},
      {"reveal_probe_channels_missing", "gauge", "Channels of the probe without a value (NaN) at the last read",
       [](const ProbeHealth& p) { return double(p.channels_missing); }},
      {"reveal_probe_errors_total", "counter", "Ticks a probe threw, gave no value at all, or failed to read a file that is still there",
       [](const ProbeHealth& p) { return double(p.errors_total); }},
  };
  for (const auto& f : kProbeFamilies) {
    family(out, f.name, f.type, f.help);
    for (const auto& p : s.probes) sample(out, f.name, f.value(p), "probe", p.name);
  }
  single(out, "reveal_store_bytes", "gauge", "Size of the rolling store on disk (with its -wal and -head files)",
         double(s.store_bytes));
  single(out, "reveal_store_max_bytes", "gauge", "The rolling store's configured size bound",
         double(s.store_max_bytes));
  single(out, "reveal_store_write_failed", "gauge",
         "1 once a write to the store failed (disk full, I/O error): samples are no longer stored",
         s.store_error.empty() ? 0.0 : 1.0);
  single(out, "reveal_detect_duration_seconds", "gauge", "Streaming detector time for the last sample",
         s.detect_duration_s);
  if (!s.gpus.empty()) {
    single(out, "reveal_gpus", "gauge", "GPUs NVML reported when the agent started", double(s.gpus.size()));
    family(out, "reveal_gpu_up", "gauge", "1 while the GPU answers; 0 once NVML reported it lost or it fell off the bus");
    for (std::size_t g = 0; g < s.gpus.size(); ++g)
      sample(out, "reveal_gpu_up", g < s.gpu_up.size() && s.gpu_up[g] ? 1.0 : 0.0, "gpu", s.gpus[g]);
  }
  if (!s.xid_errors.empty()) {
    family(out, "reveal_gpu_xid_errors_total", "counter", "XID errors reported by the driver, by GPU and XID code");
    for (const GpuXidCount& x : s.xid_errors)
      sample(out, "reveal_gpu_xid_errors_total", double(x.count), "gpu", x.gpu, "xid", std::to_string(x.xid));
  }
  if (!s.gpu_pods.empty()) {
    family(out, "reveal_gpu_pod_info", "gauge",
           "1 per container holding the GPU, as the kubelet's pod-resources API assigned it");
    for (const GpuPod& p : s.gpu_pods)
      sample(out, "reveal_gpu_pod_info", 1, "gpu", p.gpu, "uuid", p.uuid, "namespace", p.ns, "pod", p.pod, "container",
             p.container, "resource", p.resource);
  }
  if (s.pod_resources_up >= 0) {
    single(out, "reveal_kubelet_pod_resources_up", "gauge",
           "1 when the kubelet's last pod-resources answer came, 0 when the call failed", double(s.pod_resources_up));
    single(out, "reveal_kubelet_pod_resources_errors_total", "counter", "Calls to the kubelet's pod-resources API that failed",
           double(s.pod_resources_errors_total));
  }
  single(out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds",
         s.process_cpu_seconds);
  single(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes", s.process_resident_bytes);
  single(out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds",
         s.process_start_unix_s);

  // --- Raw channels: one family per metric name, in order of first appearance ------------------
  std::vector<std::string> names;
  names.reserve(nc);
  std::vector<std::uint32_t> fam(nc), first_of;  // channel -> family; family -> first channel
  std::unordered_map<std::string_view, std::uint32_t> index;
  index.reserve(nc);
  for (std::size_t i = 0; i < nc; ++i) names.push_back(i < s.exported.size() && s.exported[i]
                                                           ? prometheus_metric_name(s.channels[i])
                                                           : std::string());
  for (std::size_t i = 0; i < nc; ++i) {
    if (names[i].empty()) continue;
    auto [it, fresh] = index.try_emplace(names[i], std::uint32_t(first_of.size()));
    if (fresh) first_of.push_back(std::uint32_t(i));
    fam[i] = it->second;
  }
  // Counting sort of the exported channels by family, stable in store order.
  std::vector<std::uint32_t> start(first_of.size() + 1, 0), order;
  for (std::size_t i = 0; i < nc; ++i)
    if (!names[i].empty()) ++start[fam[i] + 1];
  for (std::size_t f = 0; f < first_of.size(); ++f) start[f + 1] += start[f];
  order.resize(start.back());
  {
    std::vector<std::uint32_t> next(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < nc; ++i)
      if (!names[i].empty()) order[next[fam[i]]++] = std::uint32_t(i);
  }
  for (std::size_t f = 0; f < first_of.size(); ++f) {
    const ChannelInfo& head = s.channels[first_of[f]];
    const std::string& name = names[first_of[f]];
    out += "# HELP ";
    out += name;
    out.push_back(' ');
    if (!head.help.empty()) {
      append_help_text(out, head.help);
    } else {
      out += "Reveal channel ";
      append_help_text(out, split_channel(head.name).first);
    }
    fmt::format_to(Out(out), " (raw {}, unit {})\n# TYPE {} {}\n", to_string(head.kind),
                   head.unit.empty() ? "none" : head.unit, name, head.kind == Kind::counter ? "counter" : "gauge");
    for (std::uint32_t k = start[f]; k < start[f + 1]; ++k) {
      const std::size_t i = order[k];
      const ChannelInfo& c = s.channels[i];
      const std::string_view entity = split_channel(c.name).second;
      const double v = (i < s.values.size() ? s.values[i] : kNaN) * prometheus_unit_scale(c);
      raw_sample(out, name, v, c, entity,
                 i < s.channel_labels.size() ? std::span(s.channel_labels[i]) : std::span<const std::pair<std::string, std::string>>{});
    }
  }
  return out;
}

std::string render_incidents_json(const AgentSnapshot& s) {
  nlohmann::json j;
  j["schema"] = "reveal.incidents/1";
  j["host"] = s.hostname;
  j["active"] = s.active ? report::incident_json(*s.active) : nlohmann::json(nullptr);
  j["pending"] = s.pending ? report::incident_json(*s.pending) : nlohmann::json(nullptr);
  auto recent = nlohmann::json::array();
  for (const auto& inc : s.recent) recent.push_back(report::incident_json(inc));
  j["recent"] = std::move(recent);
  auto absences = nlohmann::json::array(), recent_absences = nlohmann::json::array();
  for (const auto& a : s.active_absences) absences.push_back(report::incident_json(a.incident));
  for (const auto& inc : s.recent_absences) recent_absences.push_back(report::incident_json(inc));
  j["active_absences"] = std::move(absences);
  j["recent_absences"] = std::move(recent_absences);
  j["active_workload_change"] =
      s.active_workload_change ? report::incident_json(*s.active_workload_change) : nlohmann::json(nullptr);
  auto changes = nlohmann::json::array();
  for (const auto& c : s.workload_changes) changes.push_back(report::incident_json(c));
  j["workload_changes"] = std::move(changes);
  auto pods = nlohmann::json::array();
  for (const GpuPod& p : s.gpu_pods) pods.push_back(report::gpu_pod_json(p));
  j["gpu_pods"] = std::move(pods);
  // Invalid UTF-8 in a name (an interface or cgroup the kernel allowed) as U+FFFD, not an error.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace reveal
