#include "report/json.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reveal/report.h"
#include "reveal/tenants.h"
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
  json gpu_pods = json::array();
  for (const GpuPod& p : inc.gpu_pods) gpu_pods.push_back(gpu_pod_json(p));
  json impact = nullptr;
  if (inc.impact.measured) {
    json per = json::array();
    for (const auto& t : inc.impact.tenants)
      per.push_back({{"cgroup", t.cgroup}, {"cores_before", num(t.cores_before)}, {"cores_after", num(t.cores_after)},
                     {"throughput", num(t.throughput)}});
    impact = {{"slowdown", num(inc.impact.slowdown)},
              {"slowdown_lo", num(inc.impact.slowdown_lo)},
              {"slowdown_hi", num(inc.impact.slowdown_hi)},
              {"job_seconds_lost", num(inc.impact.job_seconds_lost)},
              {"tenants", per},
              {"basis", inc.impact.basis},
              {"text", impact_text(inc.impact)}};
  }
  return {{"kind", inc.kind}, {"start", format_utc(inc.start_unix_ns)}, {"end", format_utc(inc.end_unix_ns)},
          {"start_unix_ns", inc.start_unix_ns}, {"end_unix_ns", inc.end_unix_ns},
          {"start_s", inc.start_s}, {"end_s", inc.end_s}, {"peak_score", inc.peak_score},
          {"subsystem", to_string(inc.subsystem)}, {"confidence", inc.confidence},
          {"subsystem_shares", shares},
          {"focus", inc.focus.empty() ? json(nullptr) : json(inc.focus)},
          {"focus_share", inc.focus_share}, {"detectors", dets}, {"top_channels", top}, {"symptom", symptom},
          {"victims", tenants(inc.victims)}, {"aggressors", tenants(inc.aggressors)}, {"impact", impact},
          {"gpu_pods", gpu_pods},
          {"withdrawn", inc.withdrawn.empty() ? json(nullptr)
                                              : json{{"at", format_utc(inc.withdrawn_unix_ns)},
                                                     {"at_unix_ns", inc.withdrawn_unix_ns}, {"text", inc.withdrawn}}},
          {"action", inc.action}};
}

nlohmann::json gpu_pod_json(const GpuPod& p) {
  return {{"gpu", p.gpu}, {"uuid", p.uuid}, {"namespace", p.ns}, {"pod", p.pod}, {"container", p.container},
          {"resource", p.resource}};
}

std::string marker_token() {
  return fmt::format("{:016x}", std::random_device{}() * 0x9e3779b97f4a7c15ull ^ std::random_device{}());
}

std::function<void(std::string_view)> indented(std::string indent, std::function<void(std::string_view)> write) {
  // A line feed is written once more text follows it (the last one is dropped).
  struct State {
    bool line_start = false, held_newline = false;
    std::string out;
  };
  return [indent = std::move(indent), write = std::move(write), st = std::make_shared<State>()](std::string_view piece) {
    st->out.clear();
    for (char c : piece) {
      if (st->held_newline) {
        st->out += '\n';
        st->held_newline = false;
        st->line_start = true;
      }
      if (c == '\n') {
        st->held_newline = true;
        continue;
      }
      if (st->line_start) st->out += indent;
      st->line_start = false;
      st->out += c;
    }
    if (!st->out.empty()) write(st->out);
  };
}

}  // namespace report

namespace {

nlohmann::json nums(const std::vector<double>& v) {
  auto a = nlohmann::json::array();
  for (double x : v) a.push_back(report::json_number(x));
  return a;
}

// The per-window arrays (a week holds 600 000 windows) are not built as a document, which costs
// some 70 bytes a value: each is a marker string in the document, replaced in its text by the
// array written element by element, in the layout dump(2) gives it (one element a line, two
// spaces deeper than the key's line; "[]" when empty), each element as dump() writes it.
class WindowArrays {
 public:
  // Markers carry a random token, so that no string of the document (a channel name from a
  // crafted store) can pass for one.
  WindowArrays() : token_(report::marker_token()) {}
  // A marker for the array of `n` elements whose text element(k) appends.
  template <class F>
  std::string add(std::size_t n, F element) {
    arrays_.push_back({n, std::function<void(std::string&, std::size_t)>(element)});
    return "\x01" + token_ + "-" + std::to_string(arrays_.size() - 1);
  }
  // `text` (dump(2) of the document holding the markers) with every marker replaced, and a
  // final line feed, handed to `write` in pieces of about 1 MiB.
  void splice(const std::string& text, const std::function<void(std::string_view)>& write) const {
    struct At {
      std::size_t pos, len, k;  // the quoted marker's position and length, the array
      bool operator<(const At& o) const { return pos < o.pos; }
    };
    std::vector<At> at;
    for (std::size_t k = 0; k < arrays_.size(); ++k) {
      const std::string quoted = "\"\\u0001" + token_ + "-" + std::to_string(k) + "\"";
      const std::size_t pos = text.find(quoted);
      if (pos != std::string::npos) at.push_back({pos, quoted.size(), k});
    }
    std::sort(at.begin(), at.end());
    constexpr std::size_t kPiece = 1u << 20;
    std::string out;
    out.reserve(kPiece + 4096);
    const auto flush = [&](bool force) {
      if (out.size() >= kPiece || (force && !out.empty())) {
        write(out);
        out.clear();
      }
    };
    std::size_t from = 0;
    for (const auto& [pos, len, k] : at) {
      write(std::string_view(text).substr(from, pos - from));
      const std::size_t line = text.rfind('\n', pos);
      std::size_t indent = 0;
      for (std::size_t i = line == std::string::npos ? 0 : line + 1; i < pos && text[i] == ' '; ++i) ++indent;
      const Array& a = arrays_[k];
      if (a.n == 0) {
        out += "[]";
      } else {
        out += "[\n";
        for (std::size_t e = 0; e < a.n; ++e) {
          out.append(indent + 2, ' ');
          a.element(out, e);
          out += e + 1 < a.n ? ",\n" : "\n";
          flush(false);
        }
        out.append(indent, ' ');
        out += ']';
      }
      flush(true);
      from = pos + len;
    }
    write(std::string_view(text).substr(from));
    write("\n");
  }

 private:
  struct Array {
    std::size_t n;
    std::function<void(std::string&, std::size_t)> element;
  };
  std::string token_;
  std::vector<Array> arrays_;
};

// Appends a number as dump() writes it (null when not finite).
void append_number(std::string& out, double x) { out += report::json_number(x).dump(); }

std::string numbers(WindowArrays& w, const std::vector<double>& v) {
  return w.add(v.size(), [&v](std::string& out, std::size_t k) { append_number(out, v[k]); });
}

}  // namespace

void write_json(const DetectResult& r, const std::string& source, const std::function<void(std::string_view)>& write) {
  using nlohmann::json;
  const auto& m = r.meta;
  WindowArrays big;
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
                    {"raw", numbers(big, d.raw)}, {"calibrated", numbers(big, d.calibrated)},
                    {"tail_p", numbers(big, d.tail_p)}});
  // The symptom that led each window, null when none did; each window's top channel.
  const auto strings = [&big](const std::vector<std::string>& v, bool empty_is_null) {
    return big.add(v.size(), [&v, empty_is_null](std::string& out, std::size_t k) {
      out += empty_is_null && v[k].empty() ? std::string("null") : json(v[k]).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    });
  };
  j["windows"] = {{"start_s", numbers(big, r.window_start_s)}, {"end_s", numbers(big, r.window_end_s)},
                  {"fused", numbers(big, r.fused)}, {"top_channel", strings(r.window_top_channel, false)},
                  {"top_z", numbers(big, r.window_top_z)}, {"symptom", strings(r.window_symptom, true)},
                  {"threshold", 1.0}, {"detectors", dets}};
  if (r.window_z.rows() > 0) {
    json zs = json::array();
    for (std::size_t k = 0; k < r.window_z.rows(); ++k) {
      const auto row = r.window_z.row(k);
      zs.push_back(nums(std::vector<double>(row.begin(), row.end())));
    }
    j["windows"]["channels"] = r.scored_channels;
    j["windows"]["channel_z"] = std::move(zs);
  }
  big.splice(j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace), write);
}

std::string render_json(const DetectResult& r, const std::string& source) {
  std::string out;
  write_json(r, source, [&out](std::string_view piece) { out += piece; });
  return out;
}

}  // namespace reveal
