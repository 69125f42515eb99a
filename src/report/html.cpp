// The HTML report; what it shows is documented in include/reveal/html_report.h.
#include "reveal/html_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "reveal/features.h"
#include "reveal/report.h"
#include "reveal/tenants.h"
#include "reveal/units.h"
#include "svg.h"

namespace reveal {
namespace {

using report::esc;
using report::format_seconds;
using report::SvgChart;

constexpr double kBandZ = 3.0;           // reference band: median ± 3 robust SD
constexpr std::size_t kHeatBins = 240;   // heatmap columns at most
constexpr double kTimelineYMax = 20.0;   // fused scores above this are drawn at it
constexpr std::size_t kVerdictMax = 10;  // incidents listed at the top, at most
constexpr std::size_t kCardsMax = 20;    // incident cards, at most (all are in the incident table)

// Tableau 10, one colour per subsystem (same order as the Subsystem enum).
constexpr std::array<const char*, kNumSubsystems> kSubsystemColour = {
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#e15759", "#9c9c9c"};
constexpr std::array<const char*, 10> kHostColour = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1",
                                                     "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"};

const char* subsystem_colour(Subsystem s) { return kSubsystemColour[std::size_t(s) % kSubsystemColour.size()]; }

std::string num_attr(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : "NaN"; }

std::string when(const Incident& inc) {
  return fmt::format("{} (+{} → +{}, {})", format_utc(inc.start_unix_ns), format_seconds(inc.start_s),
                     format_seconds(inc.end_s), format_seconds(inc.end_s - inc.start_s));
}

// Colour of a heatmap cell for a robust-z level: pale below 2, then a log ramp to dark red at 200.
std::string heat_colour(double v) {
  if (!(v >= 2)) return "#f4f4f4";
  const double t = std::clamp(std::log(v / 2) / std::log(100.0), 0.0, 1.0);
  const auto mix = [t](int a, int b) { return int(std::lround(a + (b - a) * t)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(0xfd, 0x8b), mix(0xe0, 0x00), mix(0xc5, 0x1a));
}

// A host's samples as the detectors see them (rates and derived channels), with each row's
// time in seconds since the first analysed sample (DetectResult::origin_unix_ns; the slice's
// first sample in peers mode), the origin of window and incident times.
struct HostSeries {
  Series s;
  std::vector<double> t;
};

HostSeries host_series(const Recording& run, const DetectResult& r) {
  HostSeries h{prepare_series(run), {}};  // what the detectors scored, in their units
  h.t.resize(run.t_unix_ns.size());
  for (std::size_t i = 0; i < h.t.size(); ++i) h.t[i] = double(run.t_unix_ns[i] - r.origin_unix_ns) * 1e-9;
  return h;
}

// The detector reference of a scored channel, if it is one.
struct ChannelRef {
  std::size_t col = 0;
  bool found = false;
};
ChannelRef scored_index(const DetectResult& r, const std::string& name) {
  for (std::size_t j = 0; j < r.scored_channels.size(); ++j)
    if (r.scored_channels[j] == name) return {j, j < r.reference_median.size()};
  return {};
}

std::string summary_section(const HtmlHost& h, const std::string& sfx) {
  const Recording& run = *h.run;
  const DetectResult& r = *h.result;
  const RunMetadata& m = run.meta;
  std::string o = fmt::format(R"(<section id="summary{}" class="summary"><h2>Run</h2><dl>)", sfx);
  const auto row = [&](std::string_view k, const std::string& v) {
    if (!v.empty()) o += fmt::format("<dt>{}</dt><dd>{}</dd>", k, esc(v));
  };
  row("host", m.hostname);
  if (!m.cpu_model.empty() || m.cores > 0)
    row("CPU", fmt::format("{}{}{} cores", m.cpu_model, m.cpu_model.empty() ? "" : ", ", m.cores));
  row("kernel", m.kernel);
  if (!m.command.empty()) row("workload", fmt::format("{} (exit {})", m.command, m.exit_code));
  const double span = run.t_unix_ns.size() > 1 ? double(run.t_unix_ns.back() - run.t_unix_ns.front()) * 1e-9 : 0;
  if (m.start_unix_ns)
    row("time", fmt::format("{} → {} ({})", format_utc(run.t_unix_ns.empty() ? m.start_unix_ns : run.t_unix_ns.front()),
                            format_utc(run.t_unix_ns.empty() ? m.end_unix_ns : run.t_unix_ns.back()),
                            format_seconds(span)));
  row("samples", fmt::format("{} at {:g} s", run.t_unix_ns.size(), m.interval_s));
  row("channels", fmt::format("{} recorded, {} scored, {} in the Isolation Forest", r.n_channels_recorded,
                              r.n_channels_used, r.n_channels_model));
  std::string ref = r.mode == "self" ? "self (the run's own robust statistics)" : "baseline";
  if (!r.baseline_model.empty()) ref += " model " + r.baseline_model;
  if (!r.baseline_hosts.empty())
    ref += fmt::format(" ({} known-good run{})", r.baseline_hosts.size(), r.baseline_hosts.size() == 1 ? "" : "s");
  row("reference", ref);
  if (r.window_false_rate > 0)
    row("calibration", fmt::format("EVT tails of {} detectors for {:g} false incident{} per host-day (window "
                                   "anomalous at tail probability ≤ {:.1e})",
                                   r.fused_detectors, r.false_per_day, r.false_per_day == 1 ? "" : "s",
                                   r.window_false_rate / double(std::max<std::size_t>(r.fused_detectors, 1))));
  if (!m.reveal_version.empty()) row("recorded by", "reveal " + m.reveal_version);
  o += "</dl>";
  for (const auto& n : r.notes) o += fmt::format(R"(<p class="note">note: {}</p>)", esc(n));

  if (!m.probes.empty()) {
    std::size_t up = 0;
    for (const auto& p : m.probes) up += p.available;
    o += fmt::format("<details><summary>Probes: {} of {} available</summary><table class=\"plain\"><thead><tr>"
                     "<th>probe</th><th>channels</th><th>status</th></tr></thead><tbody>",
                     up, m.probes.size());
    for (const auto& p : m.probes)
      o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>", esc(p.name), p.n_channels,
                       p.available ? "available" : esc("unavailable: " + p.reason));
    o += "</tbody></table></details>";
  }
  if (!run.config.empty()) {
    o += fmt::format("<details><summary>Configuration snapshot: {} keys</summary><table class=\"plain\"><tbody>",
                     run.config.size());
    for (const auto& [k, v] : run.config) o += fmt::format("<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(v));
    o += "</tbody></table></details>";
  }
  if (!run.config_changes.empty()) {
    o += fmt::format("<details open><summary>Configuration changes during the run: {}</summary><ul>",
                     run.config_changes.size());
    for (const auto& c : run.config_changes)
      o += fmt::format("<li>{} {}: {} → {}</li>", format_utc(c.t_unix_ns), esc(c.key),
                       esc(c.old_value.empty() ? "(none)" : c.old_value), esc(c.value.empty() ? "(none)" : c.value));
    o += "</ul></details>";
  }
  if (!run.events.empty()) {
    o += fmt::format("<details><summary>Events: {}</summary><ul>", run.events.size());
    for (std::size_t i = 0; i < run.events.size() && i < 200; ++i) {
      const auto& e = run.events[i];
      o += fmt::format("<li>{} {} {}: {}</li>", format_utc(e.t_unix_ns), esc(e.source), esc(e.kind), esc(e.detail));
    }
    if (run.events.size() > 200) o += fmt::format("<li>… and {} more</li>", run.events.size() - 200);
    o += "</ul></details>";
  }
  return o + "</section>";
}

// x extent of a host's charts: its windows (or samples), in seconds since the span's start.
std::pair<double, double> time_extent(const DetectResult& r) {
  if (r.window_end_s.empty()) return {0, 1};
  return {std::min(0.0, r.window_start_s.front()), std::max(r.window_end_s.back(), 1.0)};
}

// Levels as the timeline draws them: clamped to [0, kTimelineYMax], NaN where not computed.
std::vector<double> drawn_levels(const std::vector<double>& level) {
  std::vector<double> y(level.size());
  for (std::size_t k = 0; k < y.size(); ++k) y[k] = std::isfinite(level[k]) ? std::clamp(level[k], 0.0, kTimelineYMax) : NAN;
  return y;
}

// The timeline's y extent for these fused levels: at least 1.5 (the threshold shows), at most
// kTimelineYMax.
double level_ymax(double ymax, const std::vector<double>& fused) {
  for (double f : fused)
    if (std::isfinite(f)) ymax = std::max(ymax, std::min(f, kTimelineYMax));
  return ymax;
}

std::string timeline_chart(const DetectResult& r, const std::string& id) {
  SvgChart c(id, "timeline", 960, 220, 46, 70);
  const auto [t0, t1] = time_extent(r);
  const double ymax = level_ymax(1.5, r.fused);
  c.x_domain(t0, t1);
  c.y_domain(0, ymax * 1.08);
  c.axes(true, "fused anomaly level");
  if (r.settle_s > 0) c.span(t0, r.settle_s, "settle", "start-up: no incident opens before +" + format_seconds(r.settle_s));
  for (std::size_t i = 0; i < r.incidents.size(); ++i) {
    const auto& inc = r.incidents[i];
    c.span(inc.start_s, inc.end_s, inc.kind == "absence" ? "inc-absence" : "inc",
           fmt::format("incident #{}: {} {}", i + 1, to_string(inc.subsystem), when(inc)));
  }
  // Runs of windows a symptom's step made anomalous below the threshold (symptom-led).
  for (std::size_t k = 0; k < r.window_symptom.size() && k < r.window_end_s.size(); ++k) {
    if (r.window_symptom[k].empty()) continue;
    std::size_t e = k;
    while (e + 1 < r.window_symptom.size() && e + 1 < r.window_end_s.size() && r.window_symptom[e + 1] == r.window_symptom[k]) ++e;
    c.span(r.window_start_s[k], r.window_end_s[e], "led",
           fmt::format("{} stepped up materially: {} window{} anomalous below the threshold", r.window_symptom[k],
                       e - k + 1, e == k ? "" : "s"));
    k = e;
  }
  c.hline(1.0, "threshold", "threshold 1");
  // Each fused detector's own level, thin, under the fused score (their maximum).
  for (std::size_t d = 0; d < r.detectors.size(); ++d) {
    const DetectorTrace& t = r.detectors[d];
    if (!t.fused || t.level.size() != r.fused.size()) continue;
    c.line(r.window_end_s, drawn_levels(t.level), "detector d" + std::to_string(d), t.name + " level per window");
  }
  c.line(r.window_end_s, drawn_levels(r.fused), "fused", "fused anomaly level per window (≥ 1: anomalous)");
  return c.str();
}

// The fused detectors' line styles, named.
std::string detector_legend(const DetectResult& r) {
  std::string o;
  for (std::size_t d = 0; d < r.detectors.size(); ++d)
    if (r.detectors[d].fused)
      o += fmt::format("{}<span class=\"k-d{}\">{}</span>", o.empty() ? "" : ", ", d, esc(r.detectors[d].name));
  return o.empty() ? "none" : o;
}

// Small multiple of one channel around an incident.
std::string channel_multiple(const HostSeries& hs, const DetectResult& r, const Incident& inc,
                             const ChannelEvidence& ev) {
  const int col = hs.s.find(ev.name);
  if (col < 0) return fmt::format(R"(<figure class="multiple"><figcaption>{} — no samples</figcaption></figure>)", esc(ev.name));
  const double len = std::max(inc.end_s - inc.start_s, 1.0);
  const double pad = std::max(20.0, len * 0.75);
  const double a = inc.start_s - pad, b = inc.end_s + pad;
  std::vector<double> xs, ys;
  double lo = INFINITY, hi = -INFINITY;
  for (std::size_t i = 0; i < hs.t.size(); ++i) {
    if (hs.t[i] < a || hs.t[i] > b) continue;
    const double v = hs.s.values(i, std::size_t(col));
    xs.push_back(hs.t[i]);
    ys.push_back(v);
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  const ChannelRef ref = scored_index(r, ev.name);
  double med = NAN, sd = NAN;
  if (ref.found) {
    med = r.reference_median[ref.col];
    sd = r.reference_scale[ref.col];
  }
  const bool band = std::isfinite(med) && std::isfinite(sd);
  if (band) lo = std::min(lo, med - kBandZ * sd), hi = std::max(hi, med + kBandZ * sd);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  // A flat channel (relative to its size): a band around it, at least ±0.5.
  if (hi - lo <= 1e-9 * std::max({1.0, std::fabs(lo), std::fabs(hi)})) {
    const double pad = std::max(0.5, 1e-6 * std::fabs(lo));
    lo -= pad, hi += pad;
  }
  const double m = (hi - lo) * 0.06;
  SvgChart c({}, "small", 300, 120, 52, 6, 6, 20);
  c.x_domain(std::max(a, xs.empty() ? a : xs.front()), std::min(b, xs.empty() ? b : xs.back()));
  c.y_domain(lo - m, hi + m);
  c.axes(true);
  c.span(inc.start_s, inc.end_s, inc.kind == "absence" ? "inc-absence" : "inc", "incident: " + when(inc));
  if (band) {
    c.band(med - kBandZ * sd, med + kBandZ * sd, "ref-band",
           fmt::format("reference band: median {} ± 3 × robust SD {}", format_value(med, ev.unit),
                       format_value(sd, ev.unit)));
    c.hline(med, "ref-median");
  }
  c.line(xs, ys, "series", ev.name, subsystem_colour(ev.subsystem));
  std::string cap = fmt::format("<b>{}</b> <span class=\"sub\" style=\"color:{}\">{}</span><br>", esc(ev.name),
                                subsystem_colour(ev.subsystem), to_string(ev.subsystem));
  if (inc.kind == "absence")
    cap += fmt::format("stopped; last value {}", esc(format_value(ev.reference, ev.unit)));
  else
    cap += fmt::format("{} vs {} · z {:+.1f}", esc(format_value(ev.value, ev.unit)),
                       esc(format_value(ev.reference, ev.unit)), ev.z);
  return fmt::format(R"(<figure class="multiple">{}<figcaption>{}</figcaption></figure>)", c.str(), cap);
}

std::string incident_card(const HostSeries& hs, const DetectResult& r, std::size_t i, const std::string& sfx) {
  const Incident& inc = r.incidents[i];
  std::string o = fmt::format(
      R"(<section class="incident" id="incident{}-{}" data-subsystem="{}" data-kind="{}" style="border-left-color:{}">)",
      sfx, i + 1, to_string(inc.subsystem), esc(inc.kind), subsystem_colour(inc.subsystem));
  o += fmt::format("<h3>#{} {}{} <span class=\"when\">{}</span></h3>", i + 1, to_string(inc.subsystem),
                   inc.kind == "absence" ? " — data stopped" : "", esc(when(inc)));
  o += "<p class=\"facts\">";
  if (inc.kind == "absence") {
    o += fmt::format("{} channel{} stopped producing data", inc.top.size(), inc.top.size() == 1 ? "" : "s");
  } else {
    o += fmt::format("confidence <b>{:.0f} %</b> · peak level <b>{:.2f}</b> (threshold 1", inc.confidence * 100,
                     inc.peak_score);
    if (r.window_false_rate > 0 && r.window_false_rate < 1 && inc.peak_score > 0)
      o += fmt::format("; tail probability {:.1e}", std::exp(inc.peak_score * std::log(r.window_false_rate)) /
                                                      double(std::max<std::size_t>(r.fused_detectors, 1)));
    if (inc.peak_score < 1) o += "; below it: the symptom's material step made its windows anomalous";
    o += ")";
  }
  if (!inc.focus.empty()) o += fmt::format(" · focus <b>{}</b> ({:.0f} % of the evidence)", esc(inc.focus), inc.focus_share * 100);
  o += "</p>";
  if (!inc.subsystem_shares.empty()) {
    o += "<div class=\"shares\" title=\"share of the evidence per subsystem\">";
    for (const auto& [s, share] : inc.subsystem_shares)
      if (share >= 0.005)
        o += fmt::format(R"(<span style="width:{:.1f}%;background:{}" title="{} {:.0f} %">{}</span>)", share * 100,
                         subsystem_colour(s), to_string(s), share * 100, share >= 0.12 ? to_string(s) : "");
    o += "</div>";
  }
  if (!inc.detectors.empty()) {
    o += "<p class=\"detectors\">detectors (peak level; ★ flagged windows on its own):";
    for (const auto& d : inc.detectors) {
      o += fmt::format(" {} {:.2f}{}", esc(d.detector), d.peak_level, d.peak_level >= 1 ? "★" : "");
      if (!d.subsystem_shares.empty())
        o += fmt::format(" ({} {:.0f} %)", to_string(d.subsystem_shares.front().first),
                         d.subsystem_shares.front().second * 100);
    }
    o += "</p>";
  }
  if (!inc.symptom.name.empty())
    o += fmt::format("<p class=\"symptom\"><b>Symptom:</b> {} rose {} over {} (z {:+.1f})</p>", esc(inc.symptom.name),
                     esc(format_value(inc.symptom.value, inc.symptom.unit)),
                     esc(format_value(inc.symptom.reference, inc.symptom.unit)), inc.symptom.z);
  for (const auto* list : {&inc.victims, &inc.aggressors})
    if (!list->empty()) {
      o += list == &inc.victims ? "<p class=\"tenants\"><b>Hurt:</b> " : "<p class=\"tenants\"><b>Likely neighbour (CPU use rose with the onset):</b> ";
      for (const auto& t : *list) o += esc(t.text) + (&t == &list->back() ? "" : "; ");
      o += "</p>";
    }
  if (!inc.gpu_pods.empty()) {
    o += "<p class=\"tenants\"><b>GPU held by:</b> ";
    for (const auto& p : inc.gpu_pods)
      o += esc(p.gpu + " " + p.ns + "/" + p.pod + " (container " + p.container + ")") +
           (&p == &inc.gpu_pods.back() ? "" : "; ");
    o += "</p>";
  }
  if (inc.impact.measured) {
    o += "<p class=\"impact\"><b>Impact:</b> " + esc(impact_text(inc.impact));
    if (inc.impact.known()) o += " <span class=\"basis\">(" + esc(inc.impact.basis) + ")</span>";
    o += "</p>";
  }
  o += fmt::format("<p class=\"action\"><b>Action:</b> {}</p>", esc(inc.action));
  o += "<div class=\"multiples\">";
  // In an anomaly, a channel within one robust SD of its reference is no evidence (a run with few
  // channels fills the top list with them): not drawn, except the first. An absence's channels
  // all have z 0 and are all drawn.
  for (std::size_t i = 0; i < inc.top.size(); ++i)
    if (i == 0 || inc.kind != "anomaly" || !(std::abs(inc.top[i].z) < 1))
      o += channel_multiple(hs, r, inc, inc.top[i]);
  o += "</div><p class=\"legend\">line: samples; shaded column: the incident; band: reference median ± 3 robust SD "
       "of the window mean (where the robust z detector sees the channel as normal)</p></section>";
  return o;
}

// Per window and subsystem: the mean of the 3 largest |z| of the subsystem's channels.
std::string heatmap_chart(const HostSeries& hs, const DetectResult& r, const std::string& id) {
  const std::size_t nw = r.window_z.rows(), nc = r.window_z.cols();
  if (nw == 0 || nc == 0 || nw != r.window_end_s.size())
    return "<p class=\"note\">No per-channel window scores in this result (detect with window_z).</p>";
  std::vector<Subsystem> sub(nc, Subsystem::system);
  std::array<bool, kNumSubsystems> present{};
  for (std::size_t j = 0; j < nc && j < r.scored_channels.size(); ++j) {
    const int col = hs.s.find(r.scored_channels[j]);
    if (col >= 0) sub[j] = hs.s.channels[std::size_t(col)].subsystem;
    present[std::size_t(sub[j])] = true;
  }
  std::vector<Subsystem> rows;
  for (std::size_t s = 0; s < kNumSubsystems; ++s)
    if (present[s]) rows.push_back(Subsystem(s));
  const std::size_t nb = std::min(nw, kHeatBins);
  Matrix cell(rows.size(), nb);  // zero-initialised
  std::array<std::array<double, 3>, kNumSubsystems> top{};
  for (std::size_t k = 0; k < nw; ++k) {
    for (auto& t : top) t.fill(0.0);
    for (std::size_t j = 0; j < nc; ++j) {
      double v = std::fabs(r.window_z(k, j));
      if (!std::isfinite(v)) continue;
      auto& t = top[std::size_t(sub[j])];
      for (double& slot : t)
        if (v > slot) std::swap(v, slot);
    }
    const std::size_t b = k * nb / nw;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& t = top[std::size_t(rows[i])];
      cell(i, b) = std::max(cell(i, b), (t[0] + t[1] + t[2]) / 3.0);
    }
  }
  const double row_h = 18, left = 96;
  SvgChart c(id, "heatmap", 960, 30 + row_h * double(rows.size()), left, 70, 6, 24);
  const auto [t0, t1] = time_extent(r);
  c.x_domain(t0, t1);
  c.y_domain(0, double(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double y = 6 + row_h * double(i);
    c.text_px(left - 6, y + row_h * 0.7, to_string(rows[i]), "rowlabel", "end");
    for (std::size_t b = 0; b < nb; ++b) {
      // Windows are drawn at their end time, as on the timeline: bin b covers (end of the
      // previous bin's last window, end of its own last window].
      const std::size_t k0 = b * nw / nb, k1 = std::max(k0 + 1, (b + 1) * nw / nb) - 1;
      const double x = c.x(k0 == 0 ? r.window_start_s[0] : r.window_end_s[k0 - 1]);
      const double w = std::max(c.x(r.window_end_s[k1]) - x, 0.5);
      c.rect_px(x, y, w + 0.3, row_h - 1, heat_colour(cell(i, b)),
                fmt::format("{} +{}: mean of top-3 |z| {:.1f}", to_string(rows[i]), format_seconds(r.window_end_s[k1]),
                            cell(i, b)));
    }
  }
  for (const auto& inc : r.incidents) c.span(inc.start_s, inc.end_s, "inc-outline", "incident " + when(inc));
  if (r.settle_s > 0) c.span(0, r.settle_s, "settle", "start-up: no incident opens before +" + format_seconds(r.settle_s));
  c.axes(true, {}, false);
  return c.str() +
         "<p class=\"legend\">cell: mean of the 3 largest |robust z| among the subsystem's channels in the time bin "
         "(pale below 2; darkest at 200); outlined: incidents</p>";
}

std::string channel_table(const HostSeries& hs, const DetectResult& r, const std::string& sfx) {
  const std::size_t nw = r.window_z.rows(), nc = r.scored_channels.size();
  struct Row {
    std::size_t j;
    double peak = 0, at = NAN;
    int incident = 0;
  };
  std::vector<Row> rows(nc);
  for (std::size_t j = 0; j < nc; ++j) {
    rows[j].j = j;
    if (j >= r.window_z.cols()) continue;
    // The peak after the start-up settle, where incidents can open (over every window when the
    // run is all start-up).
    std::size_t from = 0;
    while (from < nw && r.window_end_s[from] < r.settle_s) ++from;
    if (from == nw) from = 0;
    std::size_t best = nw;
    for (std::size_t k = from; k < nw; ++k)
      if (std::isfinite(r.window_z(k, j)) && (best == nw || std::fabs(r.window_z(k, j)) > std::fabs(r.window_z(best, j))))
        best = k;
    if (best == nw) continue;
    rows[j].peak = r.window_z(best, j);
    rows[j].at = r.window_end_s[best];
    for (std::size_t i = 0; i < r.incidents.size(); ++i)
      if (r.incidents[i].kind == "anomaly" && best >= r.incidents[i].first_window && best <= r.incidents[i].last_window)
        rows[j].incident = int(i + 1);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return std::fabs(a.peak) > std::fabs(b.peak); });
  std::string o = fmt::format(
      R"(<input type="search" class="filter" data-table="channels{0}" placeholder="filter channels…" aria-label="filter channels">)"
      R"(<table id="channels{0}" class="sortable"><thead><tr>)"
      R"(<th data-key="channel" data-type="text">channel</th><th data-key="subsystem" data-type="text">subsystem</th>)"
      R"(<th data-key="reference" data-type="num">reference median</th><th data-key="scale" data-type="num">robust SD</th>)"
      R"(<th data-key="peak" data-type="num" aria-sort="descending" title="after the start-up">peak |z|</th><th data-key="z" data-type="num">peak z</th>)"
      R"(<th data-key="at" data-type="num">at</th><th data-key="incident" data-type="num">incident</th></tr></thead><tbody>)",
      sfx);
  for (const Row& row : rows) {
    const std::string& name = r.scored_channels[row.j];
    const int col = hs.s.find(name);
    const ChannelInfo* ci = col >= 0 ? &hs.s.channels[std::size_t(col)] : nullptr;
    const std::string unit = ci ? ci->unit : "";
    const Subsystem s = ci ? ci->subsystem : Subsystem::system;
    const double med = row.j < r.reference_median.size() ? r.reference_median[row.j] : NAN;
    const double sd = row.j < r.reference_scale.size() ? r.reference_scale[row.j] : NAN;
    o += fmt::format(
        R"(<tr><td data-value="{0}"{9}>{0}</td><td data-value="{1}">{1}</td><td data-value="{2}">{3}</td>)"
        R"(<td data-value="{4}">{5}</td><td data-value="{6}">{7:.1f}</td><td data-value="{8}">{8:+.1f}</td>)",
        esc(name), to_string(s), num_attr(med), esc(format_value(med, unit)), num_attr(sd),
        esc(format_value(sd, unit)), num_attr(std::fabs(row.peak)), std::fabs(row.peak), row.peak,
        ci && !ci->help.empty() ? " title=\"" + esc(ci->help) + "\"" : "");
    o += fmt::format(R"(<td data-value="{}">{}</td><td data-value="{}">{}</td></tr>)", num_attr(row.at),
                     std::isfinite(row.at) ? "+" + format_seconds(row.at) : "", row.incident,
                     row.incident ? fmt::format("#{}", row.incident) : "");
  }
  return o + "</tbody></table>";
}

// Indices of the `cap` strongest incidents (absences first, then by peak level), in time order.
std::vector<std::size_t> strongest(const DetectResult& r, std::size_t cap) {
  std::vector<std::size_t> idx(r.incidents.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  if (idx.size() <= cap) return idx;
  const auto strength = [&](std::size_t i) {
    return r.incidents[i].kind == "absence" ? INFINITY : r.incidents[i].peak_score;
  };
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return strength(a) > strength(b); });
  idx.resize(cap);
  std::sort(idx.begin(), idx.end());
  return idx;
}

// One line naming the workload changes (anomalous, no symptom: not incidents), at most
// kVerdictMax of them; "" when there are none.
std::string workload_changes_line(const DetectResult& r) {
  if (r.workload_changes.empty()) return "";
  const std::size_t t = count_transients(r.workload_changes), n = r.workload_changes.size() - t;
  std::string o =
      t == 0 ? fmt::format("<div class=\"changes\">{} workload change{} (anomalous intervals in which no symptom rose: "
                           "a job started, stopped or changed phase; not incidents):",
                           n, n == 1 ? "" : "s")
             : fmt::format("<div class=\"changes\">{} workload change{} (anomalous intervals in which no symptom rose: "
                           "a job started, stopped or changed phase) and {} transient{} (symptoms over within the "
                           "minimum duration); not incidents:",
                           n, n == 1 ? "" : "s", t, t == 1 ? "" : "s");
  const auto item = [&](std::size_t i) {
    const auto& c = r.workload_changes[i];
    return fmt::format("{} {} <b style=\"color:{}\">{}</b>{}", i ? ";" : "", esc(when(c)), subsystem_colour(c.subsystem),
                       to_string(c.subsystem),
                       c.kind == "transient"    ? " (" + esc(c.withdrawn) + ")"
                       : c.withdrawn.empty() ? ""
                                             : " (an incident withdrawn: a new workload that hurt nobody)");
  };
  for (std::size_t i = 0; i < r.workload_changes.size() && i < kVerdictMax; ++i) o += item(i);
  if (r.workload_changes.size() > kVerdictMax) {
    o += fmt::format("<details><summary>… and {} more</summary>", r.workload_changes.size() - kVerdictMax);
    for (std::size_t i = kVerdictMax; i < r.workload_changes.size(); ++i) o += item(i);
    o += "</details>";
  }
  return o + "</div>";
}

std::string verdict(const DetectResult& r, const std::string& sfx) {
  if (r.incidents.empty())
    return (r.workload_changes.empty() ? "<p class=\"verdict ok\">No incidents: no anomalous interval found.</p>"
            : count_transients(r.workload_changes)
                ? "<p class=\"verdict ok\">No incidents: no symptom lasted long enough to be one.</p>"
                : "<p class=\"verdict ok\">No incidents: no anomalous interval with a symptom.</p>") +
           workload_changes_line(r);
  std::string o = fmt::format("<p class=\"verdict bad\">{} incident{}{}:</p><ol class=\"verdict-list\">",
                              r.incidents.size(), r.incidents.size() == 1 ? "" : "s",
                              r.incidents.size() > kVerdictMax ? fmt::format(", the {} strongest", kVerdictMax) : "");
  for (std::size_t i : strongest(r, kVerdictMax)) {
    const auto& inc = r.incidents[i];
    o += fmt::format(R"(<li><a href="#incident{}-{}"><b style="color:{}">{}</b></a> {})", sfx, i + 1,
                     subsystem_colour(inc.subsystem), to_string(inc.subsystem), esc(when(inc)));
    if (inc.kind == "absence") o += " — data stopped";
    else o += fmt::format(" — confidence {:.0f} %, peak level {:.1f}", inc.confidence * 100, inc.peak_score);
    o += "</li>";
  }
  o += "</ol>";
  if (r.incidents.size() > kVerdictMax)
    o += fmt::format("<p>… and {} more: every incident is in the <a href=\"#incident-table{}\">incident table</a>.</p>",
                     r.incidents.size() - kVerdictMax, sfx);
  return o + workload_changes_line(r);
}

// Every incident, one row each, sortable (shown when there are more than the cards).
std::string incident_table(const DetectResult& r, const std::string& sfx, const std::vector<std::size_t>& carded) {
  std::string o = fmt::format(
      R"(<table id="incident-table{}" class="sortable incidents-table"><thead><tr>)"
      R"(<th data-key="n" data-type="num" aria-sort="ascending">#</th><th data-key="subsystem" data-type="text">subsystem</th>)"
      R"(<th data-key="start" data-type="num">start</th><th data-key="duration" data-type="num">duration</th>)"
      R"(<th data-key="confidence" data-type="num">confidence</th><th data-key="peak" data-type="num">peak level</th>)"
      R"(<th data-key="channel" data-type="text">strongest channel</th></tr></thead><tbody>)",
      sfx);
  for (std::size_t i = 0; i < r.incidents.size(); ++i) {
    const auto& inc = r.incidents[i];
    const bool card = std::binary_search(carded.begin(), carded.end(), i);
    const std::string n = card ? fmt::format(R"(<a href="#incident{}-{}">#{}</a>)", sfx, i + 1, i + 1) : fmt::format("#{}", i + 1);
    const std::string top = inc.top.empty() ? "" : inc.top.front().name;
    o += fmt::format(R"(<tr><td data-value="{}">{}</td><td data-value="{}">{}</td><td data-value="{}">{} (+{})</td>)"
                     R"(<td data-value="{}">{}</td><td data-value="{}">{}</td><td data-value="{}">{:.1f}</td>)"
                     R"(<td data-value="{}">{}</td></tr>)",
                     i + 1, n, to_string(inc.subsystem), to_string(inc.subsystem), num_attr(inc.start_s),
                     format_utc(inc.start_unix_ns), format_seconds(inc.start_s), num_attr(inc.end_s - inc.start_s),
                     format_seconds(inc.end_s - inc.start_s), num_attr(inc.confidence),
                     inc.kind == "absence" ? "absence" : fmt::format("{:.0f} %", inc.confidence * 100),
                     num_attr(inc.peak_score), inc.peak_score, esc(top), esc(top));
  }
  return o + "</tbody></table>";
}

// `sfx`: the suffix of the section's element ids ("" for the first host); `timeline_id`: its
// score chart's (in peers mode "timeline" is the overview's).
std::string host_section(const HtmlHost& h, const std::string& sfx, const std::string& timeline_id, bool with_title) {
  const DetectResult& r = *h.result;
  const HostSeries hs = host_series(*h.run, r);
  std::string o = fmt::format(R"(<article class="host" id="host{}" data-host="{}">)", sfx, esc(h.name));
  if (with_title) o += fmt::format("<h2 class=\"hosttitle\">Host {}</h2>", esc(h.name));
  o += verdict(r, sfx);
  o += summary_section(h, sfx);
  o += fmt::format("<section class=\"score\"><h2>Anomaly score</h2>{}<p class=\"legend\">x: time since {} · "
                   "<b class=\"k-fused\">fused level</b> per window (1 = the threshold set by the false-alarm rate; "
                   "above {:g} drawn at {:g}) and each fused detector's own level: {} · shaded: incidents; grey: the "
                   "start-up, when no incident opens; orange: windows a symptom's material step made anomalous "
                   "below the threshold</p></section>",
                   timeline_chart(r, timeline_id),
                   r.origin_unix_ns ? format_utc(r.origin_unix_ns) : "the start", kTimelineYMax, kTimelineYMax,
                   detector_legend(r));
  o += fmt::format("<section class=\"incidents\"><h2>Incidents ({})</h2>", r.incidents.size());
  if (r.incidents.empty()) o += "<p>None.</p>";
  const std::vector<std::size_t> carded = strongest(r, kCardsMax);
  if (carded.size() < r.incidents.size())
    o += fmt::format("<p>Cards for the {} strongest; every incident is in the table below them.</p>", carded.size());
  for (std::size_t i : carded) o += incident_card(hs, r, i, sfx);
  // The verdict at the top links here once it lists only the strongest.
  if (r.incidents.size() > kVerdictMax) o += incident_table(r, sfx, carded);
  o += "</section>";
  o += "<section class=\"subsystems\"><h2>Subsystems over time</h2>" + heatmap_chart(hs, r, "heatmap" + sfx) + "</section>";
  // With several hosts only the first one's table is open: hundreds of rows each.
  if (sfx.empty())
    o += fmt::format("<section class=\"channels\"><h2>Channels ({})</h2>", r.scored_channels.size()) +
         channel_table(hs, r, sfx) + "</section>";
  else
    o += fmt::format("<section class=\"channels\"><details><summary><h2>Channels ({})</h2></summary>",
                     r.scored_channels.size()) +
         channel_table(hs, r, sfx) + "</details></section>";
  return o + "</article>";
}

std::string peers_overview(const PeersResult& pr) {
  std::string o = "<section id=\"peers\" class=\"peers\"><h2>Peers</h2>";
  o += pr.alignment == "same time"
           ? fmt::format("<p>{} hosts compared at the same time: {} → {} ({}). Each host's reference: the other hosts.</p>",
                         pr.hosts.size(), format_utc(pr.start_unix_ns), format_utc(pr.end_unix_ns),
                         format_seconds(pr.span_s))
           : fmt::format("<p>{} hosts compared by time since each run's start, over {}. Each host's reference: the "
                         "other hosts.</p>",
                         pr.hosts.size(), format_seconds(pr.span_s));
  for (const auto& n : pr.notes) o += fmt::format("<p class=\"note\">note: {}</p>", esc(n));
  if (pr.odd) o += fmt::format("<p class=\"verdict bad\">Odd host: <b>{}</b></p>", esc(pr.hosts[*pr.odd].name));
  else if (pr.flagged.empty()) o += "<p class=\"verdict ok\">No host stands out: none has an incident against its peers.</p>";
  else o += "<p class=\"verdict\">No single host stands out.</p>";
  SvgChart c("timeline", "timeline peers", 960, 240, 46, 70);
  double t1 = 1, ymax = 1.5;
  for (const auto& h : pr.hosts) {
    if (!h.result.window_end_s.empty()) t1 = std::max(t1, h.result.window_end_s.back());
    ymax = level_ymax(ymax, h.result.fused);
  }
  c.x_domain(0, t1);
  c.y_domain(0, ymax * 1.08);
  c.axes(true, "fused anomaly level vs the peers");
  c.hline(1.0, "threshold", "threshold 1");
  std::string legend = "<ul class=\"hostlegend\">";
  for (std::size_t i = 0; i < pr.hosts.size(); ++i) {
    const auto& r = pr.hosts[i].result;
    const char* col = kHostColour[i % kHostColour.size()];
    c.line(r.window_end_s, drawn_levels(r.fused), "hostline", pr.hosts[i].name, col);
    legend += fmt::format(R"(<li><span class="swatch" style="background:{}"></span>{}</li>)", col, esc(pr.hosts[i].name));
  }
  o += c.str() + legend + "</ul>";
  o += "<table id=\"peers-ranking\" class=\"sortable\"><thead><tr><th data-key=\"rank\" data-type=\"num\" "
       "aria-sort=\"ascending\">rank</th><th data-key=\"host\" data-type=\"text\">host</th><th data-key=\"score\" "
       "data-type=\"num\">oddness</th><th data-key=\"anomalous\" data-type=\"num\">anomalous windows</th><th "
       "data-key=\"incidents\" data-type=\"num\">incidents</th><th data-key=\"peak\" data-type=\"num\">peak</th></tr>"
       "</thead><tbody>";
  for (std::size_t i = 0; i < pr.hosts.size(); ++i) {
    const auto& h = pr.hosts[i];
    o += fmt::format(R"(<tr><td data-value="{0}">{0}</td><td data-value="{1}"><a href="#host{2}">{1}</a></td>)"
                     R"(<td data-value="{3}">{4:.2f}</td><td data-value="{5}">{5} of {6}</td><td data-value="{7}">{7}</td>)"
                     R"(<td data-value="{8}">{9:.1f}</td></tr>)",
                     i + 1, esc(h.name), i == 0 ? std::string() : fmt::format("-{}", i + 1), num_attr(h.score), h.score,
                     h.anomalous_windows, h.windows, h.result.incidents.size(), num_attr(h.peak), h.peak);
  }
  o += "</tbody></table>";
  if (pr.odd && !pr.odd_channels.empty()) {
    o += "<p>The odd host's strongest channels (its value vs the peers' median, robust z):</p><ul>";
    for (const auto& ev : pr.odd_channels)
      o += fmt::format("<li>{} {} vs {} (z {:+.1f}, {})</li>", esc(ev.name), esc(format_value(ev.value, ev.unit)),
                       esc(format_value(ev.reference, ev.unit)), ev.z, to_string(ev.subsystem));
    o += "</ul>";
  }
  return o + "</section>";
}

constexpr const char* kStyle = R"(
:root{--fg:#1d2330;--muted:#5b6475;--line:#d9dee7;--bg:#fff;--accent:#c62828}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1000px;padding:16px 20px 40px}
h1{font-size:22px;margin:8px 0 2px}h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid var(--line);padding-bottom:3px}h3{font-size:15px;margin:0 0 6px}
.source{color:var(--muted);margin:0 0 8px;word-break:break-all}.verdict{font-size:16px;font-weight:600;margin:10px 0 4px}.verdict.ok{color:#2e7d32}.verdict.bad{color:var(--accent)}
.verdict-list{margin:0 0 8px}.note{color:#8a5a00}dl{display:grid;grid-template-columns:120px 1fr;gap:2px 12px;margin:0}dt{color:var(--muted)}dd{margin:0;word-break:break-word}
details{margin:6px 0}summary h2{display:inline-block;border:0}summary{cursor:pointer;color:var(--muted)}table{border-collapse:collapse;width:100%;font-size:13px}th,td{padding:3px 6px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
td[data-value]{font-variant-numeric:tabular-nums}table.sortable th{cursor:pointer;user-select:none;background:#f5f7fa;position:sticky;top:0}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
.filter{margin:4px 0 6px;padding:4px 8px;width:320px;max-width:100%;border:1px solid var(--line);border-radius:4px}
svg.chart{display:block;max-width:100%;height:auto;font-size:11px;fill:var(--muted)}svg.chart text{fill:var(--muted)}
.axis line{stroke:#9aa3b2;stroke-width:1}.axis line.grid{stroke:#eef1f5}.ylabel{font-size:11px}
.fused{fill:none;stroke:#1f4e99;stroke-width:1.6}.k-fused{color:#1f4e99}.detector{fill:none;stroke-width:1;opacity:.8}
.d0{stroke:#f28e2b}.k-d0{color:#d0731a;font-weight:600}.d1{stroke:#59a14f}.k-d1{color:#3f7f37;font-weight:600}.d2{stroke:#b07aa1}.k-d2{color:#8a5a80;font-weight:600}.d3{stroke:#76b7b2}.k-d3{color:#3d7f7a;font-weight:600}.series{fill:none;stroke-width:1.4}.hostline{fill:none;stroke-width:1.5}
.threshold{stroke:var(--accent);stroke-dasharray:5 4;stroke-width:1.2}.threshold-label{fill:var(--accent)!important}
.inc{fill:rgba(198,40,40,.13)}.led{fill:rgba(230,130,0,.22)}.settle{fill:rgba(120,120,120,.10)}.inc-absence{fill:rgba(120,120,120,.18)}.inc-outline{fill:none;stroke:var(--accent);stroke-width:1.2}
.ref-band{fill:rgba(46,125,50,.12)}.ref-median{stroke:rgba(46,125,50,.7);stroke-dasharray:3 3}
.incident{border:1px solid var(--line);border-left:5px solid #999;border-radius:4px;padding:10px 12px;margin:10px 0}
.incident .when{font-weight:400;color:var(--muted);font-size:13px}.facts,.detectors,.symptom,.action{margin:4px 0}.detectors{color:var(--muted);font-size:12px}
.shares{display:flex;height:16px;border-radius:3px;overflow:hidden;margin:6px 0;font-size:10px;color:#fff}.shares span{display:block;text-align:center;line-height:16px;overflow:hidden;white-space:nowrap}
.multiples{display:flex;flex-wrap:wrap;gap:8px}.multiple{margin:0;width:300px}.multiple figcaption{font-size:11px;color:var(--muted);word-break:break-all}
.legend{font-size:12px;color:var(--muted);margin:2px 0 0}.hostlegend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 14px}.swatch{display:inline-block;width:12px;height:12px;margin-right:5px;border-radius:2px;vertical-align:-1px}
.hosttitle{font-size:19px;border-bottom:2px solid var(--fg)}footer{margin-top:30px;color:var(--muted);font-size:12px}
@media print{.filter{display:none}}
)";

// Sorting: a click on a header sorts by its column (numbers by data-value, NaN last), toggling
// the direction; aria-sort shows it. Filtering: rows whose first cell does not contain the text
// are hidden.
constexpr const char* kScript = R"(
(function(){
  function key(td,num){var v=td?td.getAttribute('data-value'):'';if(!num)return v||'';var x=parseFloat(v);return isNaN(x)?null:x;}
  function sortBy(table,th,idx){
    var num=th.getAttribute('data-type')==='num';
    var dir=th.getAttribute('aria-sort')==='descending'?'ascending':'descending';
    var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){var x=key(a.cells[idx],num),y=key(b.cells[idx],num);
      if(x===null&&y===null)return 0;if(x===null)return 1;if(y===null)return -1;
      var c=num?x-y:String(x).localeCompare(String(y));return dir==='ascending'?c:-c;});
    rows.forEach(function(r){body.appendChild(r);});
    Array.prototype.forEach.call(table.tHead.rows[0].cells,function(h){h.removeAttribute('aria-sort');});
    th.setAttribute('aria-sort',dir);
  }
  document.querySelectorAll('table.sortable').forEach(function(t){
    if(!t.tHead||!t.tBodies.length)return;
    Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,i){th.addEventListener('click',function(){sortBy(t,th,i);});});
  });
  document.querySelectorAll('input.filter').forEach(function(inp){
    var t=document.getElementById(inp.getAttribute('data-table'));if(!t||!t.tBodies.length)return;
    inp.addEventListener('input',function(){var q=inp.value.toLowerCase();
      Array.prototype.forEach.call(t.tBodies[0].rows,function(r){r.style.display=r.cells[0].textContent.toLowerCase().indexOf(q)<0?'none':'';});});
  });
})();
)";

}  // namespace

std::string render_html(const std::vector<HtmlHost>& hosts, const std::string& source, const PeersResult* peers) {
  if (hosts.empty()) throw std::invalid_argument("render_html: no host");
  for (const auto& h : hosts)
    if (!h.run || !h.result) throw std::invalid_argument("render_html: host " + h.name + " lacks its run or result");
  std::string title = hosts.size() == 1 ? "Reveal report — " + hosts.front().name
                                        : fmt::format("Reveal report — {} hosts", hosts.size());
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  o += fmt::format("<meta name=\"generator\" content=\"reveal\"><title>{}</title><style>{}</style></head><body>",
                   esc(title), kStyle);
  o += fmt::format("<header><h1>{}</h1><p class=\"source\">{}</p></header>", esc(title), esc(source));
  if (peers) o += peers_overview(*peers);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::string sfx = i == 0 ? std::string() : fmt::format("-{}", i + 1);
    // In peers mode the overview holds the shared timeline: host timelines take suffixed ids.
    o += host_section(hosts[i], sfx, peers ? fmt::format("timeline-{}", i + 1) : "timeline" + sfx,
                      hosts.size() > 1 || peers);
  }
  o += "<footer>Generated by reveal from hardware and OS telemetry alone. Detectors: robust z, Isolation Forest "
       "(Liu et al. 2008), PCA residual; calibration: SPOT (Siffer et al. 2017). Reference: Chen et al., "
       "arXiv 2510.26008.</footer>";
  o += fmt::format("<script>{}</script></body></html>\n", kScript);
  return o;
}

}  // namespace reveal
