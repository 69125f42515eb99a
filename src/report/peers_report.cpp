// The peers renderers of reveal/peers_report.h.
#include "reveal/peers_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/json.h"
#include "reveal/report.h"
#include "reveal/units.h"

namespace reveal {

std::string render_peers_text(const PeersResult& pr, const std::string& source) {
  std::string o = fmt::format("Reveal detect --peers — {}\n", source);
  if (pr.alignment == "same time")
    o += fmt::format("{} hosts compared at the same time: {} → {} ({:.0f} s)\n", pr.hosts.size(),
                     format_utc(pr.start_unix_ns), format_utc(pr.end_unix_ns), pr.span_s);
  else
    o += fmt::format("{} hosts compared by time since each run's start, over {:.0f} s\n", pr.hosts.size(), pr.span_s);
  for (const auto& n : pr.notes) o += "note: " + n + "\n";
  o += "each host's reference: the other hosts (oddness = Σ incident share of the run × peak, peak capped at 10)\n\n";
  std::size_t w = 4;
  for (const auto& h : pr.hosts) w = std::max(w, h.name.size());
  o += fmt::format("  {:>4}  {:<{}}  {:>6}  {:>17}  {:>9}  {:>6}\n", "rank", "host", w, "score", "anomalous windows",
                   "incidents", "peak");
  for (std::size_t i = 0; i < pr.hosts.size(); ++i) {
    const auto& h = pr.hosts[i];
    o += fmt::format("  {:>4}  {:<{}}  {:>6.2f}  {:>8} of {:<6}  {:>9}  {:>5.1f}×\n", i + 1, h.name, w, h.score,
                     h.anomalous_windows, h.windows, h.result.incidents.size(), h.peak);
  }
  o += "\n";
  if (pr.odd) {
    const PeerHost& h = pr.hosts[*pr.odd];
    o += fmt::format("odd host: {}", h.name);
    if (pr.hosts.size() > 1)
      o += fmt::format(" (score {:.2f}; next {} {:.2f})", h.score, pr.hosts[1].name, pr.hosts[1].score);
    o += "\n  strongest channels (value on this host vs the peers' median, robust z):\n";
    for (const auto& ev : pr.odd_channels)
      o += fmt::format("    {:<42} {:>14} vs {:<14} z {:+.1f}  [{}]\n", ev.name, format_value(ev.value, ev.unit),
                       format_value(ev.reference, ev.unit), ev.z, to_string(ev.subsystem));
    o += "\n" + render_text(h.result, h.name + " vs its peers");
  } else if (pr.flagged.empty()) {
    o += "no host stands out: no host has an incident against its peers\n";
  } else {
    o += "no single host stands out:";
    for (std::size_t i = 0; i < pr.flagged.size(); ++i) o += (i ? ", " : " ") + pr.flagged[i];
    o += fmt::format(" {} incidents, and none scores {:g}× the next\n", pr.flagged.size() == 1 ? "has" : "have",
                     kOddMargin);
  }
  return o;
}

void write_peers_json(const PeersResult& pr, const std::string& source,
                      const std::function<void(std::string_view)>& write, const PeerReportWriter& host_report) {
  using nlohmann::json;
  const auto num = report::json_number;
  // The document is dump(2) of the object below; the hosts' array, and in it each host's report,
  // are written in their places (markers) one host at a time, not built as one document.
  const std::string token = report::marker_token();
  const auto marker = [&token](const char* what) { return "\x01" + token + "-" + what; };
  const auto quoted = [&token](const char* what) { return "\"\\u0001" + token + "-" + what + "\""; };
  json j;
  j["schema"] = "reveal.peers/1";
  j["source"] = source;
  j["alignment"] = {{"mode", pr.alignment}, {"span_s", pr.span_s}};
  if (pr.alignment == "same time") {
    j["alignment"]["start"] = format_utc(pr.start_unix_ns);
    j["alignment"]["end"] = format_utc(pr.end_unix_ns);
    j["alignment"]["start_unix_ns"] = pr.start_unix_ns;
    j["alignment"]["end_unix_ns"] = pr.end_unix_ns;
  }
  j["notes"] = pr.notes;
  j["odd_host"] = pr.odd ? json(pr.hosts[*pr.odd].name) : json(nullptr);
  j["flagged"] = pr.flagged;
  json chans = json::array();
  for (const auto& ev : pr.odd_channels)
    chans.push_back({{"channel", ev.name}, {"unit", ev.unit}, {"subsystem", to_string(ev.subsystem)},
                     {"value", num(ev.value)}, {"reference", num(ev.reference)}, {"z", num(ev.z)}});
  j["strongest_channels"] = chans;
  j["hosts"] = marker("hosts");
  const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::size_t at = text.find(quoted("hosts"));
  write(std::string_view(text).substr(0, at));
  // The array at depth 1 (elements indented by 4), each host's report at depth 3 (by 6).
  write(pr.hosts.empty() ? "[]" : "[\n");
  const auto in_element = report::indented("    ", write);
  for (std::size_t i = 0; i < pr.hosts.size(); ++i) {
    const auto& h = pr.hosts[i];
    const json host = {{"host", h.name}, {"rank", i + 1}, {"score", h.score}, {"windows", h.windows},
                       {"anomalous_windows", h.anomalous_windows}, {"incident_windows", h.incident_windows},
                       {"peak", num(h.peak)}, {"incidents", h.result.incidents.size()}, {"report", marker("report")}};
    const std::string ht = host.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    const std::size_t r = ht.find(quoted("report"));
    write(i ? ",\n    " : "    ");
    in_element(std::string_view(ht).substr(0, r));
    if (host_report)
      host_report(h, report::indented("      ", write));
    else
      write_json(h.result, h.name, report::indented("      ", write));
    in_element(std::string_view(ht).substr(r + quoted("report").size()));
  }
  if (!pr.hosts.empty()) write("\n  ]");
  write(std::string_view(text).substr(at + quoted("hosts").size()));
  write("\n");
}

std::string render_peers_json(const PeersResult& pr, const std::string& source) {
  std::string out;
  write_peers_json(pr, source, [&out](std::string_view piece) { out += piece; });
  return out;
}

}  // namespace reveal
