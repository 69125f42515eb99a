#include "report/json.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "reveal/report.h"
#include "reveal/units.h"

namespace reveal {
namespace report {

nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json incident_json(const Incident& inc) {
  using nlohmann::json;
  const auto num = json_number;
  json top = json::array();
  for (const auto& ev : inc.top)
    top.push_back({{"channel", ev.name}, {"unit", ev.unit}, {"subsystem", to_string(ev.subsystem)},
                   {"value", num(ev.value)}, {"reference", num(ev.reference)}, {"z", num(ev.z)},
                   {"text", format_value(ev.value, ev.unit) + " vs " + format_value(ev.reference, ev.unit)}});
  json shares = json::object();
  for (const auto& [s, v] : inc.subsystem_shares) shares[std::string(to_string(s))] = v;
  json dets = json::array();
  for (const auto& d : inc.detectors) {
    json ds = json::object();
    for (const auto& [s, v] : d.subsystem_shares) ds[std::string(to_string(s))] = v;
    dets.push_back({{"detector", d.detector}, {"peak_level", num(d.peak_level)}, {"subsystem_shares", ds}});
  }
  json symptom = nullptr;
  if (!inc.symptom.name.empty())
    symptom = {{"channel", inc.symptom.name}, {"unit", inc.symptom.unit}, {"subsystem", to_string(inc.symptom.subsystem)},
               {"rise", num(inc.symptom.value)}, {"reference", num(inc.symptom.reference)}, {"z", num(inc.symptom.z)},
               {"text", "+" + format_value(inc.symptom.value, inc.symptom.unit) + " over " +
                            format_value(inc.symptom.reference, inc.symptom.unit)}};
  const auto tenants = [&num](const std::vector<TenantEvidence>& v) {
    json a = json::array();
    for (const auto& t : v)
      a.push_back({{"cgroup", t.cgroup}, {"resource", t.resource}, {"unit", t.unit}, {"before", num(t.before)},
                   {"after", num(t.after)}, {"appeared", t.appeared}, {"text", t.text}});
    return a;
  };
  return {{"kind", inc.kind}, {"start", format_utc(inc.start_unix_ns)}, {"end", format_utc(inc.end_unix_ns)},
          {"start_unix_ns", inc.start_unix_ns}, {"end_unix_ns", inc.end_unix_ns},
          {"start_s", inc.start_s}, {"end_s", inc.end_s}, {"peak_score", inc.peak_score},
          {"subsystem", to_string(inc.subsystem)}, {"confidence", inc.confidence},
          {"subsystem_shares", shares},
          {"focus", inc.focus.empty() ? json(nullptr) : json(inc.focus)},
          {"focus_share", inc.focus_share}, {"detectors", dets}, {"top_channels", top}, {"symptom", symptom},
          {"victims", tenants(inc.victims)}, {"aggressors", tenants(inc.aggressors)},
          {"withdrawn", inc.withdrawn.empty() ? json(nullptr)
                                              : json{{"at", format_utc(inc.withdrawn_unix_ns)},
                                                     {"at_unix_ns", inc.withdrawn_unix_ns}, {"text", inc.withdrawn}}},
          {"action", inc.action}};
}

}  // namespace report

namespace {
nlohmann::json nums(const std::vector<double>& v) {
  auto a = nlohmann::json::array();
  for (double x : v) a.push_back(report::json_number(x));
  return a;
}
}  // namespace

std::string render_json(const DetectResult& r, const std::string& source) {
  using nlohmann::json;
  const auto& m = r.meta;
  json j;
  j["schema"] = "reveal.detect/1";
  j["source"] = source;
  json probes = json::array();
  for (const auto& p : m.probes)
    probes.push_back({{"name", p.name}, {"available", p.available}, {"reason", p.reason}, {"channels", p.n_channels}});
  j["run"] = {{"hostname", m.hostname}, {"kernel", m.kernel}, {"cpu_model", m.cpu_model}, {"cores", m.cores},
              {"interval_s", m.interval_s}, {"start", format_utc(m.start_unix_ns)},
              {"end", format_utc(m.end_unix_ns)}, {"start_unix_ns", m.start_unix_ns},
              {"end_unix_ns", m.end_unix_ns}, {"command", m.command}, {"exit_code", m.exit_code},
              {"samples", r.n_samples}, {"probes", probes}};
  j["reference"] = {{"mode", r.mode}, {"baselines", r.baseline_hosts},
                    {"model", r.baseline_model.empty() ? json(nullptr) : json(r.baseline_model)},
                    {"windows", r.reference_windows}, {"false_incidents_per_day", r.false_per_day},
                    {"window_false_rate", r.window_false_rate}, {"fused_detectors", r.fused_detectors}};
  j["channels"] = {{"recorded", r.n_channels_recorded}, {"scored", r.n_channels_used}, {"model", r.n_channels_model}};
  j["notes"] = r.notes;
  json incs = json::array();
  for (const auto& inc : r.incidents) incs.push_back(report::incident_json(inc));
  j["incidents"] = incs;
  json changes = json::array();  // anomalous intervals without a symptom: not incidents
  for (const auto& c : r.workload_changes) changes.push_back(report::incident_json(c));
  j["workload_changes"] = changes;
  json dets = json::array();
  for (const auto& d : r.detectors)
    dets.push_back({{"name", d.name}, {"fused", d.fused}, {"threshold", report::json_number(d.threshold)}, {"cut", d.cut},
                    {"raw", nums(d.raw)}, {"calibrated", nums(d.calibrated)}, {"tail_p", nums(d.tail_p)}});
  json symptoms = json::array();  // the symptom that led each window, null when none did
  for (const std::string& c : r.window_symptom) symptoms.push_back(c.empty() ? json(nullptr) : json(c));
  j["windows"] = {{"start_s", nums(r.window_start_s)}, {"end_s", nums(r.window_end_s)}, {"fused", nums(r.fused)},
                  {"top_channel", r.window_top_channel}, {"top_z", nums(r.window_top_z)},
                  {"symptom", symptoms}, {"threshold", 1.0}, {"detectors", dets}};
  if (r.window_z.rows() > 0) {
    json zs = json::array();
    for (std::size_t k = 0; k < r.window_z.rows(); ++k) {
      const auto row = r.window_z.row(k);
      zs.push_back(nums(std::vector<double>(row.begin(), row.end())));
    }
    j["windows"]["channels"] = r.scored_channels;
    j["windows"]["channel_z"] = std::move(zs);
  }
  return j.dump(2) + "\n";
}

}  // namespace reveal
