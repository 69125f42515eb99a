// `reveal detect`: score a recording and report incidents; `reveal report`: the same as an HTML file.
//   reveal detect RUN [--baseline GOOD]...            one store, self or baseline reference
//   reveal detect RUN --baseline MODEL                against a model file from `reveal train`
//                                                     (reveal/baseline_model.h); known-good
//                                                     stores are trained into one in memory
//   reveal detect --peers RUN RUN [RUN]...            hosts of one job compared (reveal/peers.h)
//   reveal detect --prometheus URL --match SEL --start T [--end T] [--step D] [--peers]
//                                                     the agents' raw channels from Prometheus
//                                                     (reveal/prometheus_source.h), per host
// T: Unix seconds, ISO 8601 / RFC 3339 UTC (2026-11-30T21:00:00Z, or with an offset), "now",
// or relative to now ("-10m", "now-10m"): time_arg.h parse_wall_time.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "reveal/baseline_model.h"
#include "reveal/detect.h"
#include "reveal/html_report.h"
#include "reveal/peers.h"
#include "reveal/report.h"
#include "reveal/store.h"
#include "reveal/units.h"
#include "file_args.h"
#include "output_file.h"
#include "progress_bar.h"
#include "time_arg.h"
#ifdef REVEAL_WITH_HTTP
#include "fleet/prometheus_source.h"
#include "reveal/prometheus_source.h"
#endif

namespace reveal::cli {
namespace {

// Display names of several stores: their hostnames when those differ, else the paths.
std::vector<std::string> store_names(const std::vector<Recording>& runs, const std::vector<std::string>& paths) {
  std::set<std::string> seen;
  for (const auto& r : runs) seen.insert(r.meta.hostname);
  return seen.size() == runs.size() ? [&] {
    std::vector<std::string> v;
    for (const auto& r : runs) v.push_back(r.meta.hostname);
    return v;
  }() : paths;
}

std::string peers_text(const PeersResult& pr, const std::string& source) {
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

std::string peers_json(const PeersResult& pr, const std::string& source) {
  using nlohmann::json;
  const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
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
  json hosts = json::array();
  for (std::size_t i = 0; i < pr.hosts.size(); ++i) {
    const auto& h = pr.hosts[i];
    hosts.push_back({{"host", h.name}, {"rank", i + 1}, {"score", h.score}, {"windows", h.windows},
                     {"anomalous_windows", h.anomalous_windows}, {"incident_windows", h.incident_windows},
                     {"peak", num(h.peak)}, {"incidents", h.result.incidents.size()},
                     {"report", json::parse(render_json(h.result, h.name))}});
  }
  j["hosts"] = hosts;
  return j.dump(2) + "\n";
}

// render_json() without the per-window channel z, which the HTML report needs but the JSON
// carries only with --window-z.
std::string json_of(DetectResult& r, const std::string& source, bool window_z) {
  if (window_z) return render_json(r, source);
  Matrix z = std::move(r.window_z);
  r.window_z = Matrix();
  std::string j = render_json(r, source);
  r.window_z = std::move(z);
  return j;
}

// `reveal report` prints one line per file written.
std::string wrote_line(const std::string& path, std::size_t bytes, std::size_t hosts, std::size_t incidents) {
  return fmt::format("wrote {} ({:.0f} KiB; {} host{}, {} incident{})\n", path, double(bytes) / 1024.0, hosts,
                     hosts == 1 ? "" : "s", incidents, incidents == 1 ? "" : "s");
}

// `reveal detect` and `reveal report` share their options and their pipeline; `report` writes
// the HTML report (-o) and prints one line, `detect` prints the text or JSON report (and the
// HTML too with --html).
Action add_detect_like(CLI::App& app, bool report) {
  struct Opts {
    std::vector<std::string> runs;
    std::vector<std::string> baselines;
    std::string html;
    bool json = false, peers = false, fail_on_incident = false, no_progress = false;
    DetectOptions d;
    std::size_t window = 3, stride = 1;
    std::string settle = "10s", pca = "report";
    std::string prometheus, match = "{__name__=~\"reveal_.+\"}", start, end = "now", step = "1s";
    double timeout_s = 60;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = report ? app.add_subcommand("report",
                                          "Write a self-contained HTML report of a recording's anomalies: score "
                                          "timeline, incident cards with their channels, subsystem heatmap, "
                                          "channel table")
                     : app.add_subcommand("detect", "Find anomalous intervals in a recording and attribute them");
  if (report) {
    sub->add_option("-o,--output", o->html,
                    "HTML file to write (one file: scripts, styles and charts inline), or - for standard output")
        ->required();
    set_help_footer(sub,
                    {"reveal report run.db -o report.html", "reveal report run.db --baseline good.model -o report.html",
                     "reveal report --peers host-a.db host-b.db host-c.db -o fleet.html",
                     "reveal report --prometheus http://prom:9090 --match '{job=\"reveal\"}' --start -30m -o fleet.html"},
                    {"1  incidents found, with --fail-on-incident (any host flagged with --peers or --prometheus); the "
                     "report is written all the same"});
  } else {
    sub->add_option("--html", o->html,
                    "Also write the HTML report to this file (what `reveal report -o FILE` writes)");
    set_help_footer(sub,
                    {"reveal detect run.db", "reveal detect run.db --baseline good.model --fail-on-incident",
                     "reveal detect run.db --baseline good1.db --baseline good2.db --json",
                     "reveal detect run.db --html report.html",
                     "reveal detect --peers host-a.db host-b.db host-c.db",
                     "reveal detect --prometheus http://prom:9090 --match '{job=\"reveal\"}' --start -30m --end now"},
                    {"1  incidents found, with --fail-on-incident (any host flagged with --peers or --prometheus); the "
                     "report is printed all the same"});
  }
  sub->add_option("run", o->runs, "Store written by `reveal record` (several with --peers)");
  sub->add_option("--baseline", o->baselines,
                  "Reference: a model file from `reveal train`, or a known-good recording (repeat --baseline for "
                  "each), trained in memory")
      ->expected(1)
      ->allow_extra_args(false)
      ->take_all();
  sub->add_flag("--peers", o->peers,
                "Compare hosts of one job with each other (the runs given, or the hosts read with --prometheus) "
                "and name the odd host");
  sub->add_option("--prometheus", o->prometheus,
                  "Read the agents' raw channels from this Prometheus server (http://host:port), one report per host");
  sub->add_option("--match", o->match, "With --prometheus: series selector, e.g. {job=\"reveal\"}")
      ->capture_default_str();
  sub->add_option("--start", o->start,
                  "With --prometheus: start of the range (Unix seconds, 2026-11-30T21:00:00Z, -10m)");
  sub->add_option("--end", o->end, "With --prometheus: end of the range (same forms, or now)")->capture_default_str();
  sub->add_option("--step", o->step, "With --prometheus: sample spacing, e.g. 1s, 15s")->capture_default_str();
  sub->add_option("--timeout", o->timeout_s, "With --prometheus: seconds to wait for each answer")
      ->capture_default_str()->check(CLI::Range(0.1, 3600.0));
  if (!report)
    sub->add_flag("--json", o->json,
                "Emit JSON (schema reveal.detect/1, docs/DETECT_JSON.md; an array of them, one per host, with "
                "--prometheus; reveal.peers/1 with --peers, docs/FLEET.md)");
  sub->add_flag("--fail-on-incident", o->fail_on_incident,
                std::string("Exit 1 when an incident is found (any host flagged with --peers or --prometheus); the "
                            "report is ") + (report ? "written" : "printed") + " all the same");
  sub->add_flag("--no-progress", o->no_progress, "No progress bar on stderr (drawn only when stderr is a terminal)");
  sub->add_option("--window", o->window, "Window length in samples")->capture_default_str()->check(CLI::Range(2, 3600));
  sub->add_option("--stride", o->stride, "Samples between window starts")->capture_default_str()->check(CLI::Range(1, 3600));
  sub->add_option("--seed", o->d.seed, "Random seed (Isolation Forest)")->capture_default_str()->check(whole_u64());
  sub->add_option("--min-windows", o->d.incident.min_windows, "Anomalous windows in a row that open an incident")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--settle", o->settle,
                  "Start-up period: anomalies that end within it open no incident (e.g. 10s, 0s to report them)")
      ->capture_default_str();
  sub->add_option("--end-after", o->d.incident.end_after, "Normal windows in a row that close an incident")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--pca", o->pca,
                  "PCA residual detector: report (its SPE and T² streams in the JSON, not fused), fuse (SPE joins "
                  "the fused score), off")
      ->check(CLI::IsMember({"report", "fuse", "off"}))
      ->capture_default_str();
  sub->add_option("--pearson-cut", o->d.prune_r,
                  "Isolation Forest channel pruning: a channel is left out of the forest when |Pearson r| with one "
                  "already kept is at least this (1 keeps all but exact duplicates; the paper uses 0.5)")
      ->capture_default_str()->check(CLI::Range(0.05, 1.0));
  sub->add_option("--false-per-day", o->d.false_per_day,
                  "Expected false incidents per host-day: the rate the EVT-calibrated fused score is set to "
                  "(smaller = fewer, later alarms)")
      ->capture_default_str()->check(CLI::Range(1e-6, 1e6));
  if (!report)
    sub->add_flag("--window-z", o->d.window_z,
                "With --json: add every window's per-channel robust z (windows.channels, windows.channel_z)");
  sub->add_option("--top", o->d.top_channels, "Channels listed per incident")->capture_default_str()->check(CLI::Range(1, 100));
  return [o, sub, report]() -> int {
    o->d.window = {o->window, o->stride};
    o->d.settle_s = double(parse_duration_arg("--settle", o->settle)) * 1e-9;
    if (!(o->d.false_per_day >= 1e-6 && o->d.false_per_day <= 1e6))  // also NaN, which Range lets through
      throw UsageError("--false-per-day: want a number of incidents per day in 1e-06..1e+06");
    if (!(o->d.prune_r >= 0.05 && o->d.prune_r <= 1.0)) throw UsageError("--pearson-cut: want a number in 0.05..1");
    o->d.pca = o->pca == "fuse" ? PcaUse::fuse : o->pca == "off" ? PcaUse::off : PcaUse::report;
    const char* html_flag = report ? "-o" : "--html";
    if (!report && o->d.window_z && !o->json) throw UsageError("--window-z needs --json");
    if (sub->count("--prometheus") && o->prometheus.empty()) throw UsageError("--prometheus: empty URL");
    if (sub->count(report ? "--output" : "--html") && o->html.empty())
      throw UsageError(std::string(html_flag) + ": empty path (use - for standard output)");
    const bool html = !o->html.empty(), user_window_z = o->d.window_z;
    if (html) o->d.window_z = true;  // the heatmap and the channel table
    const bool prom = !o->prometheus.empty();
    for (const char* flag : {"--match", "--start", "--end", "--step", "--timeout"})
      if (!prom && sub->count(flag)) throw UsageError(std::string(flag) + " needs --prometheus");
    if (prom && !o->runs.empty()) throw UsageError("give either stores or --prometheus, not both");
    if (!prom && o->runs.empty()) throw UsageError("a store to analyse is required (or --prometheus URL)");
    if (!prom && !o->peers && o->runs.size() > 1)
      throw UsageError("several stores are compared only with --peers (give each known-good run after its own --baseline)");
    if (o->peers && !o->baselines.empty())
      throw UsageError("--peers uses the other hosts as the reference; --baseline does not apply");
    if (o->peers && !prom && o->runs.size() < 2) throw UsageError("--peers needs at least two stores");
    for (const auto& r : o->runs) check_input_path("run", r);
    for (const auto& b : o->baselines) check_input_path("--baseline", b);
    // The same file twice (./a.db and a.db too) would compare a host with itself.
    std::vector<std::string> inputs = o->runs;
    inputs.insert(inputs.end(), o->baselines.begin(), o->baselines.end());
    check_distinct(inputs);
    // Checked before the work, so a bad output path costs nothing; written only at the end.
    std::optional<OutputFile> html_out;
    if (html) html_out.emplace(o->html, inputs, html_flag);
    if (!report && html_out && html_out->is_stdout())
      throw UsageError("--html " + o->html + ": standard output carries the text report; use `reveal report -o -`");
    const auto write_html = [&](const std::string& page, std::size_t n_hosts, std::size_t incidents) {
      html_out->write(page);
      html_out->commit();
      if (!report) return;
      const std::string line = wrote_line(html_out->display_name(), page.size(), n_hosts, incidents);
      if (html_out->is_stdout()) std::fputs(line.c_str(), stderr);
      else write_stdout(line);
    };

    const auto bar = stderr_progress(report ? "reveal report" : "reveal detect", !o->no_progress);
    o->d.progress = bar.get();
    std::vector<Recording> hosts;
    std::vector<std::string> names;
    std::string source;
    if (prom) {
#ifdef REVEAL_WITH_HTTP
      if (o->start.empty()) throw UsageError("--prometheus needs --start (e.g. --start -10m)");
      const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch()).count();
      PrometheusQuery q;
      q.url = o->prometheus;
      q.selector = o->match;
      q.start_unix_ns = parse_wall_time("--start", o->start, now);
      q.end_unix_ns = parse_wall_time("--end", o->end, now);
      if (q.end_unix_ns < q.start_unix_ns) throw UsageError("--end is before --start");
      q.step_ns = parse_duration_arg("--step", o->step, 1'000'000);
      q.timeout_s = o->timeout_s;
      try {
        fleet::parse_url(q.url);
      } catch (const PrometheusError& e) {
        throw UsageError(std::string("--prometheus: ") + e.what());
      }
      try {
        add_matcher(q.selector, "channel!=\"\"");
      } catch (const PrometheusError& e) {
        throw UsageError(std::string("--match: ") + e.what());
      }
      hosts = read_prometheus(q);
      for (const auto& h : hosts) names.push_back(h.meta.hostname);
      source = "prometheus " + q.url + " " + q.selector;
#else
      throw UsageError("--prometheus: this reveal was built without HTTP support (REVEAL_STATIC_DEPS=ON)");
#endif
    } else {
      for (const auto& r : o->runs) {
        bar->update("load", hosts.size(), o->runs.size() + o->baselines.size());
        hosts.push_back(load_recording(r));
      }
      names = store_names(hosts, o->runs);
      for (const auto& r : o->runs) source += (source.empty() ? "" : ", ") + r;
    }
    // The baseline reference: a model file, or the stores trained into a model here (once, for
    // every host read from Prometheus too).
    std::optional<BaselineModel> model;
    std::size_t model_files = 0;
    for (const auto& b : o->baselines) model_files += is_model_file(b);
    if (model_files > 0) {
      if (o->baselines.size() > 1)
        throw UsageError("--baseline: a model file is the whole reference; give it alone (train one model on every "
                         "known-good store)");
      model = BaselineModel::load(o->baselines.front());
      // What the model fixed cannot be changed here.
      const DetectOptions& m = model->options();
      const auto fixed = [&](const char* flag, bool same, const std::string& trained) {
        if (sub->count(flag) && !same)
          throw UsageError(std::string(flag) + ": the model was trained with " + trained +
                           "; train it again to change it");
      };
      fixed("--window", o->window == m.window.length, std::to_string(m.window.length));
      fixed("--stride", o->stride == m.window.stride, std::to_string(m.window.stride));
      fixed("--seed", o->d.seed == m.seed, std::to_string(m.seed));
      fixed("--pca", o->d.pca == m.pca, m.pca == PcaUse::off ? "off" : m.pca == PcaUse::fuse ? "fuse" : "report");
    } else if (!o->baselines.empty()) {
      std::vector<Recording> refs;
      for (const auto& b : o->baselines) {
        bar->update("load", hosts.size() + refs.size(), hosts.size() + o->baselines.size());
        refs.push_back(load_recording(b));
      }
      model = BaselineModel::train(refs, o->d, o->baselines);
    }
    const auto run_detect = [&](const Recording& h) { return model ? detect(h, *model, o->d) : detect(h, {}, o->d); };

    if (o->peers) {
      if (hosts.size() < 2)
        throw PeersError("--peers: only one host (" + names.front() + ") in " + source + "; nothing to compare with");
      PeersResult pr = compare_peers(hosts, names, o->d);
      bar->finish();
      std::size_t incidents = 0;
      for (const auto& h : pr.hosts) incidents += h.result.incidents.size();
      if (html) {
        std::vector<HtmlHost> hh;
        for (const auto& h : pr.hosts) {
          const auto it = std::find(names.begin(), names.end(), h.name);
          hh.push_back({h.name, &hosts.at(std::size_t(it - names.begin())), &h.result});
        }
        write_html(render_html(hh, source, &pr), hh.size(), incidents);
      }
      if (!user_window_z)
        for (auto& h : pr.hosts) h.result.window_z = Matrix();
      if (!report) write_stdout(o->json ? peers_json(pr, source) : peers_text(pr, source));
      return o->fail_on_incident && !pr.flagged.empty() ? kExitIncidents : kExitOk;
    }
    if (!prom) {
      DetectResult r = run_detect(hosts.front());
      bar->finish();
      if (html) {
        write_html(render_html({{names.front(), &hosts.front(), &r}}, o->runs.front()), 1, r.incidents.size());
      }
      if (!report)
        write_stdout(o->json ? json_of(r, o->runs.front(), user_window_z) : render_text(r, o->runs.front()));
      return o->fail_on_incident && !r.incidents.empty() ? kExitIncidents : kExitOk;
    }
    // One report per host read from Prometheus.
    std::string out;
    nlohmann::json docs = nlohmann::json::array();
    std::vector<DetectResult> results(hosts.size());
    std::size_t incidents = 0;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      const std::string src = source + " instance=" + names[i];
      DetectResult& r = results[i];
      try {
        r = run_detect(hosts[i]);
      } catch (const DetectError& e) {
        throw DetectError("host " + names[i] + ": " + e.what());
      }
      incidents += r.incidents.size();
      if (report) continue;
      if (o->json) docs.push_back(nlohmann::json::parse(json_of(r, src, user_window_z)));
      else out += (i ? "\n" : "") + render_text(r, src);
    }
    bar->finish();
    if (html) {
      std::vector<HtmlHost> hh;
      for (std::size_t i = 0; i < hosts.size(); ++i) hh.push_back({names[i], &hosts[i], &results[i]});
      write_html(render_html(hh, source), hh.size(), incidents);
    }
    if (!report) write_stdout(o->json ? docs.dump(2) + "\n" : out);
    return o->fail_on_incident && incidents > 0 ? kExitIncidents : kExitOk;
  };
}

}  // namespace

Action add_detect(CLI::App& app) { return add_detect_like(app, false); }
Action add_report(CLI::App& app) { return add_detect_like(app, true); }

}  // namespace reveal::cli
