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
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "reveal/baseline_model.h"
#include "reveal/offline.h"
#include "reveal/html_report.h"
#include "reveal/peers.h"
#include "reveal/peers_report.h"
#include "reveal/report.h"
#include "reveal/store.h"
#include "reveal/store_reader.h"
#include "reveal/recording_feed.h"
#include "reveal/streaming.h"
#include "reveal/units.h"
#include "file_args.h"
#include "output_file.h"
#include "progress_bar.h"
#include "spool.h"
#include "report/json.h"
#include "time_arg.h"
#ifdef REVEAL_WITH_HTTP
#include "fleet/prometheus_source.h"
#include "reveal/prometheus_source.h"
#include "reveal/agent_config.h"
#endif

namespace reveal::cli {
namespace {

// kWholeRunMaxValues (reveal/offline.h): longer stores and hosts get the streaming analysis.

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

// The JSON report (without the per-window channel z unless `window_z`: the HTML report needs
// them, the JSON carries them only with --window-z) written to standard output as it is
// rendered (a week's per-window arrays are some 100 MB of text: not held whole). With an
// `indent`, as an element of an array that dump(2) writes: every line indented by it, without
// the document's final line feed.
void write_json_stdout(DetectResult& r, const std::string& source, bool window_z, std::string_view indent = {}) {
  Matrix z;
  if (!window_z) std::swap(z, r.window_z);
  const auto out = [](std::string_view piece) { write_stdout(std::string(piece)); };
  if (indent.empty()) {
    write_json(r, source, out);
  } else {
    out(indent);
    write_json(r, source, report::indented(std::string(indent), out));
  }
  if (!window_z) std::swap(z, r.window_z);
}

// `reveal report` prints one line per file written.
std::string wrote_line(const std::string& path, std::size_t bytes, std::size_t hosts, std::size_t incidents) {
  return fmt::format("wrote {} ({:.0f} KiB; {} host{}, {} incident{})\n", path, double(bytes) / 1024.0, hosts,
                     hosts == 1 ? "" : "s", incidents, incidents == 1 ? "" : "s");
}

// The options `reveal detect` and `reveal report` share.
struct Opts {
  std::vector<std::string> runs;
  std::vector<std::string> baselines;
  std::string html;
  bool json = false, peers = false, fail_on_incident = false, no_progress = false, streaming = false;
  bool whole_run = false;
  bool all_anomalies = false;
  bool no_symptom_windows = false;
  std::string agent_config;
  DetectOptions d;
  std::size_t window = 3, stride = 1, trail = WindowOptions{}.trail;
  std::string settle = "10s", pca = "report", min_duration = "10s";
  std::string prometheus, match = "{__name__=~\"reveal_.+\"}", start, end = "now", step = "1s";
  double timeout_s = 60;
  unsigned jobs = 2;
};

// Declares the subcommand (`report`: true for `reveal report`) with its HTML output option and
// its help footer.
CLI::App* add_subcommand(CLI::App& app, Opts& o, bool report) {
  auto* sub = report ? app.add_subcommand("report",
                                          "Write a self-contained HTML report of a recording's anomalies: score "
                                          "timeline, incident cards with their channels, subsystem heatmap, "
                                          "channel table")
                     : app.add_subcommand("detect", "Find anomalous intervals in a recording and attribute them");
  if (report) {
    sub->add_option("-o,--output", o.html,
                    "HTML file to write (one file: scripts, styles and charts inline), or - for standard output")
        ->required();
    set_help_footer(sub,
                    {"reveal report run.db -o report.html", "reveal report run.db --baseline good.model -o report.html",
                     "reveal report --peers host-a.db host-b.db host-c.db -o fleet.html",
                     "reveal report --prometheus http://prom:9090 --match '{job=\"reveal\"}' --start -30m -o fleet.html"},
                    {"1  incidents found, with --fail-on-incident (any host flagged with --peers or --prometheus); the "
                     "report is written all the same"});
  } else {
    sub->add_option("--html", o.html,
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
  return sub;
}

// What to analyse and against what (stores, baselines, peers, Prometheus), and how to answer.
void add_input_options(CLI::App* sub, Opts& o, bool report) {
  sub->add_option("run", o.runs, "Store written by `reveal record` (several with --peers)");
  sub->add_option("--baseline", o.baselines,
                  "Reference: a model file from `reveal train`, or a known-good recording (repeat --baseline for "
                  "each), trained in memory")
      ->expected(1)
      ->allow_extra_args(false)
      ->take_all();
  sub->add_flag("--peers", o.peers,
                "Compare hosts of one job with each other (the runs given, or the hosts read with --prometheus) "
                "and name the odd host");
  if (!report) {
    sub->add_flag("--streaming", o.streaming,
                  "Analyse the store as `reveal agent` would have live: a reference that moves with time (fitted "
                  "after the warm-up, refitted, re-learned at workload changes), workload changes told apart from "
                  "incidents (text and JSON; not --html)");
    sub->add_flag("--whole-run", o.whole_run,
                  "Fit one reference on the whole recording even when it is long (over " +
                      std::to_string(kWholeRunMaxValues >> 20) +
                      " Mi samples x channels, about 1.4 h at 800 channels, which is otherwise analysed as with "
                      "--streaming, in bounded memory); it is then held in memory whole (some 95 bytes a value)");
    sub->add_option("--agent-config", o.agent_config,
                    "With --streaming: the agent's configuration file (its [detect] keys; default: the agent's "
                    "defaults)");
  }
  sub->add_option("--prometheus", o.prometheus,
                  "Read the agents' raw channels from this Prometheus server (http://host:port), one report per host");
  sub->add_option("--match", o.match, "With --prometheus: series selector, e.g. {job=\"reveal\"}")
      ->capture_default_str();
  sub->add_option("--start", o.start,
                  "With --prometheus: start of the range (Unix seconds, 2026-11-30T21:00:00Z, -10m)");
  sub->add_option("--end", o.end, "With --prometheus: end of the range (same forms, or now)")->capture_default_str();
  sub->add_option("--step", o.step, "With --prometheus: sample spacing, e.g. 1s, 15s")->capture_default_str();
  sub->add_option("--jobs", o.jobs,
                  "With --prometheus: hosts read and analysed at once (each holds one host's recording in memory)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  sub->add_option("--timeout", o.timeout_s, "With --prometheus: seconds each request may take in all, from connecting to the last byte of "
                  "the answer")
      ->capture_default_str()->check(CLI::Range(0.1, 3600.0));
  if (!report)
    sub->add_flag("--json", o.json,
                "Emit JSON (schema reveal.detect/1, docs/DETECT_JSON.md; an array of them, one per host, with "
                "--prometheus; reveal.peers/1 with --peers, docs/FLEET.md)");
  sub->add_flag("--fail-on-incident", o.fail_on_incident,
                std::string("Exit 1 when an incident is found (any host flagged with --peers or --prometheus); the "
                            "report is ") + (report ? "written" : "printed") + " all the same");
  sub->add_flag("--no-progress", o.no_progress, "No progress bar on stderr (drawn only when stderr is a terminal)");
}

// Windows, detectors, incident rule and reporting depth (into o.d where DetectOptions has them).
void add_detector_options(CLI::App* sub, Opts& o, bool report) {
  sub->add_option("--window", o.window, "Window length in samples")->capture_default_str()->check(CLI::Range(2, 3600));
  sub->add_option("--stride", o.stride, "Samples between window starts")->capture_default_str()->check(CLI::Range(1, 3600));
  sub->add_option("--trail", o.trail,
                  "Samples of the trailing mean the robust-z detector also scores (a shift held that long; at most the window length: not scored)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t(0), kMaxTrail));
  sub->add_option("--seed", o.d.seed, "Random seed (Isolation Forest)")->capture_default_str()->check(whole_u64());
  sub->add_option("--min-windows", o.d.incident.min_windows, "Anomalous windows in a row that open an incident")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--settle", o.settle,
                  "Start-up period: anomalies that end within it open no incident (e.g. 10s, 0s to report them)")
      ->capture_default_str();
  sub->add_option("--end-after", o.d.incident.end_after, "Normal windows in a row that close an incident")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--min-duration", o.min_duration,
                  "How long an incident must last (its start to its last symptom); a shorter one is a transient, "
                  "listed with the workload changes (e.g. 10s, 0s to report every one)")
      ->capture_default_str();
  sub->add_option("--pca", o.pca,
                  "PCA residual detector: report (its SPE and T² streams in the JSON, not fused), fuse (SPE joins "
                  "the fused score), off")
      ->check(CLI::IsMember({"report", "fuse", "off"}))
      ->capture_default_str();
  sub->add_option("--pearson-cut", o.d.prune_r,
                  "Isolation Forest channel pruning: a channel is left out of the forest when |Pearson r| with one "
                  "already kept is at least this (1 keeps all but exact duplicates; the paper uses 0.5)")
      ->capture_default_str()->check(CLI::Range(0.05, 1.0));
  sub->add_option("--false-per-day", o.d.false_per_day,
                  "Expected false incidents per host-day: the rate the EVT-calibrated fused score is set to "
                  "(smaller = fewer, later alarms)")
      ->capture_default_str()->check(CLI::Range(1e-6, 1e6));
  if (!report)
    sub->add_flag("--window-z", o.d.window_z,
                "With --json: add every window's per-channel robust z (windows.channels, windows.channel_z)");
  sub->add_flag("--all-anomalies", o.all_anomalies,
                "Report every anomalous interval as an incident, also those in which no symptom rose (stall or "
                "wait time, errors, drops, throttling), which are otherwise listed as workload changes");
  sub->add_flag("--no-symptom-windows", o.no_symptom_windows,
                "Flag windows by the fused score alone: a symptom that stepped up materially (stall or wait time, "
                "errors, drops, throttling, tasks waiting beyond the CPUs; not steal) no longer makes its window "
                "anomalous on its own");
  sub->add_option("--top", o.d.top_channels, "Channels listed per incident")->capture_default_str()->check(CLI::Range(1, 100));
}

// Checks that the options fit together (UsageError otherwise) and completes o.d from them.
// Returns the input files: the runs, then the baselines.
std::vector<std::string> check_options(Opts& o, const CLI::App& sub, bool report) {
  o.d.window = {o.window, o.stride, o.trail};
  o.d.workload_changes = !o.all_anomalies;
  o.d.symptom_windows = !o.no_symptom_windows;
  o.d.settle_s = double(parse_duration_arg("--settle", o.settle)) * 1e-9;
  o.d.incident.min_duration_s = double(parse_duration_arg("--min-duration", o.min_duration)) * 1e-9;
  if (!(o.d.false_per_day >= 1e-6 && o.d.false_per_day <= 1e6))  // also NaN, which Range lets through
    throw UsageError("--false-per-day: want a number of incidents per day in 1e-06..1e+06");
  if (!(o.d.prune_r >= 0.05 && o.d.prune_r <= 1.0)) throw UsageError("--pearson-cut: want a number in 0.05..1");
  o.d.pca = o.pca == "fuse" ? PcaUse::fuse : o.pca == "off" ? PcaUse::off : PcaUse::report;
  const char* html_flag = report ? "-o" : "--html";
  if (!report && o.d.window_z && !o.json) throw UsageError("--window-z needs --json");
  if (sub.count("--prometheus") && o.prometheus.empty()) throw UsageError("--prometheus: empty URL");
  if (sub.count(report ? "--output" : "--html") && o.html.empty())
    throw UsageError(std::string(html_flag) + ": empty path (use - for standard output)");
  const bool prom = !o.prometheus.empty();
  for (const char* flag : {"--match", "--start", "--end", "--step", "--timeout", "--jobs"})
    if (!prom && sub.count(flag)) throw UsageError(std::string(flag) + " needs --prometheus");
  if (prom && !o.runs.empty()) throw UsageError("give either stores or --prometheus, not both");
  if (!prom && o.runs.empty()) throw UsageError("a store to analyse is required (or --prometheus URL)");
  if (!prom && !o.peers && o.runs.size() > 1)
    throw UsageError("several stores are compared only with --peers (give each known-good run after its own --baseline)");
  if (o.peers && !o.baselines.empty())
    throw UsageError("--peers uses the other hosts as the reference; --baseline does not apply");
  if (o.peers && !prom && o.runs.size() < 2) throw UsageError("--peers needs at least two stores");
  if (!report && sub.count("--agent-config") && !o.streaming) throw UsageError("--agent-config needs --streaming");
  if (o.streaming) {
    if (o.peers) throw UsageError("--streaming analyses each host alone (not --peers)");
    if (!o.html.empty()) throw UsageError("--html needs the whole-run analysis; it does not combine with --streaming");
    if (o.d.window_z) throw UsageError("--window-z needs the whole-run analysis; it does not combine with --streaming");
    for (const char* flag : {"--settle", "--pca", "--pearson-cut", "--all-anomalies"})
      if (sub.count(flag)) throw UsageError(std::string(flag) + " does not apply to --streaming (the agent's detector)");
    if (!o.agent_config.empty() || sub.count("--agent-config")) check_input_path("--agent-config", o.agent_config);
  }
  for (const auto& r : o.runs) check_input_path("run", r);
  for (const auto& b : o.baselines) check_input_path("--baseline", b);
  // The same file twice (./a.db and a.db too) would compare a host with itself.
  std::vector<std::string> inputs = o.runs;
  inputs.insert(inputs.end(), o.baselines.begin(), o.baselines.end());
  check_distinct(inputs);
  return inputs;
}

// The HTML report's file (`report -o`, `detect --html`): checked before the work, so a bad
// output path costs nothing; written only at the end.
class HtmlOut {
 public:
  HtmlOut(const Opts& o, const std::vector<std::string>& inputs, bool report) : report_(report) {
    const char* html_flag = report ? "-o" : "--html";
    if (!o.html.empty()) out_.emplace(o.html, inputs, html_flag);
    if (!report && out_ && out_->is_stdout())
      throw UsageError("--html " + o.html + ": standard output carries the text report; use `reveal report -o -`");
  }
  bool wanted() const { return out_.has_value(); }
  // Writes and commits the page; `reveal report` then prints one line about it.
  void write(const std::string& page, std::size_t n_hosts, std::size_t incidents) {
    out_->write(page);
    out_->commit();
    if (!report_) return;
    const std::string line = wrote_line(out_->display_name(), page.size(), n_hosts, incidents);
    if (out_->is_stdout()) std::fputs(line.c_str(), stderr);
    else write_stdout(line);
  }

 private:
  bool report_;
  std::optional<OutputFile> out_;
};

// The hosts to score: their recordings, display names, and what they were read from.
struct Hosts {
  std::vector<Recording> recordings;
  std::vector<std::string> names;
  std::string source;
};

// The range and selector of --prometheus (--match, --start, --end, --step, --timeout), checked.
PrometheusQuery prometheus_query(const Opts& o) {
#ifdef REVEAL_WITH_HTTP
  if (o.start.empty()) throw UsageError("--prometheus needs --start (e.g. --start -10m)");
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
  PrometheusQuery q;
  q.url = o.prometheus;
  q.selector = o.match;
  q.start_unix_ns = parse_wall_time("--start", o.start, now);
  q.end_unix_ns = parse_wall_time("--end", o.end, now);
  if (q.end_unix_ns < q.start_unix_ns) throw UsageError("--end is before --start");
  q.step_ns = parse_duration_arg("--step", o.step, 1'000'000);
  q.timeout_s = o.timeout_s;
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
  return q;
#else
  (void)o;
  throw UsageError("--prometheus: this reveal was built without HTTP support (REVEAL_STATIC_DEPS=ON)");
#endif
}

// Whether the whole-run analysis was asked for, whatever the length: --whole-run, or an option
// only it has (--html, --window-z, --settle, --pca, --pearson-cut, --all-anomalies).
bool whole_run_asked(const Opts& o, const CLI::App& sub) {
  if (o.whole_run || !o.html.empty() || o.d.window_z) return true;
  for (const char* flag : {"--settle", "--pca", "--pearson-cut", "--all-anomalies"})
    if (sub.count(flag)) return true;
  return false;
}

// The note of a recording analysed as with --streaming because it is long.
std::string long_note(std::uint64_t samples, std::size_t channels, double interval_s) {
  return fmt::format(
      "a long recording ({} samples × {} channels, {:.1f} h): analysed as --streaming does, with a reference that "
      "moves with time, in bounded memory; --whole-run fits one reference on all of it, held in memory",
      samples, channels, double(samples) * interval_s / 3600.0);
}

// Why a single store is analysed as with --streaming although it was not asked for, or "": it
// holds more than kWholeRunMaxValues samples × channels, and nothing asked for the whole-run
// analysis (--whole-run, or an option only it has: --html, --window-z, --settle, --pca,
// --pearson-cut, --all-anomalies).
std::string long_recording(const Opts& o, const CLI::App& sub) {
#ifndef REVEAL_WITH_HTTP
  (void)o;
  (void)sub;
  return "";  // built without the agent (REVEAL_STATIC_DEPS=ON): the whole-run analysis, whatever the length
#else
  if (o.runs.size() != 1 || whole_run_asked(o, sub)) return "";
  check_input_path("run", o.runs.front());
  StoreReader reader(o.runs.front());
  const std::uint64_t samples = reader.claimed_samples(INT64_MIN, INT64_MAX);
  if (samples * reader.store_channels() <= kWholeRunMaxValues) return "";
  return long_note(samples, reader.store_channels(), reader.meta().interval_s);
#endif
}

// A Progress updated from several threads: each update under a lock.
class LockedProgress final : public Progress {
 public:
  explicit LockedProgress(Progress* p) : p_(p) {}
  void update(std::string_view stage, std::size_t done, std::size_t total) noexcept override {
    std::lock_guard lock(mu_);
    p_->update(stage, done, total);
  }
  void finish() noexcept override {
    std::lock_guard lock(mu_);
    p_->finish();
  }

 private:
  Progress* p_;
  std::mutex mu_;
};

// Reads recordings held in memory.
PeerReader memory_reader(const std::vector<Recording>& recordings) {
  return [&recordings](const std::function<void(std::size_t, const Recording&)>& use) {
    for (std::size_t i = 0; i < recordings.size(); ++i) use(i, recordings[i]);
  };
}

// --peers over stores without the HTML report: their names from their metadata, each store
// loaded when compare_peers() reads it, so that one store is in memory at a time.
Hosts peer_stores(const Opts& o) {
  Hosts h;
  std::vector<Recording> metas;
  for (const auto& r : o.runs) {
    Recording m;
    m.meta = StoreReader(r).meta();
    metas.push_back(std::move(m));
  }
  h.names = store_names(metas, o.runs);
  for (const auto& r : o.runs) h.source += (h.source.empty() ? "" : ", ") + r;
  return h;
}

// The stores given as runs.
Hosts load_stores(const Opts& o, Progress& bar) {
  Hosts h;
  for (const auto& r : o.runs) {
    bar.update("load", h.recordings.size(), o.runs.size() + o.baselines.size());
    h.recordings.push_back(load_recording(r));
  }
  h.names = store_names(h.recordings, o.runs);
  for (const auto& r : o.runs) h.source += (h.source.empty() ? "" : ", ") + r;
  return h;
}

// The baseline reference: a model file, or the stores trained into a model here (once, for
// every host read from Prometheus too); none without --baseline. Loading after `n_hosts`
// stores (the progress count).
std::optional<BaselineModel> reference_model(const Opts& o, const CLI::App& sub, std::size_t n_hosts, Progress& bar) {
  std::size_t model_files = 0;
  for (const auto& b : o.baselines) model_files += is_model_file(b);
  if (model_files > 0) {
    if (o.baselines.size() > 1)
      throw UsageError("--baseline: a model file is the whole reference; give it alone (train one model on every "
                       "known-good store)");
    BaselineModel model = BaselineModel::load(o.baselines.front());
    // What the model fixed cannot be changed here.
    const DetectOptions& m = model.options();
    const auto fixed = [&](const char* flag, bool same, const std::string& trained) {
      if (sub.count(flag) && !same)
        throw UsageError(std::string(flag) + ": the model was trained with " + trained +
                         "; train it again to change it");
    };
    fixed("--window", o.window == m.window.length, std::to_string(m.window.length));
    fixed("--stride", o.stride == m.window.stride, std::to_string(m.window.stride));
    fixed("--trail", o.trail == m.window.trail, std::to_string(m.window.trail));
    fixed("--seed", o.d.seed == m.seed, std::to_string(m.seed));
    fixed("--pca", o.d.pca == m.pca, m.pca == PcaUse::off ? "off" : m.pca == PcaUse::fuse ? "fuse" : "report");
    fixed("--pearson-cut", o.d.prune_r == m.prune_r, fmt::format("{:g}", m.prune_r));  // the forest's channels
    return model;
  }
  if (o.baselines.empty()) return std::nullopt;
  bar.update("load", n_hosts, n_hosts + o.baselines.size());
  const TrainingInput in = load_training_stores(o.baselines, o.d.window.length);  // long: spread slices
  return BaselineModel::train(in.recordings, o.d, in.paths);
}

// What the three modes below share: the options, whether the caller is `reveal report`, and
// whether --window-z was given by the user (the HTML report sets o.d.window_z for itself).
struct Run {
  const Opts& o;
  bool report;
  bool user_window_z;
  HtmlOut& html;
  ProgressBar& bar;
  const std::optional<BaselineModel>& model;

  const CLI::App& sub;

  // One host's recording, reporting to `progress`: --streaming, or a host from Prometheus longer
  // than kWholeRunMaxValues without the whole-run analysis asked for (with a note), is analysed
  // as the agent would have; else the whole run.
  DetectResult detect_host(const Recording& h, Progress* progress) const {
    DetectOptions d = o.d;
    d.progress = progress;
    const std::uint64_t values = std::uint64_t(h.t_unix_ns.size()) * h.channels.size();
    const bool long_host = !o.prometheus.empty() && values > kWholeRunMaxValues && !whole_run_asked(o, sub);
#ifndef REVEAL_WITH_HTTP
    if (long_host) return model ? detect(h, *model, d) : detect(h, {}, d);
#endif
    if (o.streaming || long_host) {
      DetectResult r = detect_streaming(h, agent_options(h.meta), progress);
      if (long_host && !o.streaming)
        r.notes.insert(r.notes.begin(), long_note(h.t_unix_ns.size(), h.channels.size(), h.meta.interval_s));
      return r;
    }
    return model ? detect(h, *model, d) : detect(h, {}, d);
  }
  // --streaming: the agent's detector options (its defaults or --agent-config), at the
  // recording's interval, with the detector flags given here on top.
  StreamingOptions agent_options(const RunMetadata& meta) const {
#ifdef REVEAL_WITH_HTTP
    AgentConfig cfg;
    if (!o.agent_config.empty()) {
      try {
        cfg = load_agent_config(o.agent_config);
      } catch (const ConfigError& e) {  // a missing, unreadable or malformed file: an input error
        throw std::runtime_error(std::string("--agent-config: ") + e.what());
      }
    }
    cfg.interval = std::chrono::nanoseconds(std::int64_t(std::max(meta.interval_s, 1e-3) * 1e9));
    if (model) {  // the streaming detector scores with the model's window: size the warm-up for it
      cfg.window = model->options().window.length;
      cfg.stride = model->options().window.stride;
    }
    if (sub.count("--window")) cfg.window = o.window;
    if (sub.count("--stride")) cfg.stride = o.stride;
    if (sub.count("--trail")) cfg.trail = o.trail;
    if (sub.count("--seed")) cfg.seed = o.d.seed;
    if (sub.count("--min-windows")) cfg.min_windows = o.d.incident.min_windows;
    if (sub.count("--end-after")) cfg.end_after = o.d.incident.end_after;
    if (sub.count("--min-duration"))
      cfg.min_duration = std::chrono::nanoseconds(std::int64_t(o.d.incident.min_duration_s * 1e9));
    if (sub.count("--false-per-day")) cfg.false_per_day = o.d.false_per_day;
    StreamingOptions so = streaming_options(cfg);
    so.detect.top_channels = o.d.top_channels;
    so.detect.symptom_windows = o.d.symptom_windows;
    if (model) so.baseline = std::make_shared<const BaselineModel>(*model);
    return so;
#else
    throw UsageError("--streaming: this reveal was built without the agent (REVEAL_STATIC_DEPS=ON)");
#endif
  }
  int exit_code(bool incidents) const { return o.fail_on_incident && incidents ? kExitIncidents : kExitOk; }
};

// --peers: the hosts compared with each other; one report.
// `read` reads the hosts (twice: reveal/peers.h); hosts.recordings holds them all only for the
// HTML report.
// `progress`: where the comparison reports (the bar, or the bar behind a lock when `read` reads
// on several threads).
int report_peers(const Run& run, const Hosts& hosts, const PeerReader& read, Progress* progress) {
  const Opts& o = run.o;
  if (hosts.names.size() < 2)
    throw PeersError("--peers: only one host (" + hosts.names.front() + ") in " + hosts.source +
                     "; nothing to compare with");
  DetectOptions d = o.d;
  d.progress = progress;
  // Text and JSON need no host's per-window traces once it is scored (its JSON report is
  // spooled to a temporary file then, and output in rank order at the end): they are dropped
  // as each host is scored, so that memory does not grow with the fleet (issue #19). The HTML
  // report draws them: kept.
  std::optional<Spool> spool;
  PeerScored scored;
  if (!run.html.wanted()) {
    if (o.json && !run.report) spool.emplace();
    scored = [&](PeerHost& h) {
      if (!run.user_window_z) h.result.window_z = Matrix();
      if (spool) spool->add(h.name, [&](const Spool::Writer& w) { write_json(h.result, h.name, w); });
      drop_window_traces(h.result);
    };
  }
  PeersResult pr = compare_peers(hosts.names.size(), hosts.names, read, d, scored);
  run.bar.finish();
  std::size_t incidents = 0;
  for (const auto& h : pr.hosts) incidents += h.result.incidents.size();
  if (run.html.wanted()) {
    std::vector<HtmlHost> hh;
    for (const auto& h : pr.hosts) {
      const auto it = std::find(hosts.names.begin(), hosts.names.end(), h.name);
      hh.push_back({h.name, &hosts.recordings.at(std::size_t(it - hosts.names.begin())), &h.result});
    }
    run.html.write(render_html(hh, hosts.source, &pr), hh.size(), incidents);
  }
  if (!run.user_window_z)
    for (auto& h : pr.hosts) h.result.window_z = Matrix();
  if (!run.report) {
    if (o.json)  // a host's report at a time: a fleet's reports are never one string
      write_peers_json(pr, hosts.source, [](std::string_view piece) { write_stdout(std::string(piece)); },
                       spool ? PeerReportWriter([&](const PeerHost& h, const std::function<void(std::string_view)>& w) {
                         spool->replay(h.name, w);
                       })
                             : PeerReportWriter());
    else
      write_stdout(render_peers_text(pr, hosts.source));
  }
  return run.exit_code(!pr.flagged.empty());
}

// One store.
int report_store(const Run& run, const Hosts& hosts) {
  const Opts& o = run.o;
  DetectResult r = run.detect_host(hosts.recordings.front(), o.d.progress);
  run.bar.finish();
  if (run.html.wanted())
    run.html.write(render_html({{hosts.names.front(), &hosts.recordings.front(), &r}}, o.runs.front()), 1,
                   r.incidents.size());
  if (!run.report)
    o.json ? write_json_stdout(r, o.runs.front(), run.user_window_z) : write_stdout(render_text(r, o.runs.front()));
  return run.exit_code(!r.incidents.empty());
}

// --streaming on one store, or a long store without --whole-run: read a chunk at a time
// (reveal/recording_feed.h), so memory does not grow with the recording's length (issue #19).
int report_store_streaming(const Run& run, const std::string& long_note) {
  const Opts& o = run.o;
  StoreFeed feed(o.runs.front());
  DetectResult r = detect_streaming(feed, run.agent_options(feed.meta()), o.d.progress);
  if (!long_note.empty()) r.notes.insert(r.notes.begin(), long_note);
  run.bar.finish();
  if (!run.report)
    o.json ? write_json_stdout(r, o.runs.front(), run.user_window_z) : write_stdout(render_text(r, o.runs.front()));
  return run.exit_code(!r.incidents.empty());
}

// The hosts read from Prometheus (--prometheus): listed, then read and analysed --jobs at a time
// (reveal/prometheus_source.h for_each_prometheus_host), one report per host in host order, or
// with --peers compared with each other. Only each host's result is kept, so memory is that of
// --jobs hosts at a time; the HTML report and --peers keep every host's recording.
int report_prometheus(const Run& run) {
#ifdef REVEAL_WITH_HTTP
  const Opts& o = run.o;
  const PrometheusQuery q = prometheus_query(o);
  run.bar.update("hosts", 0, 0);
  const std::vector<std::string> instances = prometheus_instances(q);
  Hosts hosts;
  hosts.source = "prometheus " + q.url + " " + q.selector;
  for (const auto& i : instances) hosts.names.push_back(i.empty() ? "(no instance)" : i);
  const std::size_t n = instances.size();
  if (o.peers && n < 2)
    throw PeersError("--peers: only one host (" + hosts.names.front() + ") in " + hosts.source +
                     "; nothing to compare with");
  LockedProgress bar(&run.bar);  // the hosts are read on --jobs threads
  const auto read_each = [&](const std::function<void(std::size_t, Recording&&)>& use) {
    for_each_prometheus_host(q, instances, o.jobs, use, [&](std::size_t done) { bar.update("hosts", done, n); });
  };
  if (o.peers && !run.html.wanted())
    return report_peers(
        run, hosts,
        [&](const std::function<void(std::size_t, const Recording&)>& use) {
          read_each([&](std::size_t i, Recording&& r) { use(i, r); });
        },
        &bar);
  const bool keep = o.peers || run.html.wanted();
  if (keep) hosts.recordings.resize(n);
  // Each host's report is written as soon as it and the hosts before it are done, in host order,
  // then freed (the HTML report keeps them): memory is that of the hosts in flight, not of the
  // fleet. The JSON array is the text dump(2) gives it, written a host at a time.
  // A listed host with less than one window of samples in the range (none at all: listed by
  // storage block, reveal/prometheus_source.h) is not analysed: named on stderr at the end,
  // absent from the reports.
  std::vector<std::optional<DetectResult>> pending(o.peers ? 0 : n);
  std::vector<char> absent(n, 0);
  std::vector<std::size_t> samples(n, 0);
  std::vector<DetectResult> results(run.html.wanted() && !o.peers ? n : 0);
  std::mutex out_mu;
  std::size_t next = 0, incidents = 0, written = 0;
  const auto emit = [&](std::size_t i, DetectResult& r) {
    if (absent[i]) return;
    incidents += r.incidents.size();
    const std::size_t k = written++;
    if (run.report) return;
    const std::string src = hosts.source + " instance=" + hosts.names[i];
    if (!o.json) {
      write_stdout((k ? "\n" : "") + render_text(r, src));
      return;
    }
    write_stdout(k == 0 ? "[\n" : ",\n");
    write_json_stdout(r, src, run.user_window_z, "  ");
  };
  run.bar.update("hosts", 0, n);
  read_each([&](std::size_t i, Recording&& r) {
    if (!o.peers) {
      DetectResult res;
      // Fewer samples than one window of rates (none: listed, but nothing in the range).
      const bool none = r.t_unix_ns.size() < std::max<std::size_t>(o.d.window.length, 1) + 1;
      try {
        if (!none) res = run.detect_host(r, nullptr);
      } catch (const DetectError& e) {
        throw DetectError("host " + hosts.names[i] + ": " + e.what());
      }
      std::lock_guard lock(out_mu);
      absent[i] = none;
      if (none) samples[i] = r.t_unix_ns.size();
      pending[i] = std::move(res);
      for (; next < n && pending[next]; ++next) {
        emit(next, *pending[next]);
        if (!results.empty()) results[next] = std::move(*pending[next]);
        pending[next].reset();
      }
    }
    if (keep) hosts.recordings[i] = std::move(r);
  });
  if (o.peers) return report_peers(run, hosts, memory_reader(hosts.recordings), &run.bar);
  if (next != n) throw PrometheusError("host " + hosts.names[next] + ": not read");  // for_each reads every host
  run.bar.finish();
  std::string none;
  for (std::size_t i = 0, listed = 0, count = std::size_t(std::count(absent.begin(), absent.end(), 1)); i < n; ++i)
    if (absent[i] && listed++ < 10)
      none += (none.empty() ? "" : ", ") + fmt::format("{} ({} samples)", hosts.names[i], samples[i]) +
              (listed == 10 && count > 10 ? fmt::format(" and {} more", count - 10) : "");
  if (written == 0)
    throw PrometheusError("no host listed by " + hosts.source + " has one window of samples in the range: " + none);
  if (!run.report && o.json) write_stdout("\n]\n");
  if (!none.empty())
    std::fprintf(stderr, "reveal %s: not analysed, less than one window of samples in the range: %s\n",
                 run.report ? "report" : "detect", none.c_str());
  if (run.html.wanted()) {
    std::vector<HtmlHost> hh;
    for (std::size_t i = 0; i < n; ++i)
      if (!absent[i]) hh.push_back({hosts.names[i], &hosts.recordings[i], &results[i]});
    run.html.write(render_html(hh, hosts.source), hh.size(), incidents);
  }
  return run.exit_code(incidents > 0);
#else
  (void)run;
  throw UsageError("--prometheus: this reveal was built without HTTP support (REVEAL_STATIC_DEPS=ON)");
#endif
}

// `reveal detect` and `reveal report` share their options and their pipeline; `report` writes
// the HTML report (-o) and prints one line, `detect` prints the text or JSON report (and the
// HTML too with --html).
Action add_detect_like(CLI::App& app, bool report) {
  auto o = std::make_shared<Opts>();
  CLI::App* sub = add_subcommand(app, *o, report);
  add_input_options(sub, *o, report);
  add_detector_options(sub, *o, report);
  return [o, sub, report]() -> int {
    const std::vector<std::string> inputs = check_options(*o, *sub, report);
    const bool user_window_z = o->d.window_z;
    HtmlOut html(*o, inputs, report);
    if (html.wanted()) o->d.window_z = true;  // the heatmap and the channel table
    const auto bar = stderr_progress(report ? "reveal report" : "reveal detect", !o->no_progress);
    o->d.progress = bar.get();
    const bool prom = !o->prometheus.empty();
    const std::string note = prom || o->peers || o->streaming || report ? "" : long_recording(*o, *sub);
    if ((o->streaming || !note.empty()) && !prom && !o->peers) {
      const std::optional<BaselineModel> model = reference_model(*o, *sub, 1, *bar);
      return report_store_streaming(Run{*o, report, user_window_z, html, *bar, model, *sub}, note);
    }
    if (prom) {
      const std::optional<BaselineModel> model = reference_model(*o, *sub, 0, *bar);
      return report_prometheus(Run{*o, report, user_window_z, html, *bar, model, *sub});
    }
    if (o->peers && !html.wanted()) {
      const Hosts hosts = peer_stores(*o);
      const std::optional<BaselineModel> model;  // --peers takes no --baseline
      return report_peers(
          Run{*o, report, user_window_z, html, *bar, model, *sub}, hosts,
          [&](const std::function<void(std::size_t, const Recording&)>& use) {
            for (std::size_t i = 0; i < o->runs.size(); ++i) use(i, load_recording(o->runs[i]));
          },
          bar.get());
    }
    const Hosts hosts = load_stores(*o, *bar);
    const std::optional<BaselineModel> model = reference_model(*o, *sub, hosts.recordings.size(), *bar);
    const Run run{*o, report, user_window_z, html, *bar, model, *sub};
    if (o->peers) return report_peers(run, hosts, memory_reader(hosts.recordings), bar.get());
    return report_store(run, hosts);
  };
}

}  // namespace

Action add_detect(CLI::App& app) { return add_detect_like(app, false); }
Action add_report(CLI::App& app) { return add_detect_like(app, true); }

}  // namespace reveal::cli
