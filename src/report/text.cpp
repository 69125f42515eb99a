#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "reveal/report.h"
#include "reveal/tenants.h"
#include "reveal/units.h"

namespace reveal {

namespace {

// The first screen: one line per incident, at most this many lines of them.
constexpr std::size_t kSummaryLines = 15;

// "SUMMARY: N incidents" and one line per incident (subsystem, start as ISO time and offset).
void summary_lines(const DetectResult& r, std::string& o) {
  o += fmt::format("SUMMARY: {} incident{}\n", r.incidents.size(), r.incidents.size() == 1 ? "" : "s");
  const std::size_t n = r.incidents.size();
  const std::size_t shown = n <= kSummaryLines ? n : kSummaryLines - 1;
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& inc = r.incidents[i];
    if (inc.kind == "absence")
      o += fmt::format("  #{}  {}  +{:.0f}s..+{:.0f}s ({:.0f} s)  {:<13}  data stopped: {} channel{}\n", i + 1,
                       format_utc(inc.start_unix_ns), inc.start_s, inc.end_s, inc.end_s - inc.start_s,
                       to_string(inc.subsystem), inc.top.size(), inc.top.size() == 1 ? "" : "s");
    else
      o += fmt::format("  #{}  {}  +{:.0f}s..+{:.0f}s ({:.0f} s)  {:<13}  confidence {:3.0f} %  peak level {:.1f}\n",
                       i + 1, format_utc(inc.start_unix_ns), inc.start_s, inc.end_s, inc.end_s - inc.start_s,
                       to_string(inc.subsystem), inc.confidence * 100, inc.peak_score);
  }
  if (shown < n) o += fmt::format("  … and {} more (see below)\n", n - shown);
  const std::size_t transients = count_transients(r.workload_changes);
  if (r.incidents.empty())
    o += r.workload_changes.empty() ? "  no anomalous interval found\n"
         : transients               ? "  no symptom lasted long enough to be an incident (--min-duration)\n"
                                    : "  no anomalous interval with a symptom\n";
  // Workload changes: anomalous, but no symptom rose, and transients; one line each, after the
  // incidents.
  const std::size_t nc = r.workload_changes.size();
  if (nc == 0) return;
  if (transients == 0)
    o += fmt::format("WORKLOAD CHANGES: {} (anomalous intervals in which no symptom rose: a job started, stopped or "
                     "changed phase; not incidents)\n", nc);
  else
    o += fmt::format("WORKLOAD CHANGES AND TRANSIENTS: {} (not incidents: {} anomalous interval{} in which no symptom "
                     "rose, a job started, stopped or changed phase; {} transient{}, symptoms over within "
                     "--min-duration)\n",
                     nc, nc - transients, nc - transients == 1 ? "" : "s", transients, transients == 1 ? "" : "s");
  const std::size_t shown_c = nc <= kSummaryLines ? nc : kSummaryLines - 1;
  for (std::size_t i = 0; i < shown_c; ++i) {
    const auto& c = r.workload_changes[i];
    o += fmt::format("  {}  +{:.0f}s..+{:.0f}s ({:.0f} s)  {:<13}", format_utc(c.start_unix_ns), c.start_s, c.end_s,
                     c.end_s - c.start_s, to_string(c.subsystem));
    if (!c.top.empty())
      o += fmt::format("  {} {} vs {}", c.top.front().name, format_value(c.top.front().value, c.top.front().unit),
                       format_value(c.top.front().reference, c.top.front().unit));
    if (!c.aggressors.empty()) o += "; " + c.aggressors.front().text;
    if (c.kind == "transient") o += "; " + c.withdrawn;
    else if (!c.withdrawn.empty()) o += "; an incident withdrawn: a new workload that hurt nobody";
    o += "\n";
  }
  if (shown_c < nc) o += fmt::format("  … and {} more (JSON: workload_changes)\n", nc - shown_c);
}

// The run, its reference and calibration, and notes.
void run_details(const DetectResult& r, std::string& o) {
  const auto& m = r.meta;
  o += fmt::format("host {} ({}, {} cores, kernel {}); {} samples at {:g} s", m.hostname, m.cpu_model,
                   m.cores, m.kernel, r.n_samples, m.interval_s);
  if (m.start_unix_ns) o += fmt::format(", {} → {}", format_utc(m.start_unix_ns), format_utc(m.end_unix_ns));
  o += "\n";
  if (!m.command.empty()) o += fmt::format("command: {} (exit {})\n", m.command, m.exit_code);
  if (r.mode == "self") {
    o += "reference: self (the run's own robust statistics)";
  } else if (r.mode == "streaming") {
    const std::size_t t = count_transients(r.workload_changes), c = r.workload_changes.size() - t;
    o += fmt::format("reference: moving (the agent's streaming detector; {} workload change{}{} told apart from "
                     "incidents)",
                     c, c == 1 ? "" : "s", t ? fmt::format(" and {} transient{}", t, t == 1 ? "" : "s") : "");
  } else if (!r.baseline_model.empty()) {
    std::vector<std::string> unique;
    for (const auto& h : r.baseline_hosts)
      if (std::find(unique.begin(), unique.end(), h) == unique.end()) unique.push_back(h);
    std::string hosts;
    for (const auto& h : unique) hosts += (hosts.empty() ? "" : ", ") + h;
    o += fmt::format("reference: baseline model {} (trained on {} known-good run{} of {})", r.baseline_model,
                     r.baseline_hosts.size(), r.baseline_hosts.size() == 1 ? "" : "s", hosts);
  } else
    o += fmt::format("reference: baseline ({} known-good run{})", r.baseline_hosts.size(),
                     r.baseline_hosts.size() == 1 ? "" : "s");
  // Scored channels include derived ones, so they can outnumber the recorded channels.
  // The streaming detector refits as it goes: no one model's channel count describes the run.
  if (r.mode == "streaming")
    o += fmt::format("; {} channels derived ({} recorded)\n", r.n_channels_used, r.n_channels_recorded);
  else
    o += fmt::format("; {} channels scored ({} recorded), {} in the Isolation Forest model\n", r.n_channels_used,
                     r.n_channels_recorded, r.n_channels_model);
  if (r.window_false_rate > 0)
    o += fmt::format("calibration: EVT tails of {} detectors for {:g} false incident{} per host-day "
                     "(a window is anomalous at tail probability ≤ {:.1e})\n",
                     r.fused_detectors, r.false_per_day, r.false_per_day == 1 ? "" : "s",
                     r.window_false_rate / double(std::max<std::size_t>(r.fused_detectors, 1)));
  for (const auto& n : r.notes) o += "note: " + n + "\n";
}

// One section per incident: subsystem shares, focus, detectors, top channels, action.
void incident_details(const DetectResult& r, std::string& o) {
  for (std::size_t i = 0; i < r.incidents.size(); ++i) {
    const auto& inc = r.incidents[i];
    o += fmt::format("\nINCIDENT #{}  {} → {}  (+{:.0f} s .. +{:.0f} s)\n", i + 1, format_utc(inc.start_unix_ns),
                     format_utc(inc.end_unix_ns), inc.start_s, inc.end_s);
    o += fmt::format("  subsystem   {} (confidence {:.0f} %", to_string(inc.subsystem), inc.confidence * 100);
    for (std::size_t k = 1; k < inc.subsystem_shares.size() && k < 3; ++k)
      o += fmt::format("; {} {:.0f} %", to_string(inc.subsystem_shares[k].first), inc.subsystem_shares[k].second * 100);
    o += ")\n";
    if (!inc.focus.empty())
      o += fmt::format("  focus       {} ({:.0f} % of the evidence)\n", inc.focus, inc.focus_share * 100);
    if (inc.kind == "absence") {
      o += "  kind        absence: these channels stopped producing data (last value before the gap):\n";
      for (const auto& ev : inc.top)
        o += fmt::format("    {:<42} {:>14}  [{}]\n", ev.name, format_value(ev.reference, ev.unit), to_string(ev.subsystem));
      o += "  action: " + inc.action + "\n";
      continue;
    }
    o += fmt::format("  peak level  {:.2f} (1 = the threshold", inc.peak_score);
    if (r.window_false_rate > 0 && r.window_false_rate < 1 && inc.peak_score > 0)
      o += fmt::format("; tail probability {:.1e}", std::exp(inc.peak_score * std::log(r.window_false_rate)) /
                                                       double(std::max<std::size_t>(r.fused_detectors, 1)));
    if (inc.peak_score < 1) o += "; below it: the symptom's material step made its windows anomalous";
    o += ")\n";
    if (!inc.detectors.empty()) {
      o += "  detectors  ";
      for (const auto& d : inc.detectors) {
        o += fmt::format(" {} {:.2f}{}", d.detector, d.peak_level, d.peak_level >= 1 ? "*" : "");
        if (!d.subsystem_shares.empty())
          o += fmt::format(" ({} {:.0f} %)", to_string(d.subsystem_shares.front().first), d.subsystem_shares.front().second * 100);
        o += &d == &inc.detectors.back() ? "" : ";";
      }
      o += "\n              (peak level; * = it flagged windows on its own and its contributions count)\n";
    }
    if (!inc.symptom.name.empty())
      o += fmt::format("  symptom     {} rose {} over {} (z {:+.1f}): a symptom, not only load\n", inc.symptom.name,
                       format_value(inc.symptom.value, inc.symptom.unit),
                       format_value(inc.symptom.reference, inc.symptom.unit), inc.symptom.z);
    for (const auto& t : inc.victims) o += "  hurt        " + t.text + "\n";
    for (const auto& t : inc.aggressors) o += "  neighbour   " + t.text + " (CPU use rose with the onset)\n";
    for (const auto& p : inc.gpu_pods)
      o += "  gpu pod     " + p.gpu + " held by " + p.ns + "/" + p.pod + " (container " + p.container + ")\n";
    if (inc.impact.measured) {
      o += "  impact      " + impact_text(inc.impact) + "\n";
      if (inc.impact.known()) o += "              (" + inc.impact.basis + ")\n";
    }
    o += "  top channels (value during incident vs reference median, robust z):\n";
    for (const auto& ev : inc.top)
      o += fmt::format("    {:<42} {:>14} vs {:<14} z {:+.1f}  [{}]\n", ev.name, format_value(ev.value, ev.unit),
                       format_value(ev.reference, ev.unit), ev.z, to_string(ev.subsystem));
    o += "  action: " + inc.action + "\n";
  }
}

}  // namespace

std::string render_text(const DetectResult& r, const std::string& source) {
  std::string o = fmt::format("Reveal detect — {}\n", source);
  summary_lines(r, o);
  o += "\n";
  run_details(r, o);
  incident_details(r, o);
  return o;
}

}  // namespace reveal
