// `reveal export RUN -o OUT [--format csv|openmetrics] [--channels GLOB...] [--start T] [--end T]
//  [--step D] [--label NAME=VALUE...]`.
//   csv (the default): a wide CSV, one row per sample: t_unix_ns, t_s (seconds since the first
//     sample), then one column per channel in store order with the raw recorded value (counters
//     as counted; an empty field is a gap).
//   openmetrics: the OpenMetrics text that `promtool tsdb create-blocks-from openmetrics` backfills
//     into Prometheus: one line per sample and channel, `series value timestamp`, where series is
//     what the agent's /metrics exposes for the channel (reveal/agent.h prometheus_series(): the
//     metric name, channel, subsystem, unit[, entity]) plus the --label pairs (default
//     job="reveal" and instance=<the store's hostname>, as a scrape adds them), value in the
//     exposed unit (seconds for ms/us/ns channels), timestamp in Unix seconds to the millisecond;
//     a gap writes no line; ends with "# EOF". Lines go in time order, every channel of a sample
//     together (no # TYPE lines: families interleave), so a store of any length streams; what
//     comes back through `reveal detect --prometheus` is the store's channels and values. After
//     the channels of the first row of each minute (and of a row at which the configuration
//     changed), the host's configuration then, as the agent exposes it
//     (reveal_host_config_info{key,value} 1: what `reveal config drift --prometheus` reads).
//   --step D keeps one sample per D: the first at or after each multiple of D in Unix time, as an
//     agent scraped every D would be seen (a store sampled at 1 s exported as a 15-s scrape). GLOB is a wildcard pattern (reveal/glob.h, fnmatch(3) syntax) on channel names ("nvml:*", "*.eth0"); --start/--end are
// times in the run (time_arg.h parse_run_time: "30s"/"+2m" from the first sample, "-30s" from
// the last, or ISO 8601), compared at the CSV's millisecond resolution. OUT "-" is standard
// output; --csv is the old spelling of -o. OUT is written whole or not at all (output_file.h); it
// may not be the input store or any other store.
// Exit 2 when no channel matches, the range is empty or malformed, a label is malformed or
// reserved, or OUT is the input; 3 on a bad
// store, an OUT that is a directory or another store, or a failed write.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "reveal/glob.h"
#ifdef REVEAL_WITH_HTTP
#include "reveal/agent.h"
#endif
#include "reveal/store.h"
#include "reveal/store_reader.h"
#include "file_args.h"
#include "output_file.h"
#include "progress_bar.h"
#include "time_arg.h"

namespace reveal::cli {
namespace {

struct Opts {
  std::string store, out, format = "csv", step;
  std::vector<std::string> globs, labels;
  std::string start, end;
  bool no_progress = false;
};

// --label NAME=VALUE pairs, checked: a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not
// __reserved), not one the channel's series has already, each once. Defaults job="reveal" and
// instance=`hostname` when not given.
std::vector<std::pair<std::string, std::string>> series_labels(const std::vector<std::string>& given,
                                                               const std::string& hostname) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& l : given) {
    const std::size_t eq = l.find('=');
    if (eq == std::string::npos) throw UsageError("--label " + l + ": expected NAME=VALUE");
    const std::string name = l.substr(0, eq);
    bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
    for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
    if (!ok) throw UsageError("--label " + l + ": " + name + " is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)");
    if (name.rfind("__", 0) == 0) throw UsageError("--label " + l + ": names starting with __ are Prometheus's own");
    for (const char* own : {"channel", "subsystem", "unit", "entity"})
      if (name == own) throw UsageError("--label " + l + ": " + name + " is a label of every channel's series already");
    for (const char* own : {"key", "value"})
      if (name == own) throw UsageError("--label " + l + ": " + name + " is a label of the configuration's series already");
    for (const auto& [n, v] : out)
      if (n == name) throw UsageError("--label: " + name + " given twice");
    out.emplace_back(name, l.substr(eq + 1));
  }
  const auto has = [&](const char* n) {
    return std::any_of(out.begin(), out.end(), [&](const auto& p) { return p.first == n; });
  };
  if (!has("instance")) out.emplace(out.begin(), "instance", hostname);
  if (!has("job")) out.emplace(out.begin(), "job", "reveal");
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

int run_export(const Opts& o) {
  // Only the matching channels are decoded (the store keeps channel groups apart), one chunk at a
  // time (reveal/store_reader.h): memory does not grow with the store's length (issue #19).
  std::function<bool(const ChannelInfo&)> keep;
  if (!o.globs.empty())
    keep = [&](const ChannelInfo& ch) {
      for (const auto& g : o.globs)
        if (glob_match(g, ch.name)) return true;
      return false;
    };
  const auto bar = stderr_progress("reveal export", !o.no_progress && o.out != "-");
  bar->update("load", 0, 1);
  check_input_path("store", o.store);
  StoreReader reader(o.store, keep);
  const std::vector<ChannelInfo>& channels = reader.channels();
  if (channels.empty()) throw UsageError("--channels: no channel of " + o.store + " matches");
  // First pass, times only (no channel decoded): the first and last sample, which --start and
  // --end count from, and the rows they keep.
  std::int64_t t0 = 0, t1 = 0;
  std::size_t samples = 0;
  SampleBlock block;
  {
    StoreReader times(o.store, [](const ChannelInfo&) { return false; });
    times.begin_samples();
    while (times.next_samples(block)) {
      if (samples == 0) t0 = block.t_unix_ns.front();
      t1 = block.t_unix_ns.back();
      samples += block.t_unix_ns.size();
    }
  }
  const std::int64_t from = o.start.empty() ? INT64_MIN : parse_run_time("--start", o.start, t0, t1);
  const std::int64_t to = o.end.empty() ? INT64_MAX : parse_run_time("--end", o.end, t0, t1);
  if (from > to) throw UsageError("--start is after --end");
  // Times compare as the CSV prints them, in whole milliseconds since the first sample: a sample
  // a few µs after +10 s (the sampler's jitter) is the row "10.000", which --end 10s includes.
  const auto in_ms = [t0](std::int64_t t) {
    std::int64_t d = 0;
    if (__builtin_sub_overflow(t, t0, &d)) return t < t0 ? INT64_MIN : INT64_MAX;
    return std::int64_t(std::llround(double(d) * 1e-6));
  };
  const std::int64_t from_ms = in_ms(from), to_ms = in_ms(to);
  const auto wanted = [&](std::int64_t t) {
    const std::int64_t ms = in_ms(t);
    return ms >= from_ms && ms <= to_ms;
  };

  std::size_t rows = 0;
  {
    StoreReader times(o.store, [](const ChannelInfo&) { return false; });
    times.begin_samples();
    while (times.next_samples(block))
      for (const std::int64_t t : block.t_unix_ns) rows += wanted(t);
  }
  if (rows == 0) throw UsageError("no sample between --start and --end");

  // --step: the first sample at or after each multiple of the step, in Unix time.
  const std::int64_t step = o.step.empty() ? 0 : parse_duration_arg("--step", o.step, 1'000'000);
  std::int64_t last_bucket = INT64_MIN;
  const auto stepped = [&](std::int64_t t) {
    if (step == 0) return true;
    const std::int64_t b = t / step - (t % step < 0);  // floor
    if (b == last_bucket) return false;
    last_bucket = b;
    return true;
  };

  OutputFile out(o.out, {o.store}, "-o");
  const bool om = o.format == "openmetrics";
  std::vector<std::string> series;  // openmetrics: each channel's series text, with a space
  std::vector<double> scale;
  std::string line;
  // openmetrics: the host's configuration as the agent exposes it (reveal_host_config_info), in
  // effect at each row (the snapshot at start, then the stored changes), written with the first
  // row of each minute and at each change, so that a backfilled Prometheus holds it at any time
  // of the run (its 5-minute lookback) for `reveal config drift --prometheus`.
#ifdef REVEAL_WITH_HTTP
  ConfigSnapshot config;
  std::vector<ConfigChange> config_changes;
  std::size_t next_change = 0;
  std::int64_t next_config_ns = INT64_MIN;
  std::string config_lines;  // the series texts of `config`, each with " 1", without the time
  bool config_changed = true;
  std::vector<std::pair<std::string, std::string>> labels;
#endif
  if (om) {
#ifdef REVEAL_WITH_HTTP
    labels = series_labels(o.labels, reader.meta().hostname);
    reader.config(config, config_changes);
    std::stable_sort(config_changes.begin(), config_changes.end(),
                     [](const ConfigChange& a, const ConfigChange& b) { return a.t_unix_ns < b.t_unix_ns; });
    for (const auto& ch : channels) {
      series.push_back(prometheus_series(ch, labels) + " ");
      scale.push_back(prometheus_unit_scale(ch));
    }
#endif
  } else {
    line = "t_unix_ns,t_s";
    for (const auto& ch : channels) line += "," + csv_field(ch.name);
    line += "\n";
    out.write(line);
  }
  std::size_t done = 0, written = 0;
  // Only the chunks that can hold wanted rows are decoded (a millisecond of slack each side:
  // wanted() compares rounded milliseconds).
  const auto widen = [](std::int64_t t, std::int64_t d) {
    std::int64_t r = 0;
    return __builtin_add_overflow(t, d, &r) ? (d < 0 ? INT64_MIN : INT64_MAX) : r;
  };
  reader.begin_samples(widen(from, -1'000'000), widen(to, 1'000'000));
  std::string text;  // written in pieces of about 1 MiB
  while (reader.next_samples(block)) {
    for (std::size_t r = 0; r < block.t_unix_ns.size(); ++r, ++done) {
      report_progress(bar.get(), "write", done, samples, 64);
      const std::int64_t t = block.t_unix_ns[r];
      if (!wanted(t) || !stepped(t)) continue;
      ++written;
      if (om) {
        // Unix seconds to the millisecond (floored), as Prometheus stores them; a sign, then
        // whole seconds and milliseconds of the magnitude (-0.500 for half a second before 1970).
        const std::int64_t ms = t / 1'000'000 - (t % 1'000'000 < 0);
        const std::uint64_t mag = ms < 0 ? std::uint64_t(0) - std::uint64_t(ms) : std::uint64_t(ms);
        const std::string ts = fmt::format(" {}{}.{:03d}\n", ms < 0 ? "-" : "", mag / 1000, int(mag % 1000));
        for (std::size_t c = 0; c < channels.size(); ++c) {
          const double v = block.values(r, c);
          if (!std::isfinite(v)) continue;
          text += series[c];
          fmt::format_to(std::back_inserter(text), "{}", v * scale[c]);
          text += ts;
        }
#ifdef REVEAL_WITH_HTTP
        for (; next_change < config_changes.size() && config_changes[next_change].t_unix_ns <= t; ++next_change) {
          const ConfigChange& c = config_changes[next_change];
          if (c.value.empty()) config.erase(c.key);
          else config[c.key] = c.value;
          config_changed = true;
        }
        if (config_changed || t >= next_config_ns) {
          if (config_changed) {
            config_lines.clear();
            for (const auto& [k, v] : config) config_lines += prometheus_config_series(k, v, labels) + " 1\n";
            config_changed = false;
          }
          constexpr std::int64_t kMinute = 60'000'000'000;
          next_config_ns = (t / kMinute - (t % kMinute < 0) + 1) * kMinute;
          // Each line of config_lines ends "\n": the time goes before it.
          for (std::size_t at = 0; at < config_lines.size();) {
            const std::size_t nl = config_lines.find('\n', at);
            text.append(config_lines, at, nl - at);
            text += ts;
            at = nl + 1;
          }
        }
#endif
      } else {
        fmt::format_to(std::back_inserter(text), "{},{:.3f}", t, double(t - t0) * 1e-9);
        for (std::size_t c = 0; c < channels.size(); ++c) {
          const double v = block.values(r, c);
          if (std::isfinite(v)) fmt::format_to(std::back_inserter(text), ",{}", v);
          else text += ',';
        }
        text += '\n';
      }
      if (text.size() >= (1u << 20)) {
        out.write(text);
        text.clear();
      }
    }
  }
  if (om) text += "# EOF\n";
  out.write(text);
  bar->finish();
  out.commit();
  if (!out.is_stdout())
    std::fprintf(stderr, "reveal: wrote %zu %s × %zu channels to %s\n", written, om ? "samples" : "rows",
                 channels.size(), o.out.c_str());
  return kExitOk;
}

}  // namespace

Action add_export(CLI::App& app) {
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand(
      "export", "Write a store's samples as wide CSV (one row per sample), or as OpenMetrics text to backfill Prometheus");
  set_help_footer(sub, {"reveal export run.db -o run.csv", "reveal export run.db -o - --channels 'nvml:*' --start 30s --end 2m",
                        "reveal export run.db -o last-minute.csv --start -60s",
                        "reveal export run.db -o window.csv --start 2026-11-30T21:00:00Z --end 2026-11-30T21:05:00Z",
                        "reveal export run.db --format openmetrics --step 15s --label instance=node-7 -o run.om && "
                        "promtool tsdb create-blocks-from openmetrics run.om /var/lib/prometheus/metrics2"});
  sub->add_option("store", o->store, "Store written by `reveal record`")->required();
  sub->add_option("-o,--output,--csv", o->out, "Output file, or - for standard output (--csv: the old spelling)")
      ->required();
  sub->add_option("--format", o->format,
                  "csv (one row per sample), or openmetrics (one line per sample and channel, named and labelled as "
                  "the agent's /metrics, with timestamps: for promtool tsdb create-blocks-from openmetrics)")
      ->check(CLI::IsMember({"csv", "openmetrics"}))
      ->capture_default_str();
  sub->add_option("--step", o->step,
                  "Keep one sample per step: the first at or after each multiple of it in Unix time (e.g. 15s, "
                  "as a Prometheus scraping every 15 s would keep)");
  sub->add_option("--label", o->labels,
                  "With --format openmetrics: NAME=VALUE added to every series (repeatable; default job=reveal and "
                  "instance=<the store's hostname>)");
  sub->add_option("--channels", o->globs, "Only channels matching these fnmatch patterns, e.g. 'nvml:*'")
      ->delimiter(',');
  sub->add_option("--start", o->start,
                  "Skip samples before this time: an offset from the first sample (30s, +2m), from the last (-30s), "
                  "or 2026-11-30T21:00:00Z");
  sub->add_option("--end", o->end, "Skip samples after this time (same forms)");
  sub->add_flag("--no-progress", o->no_progress, "No progress bar on stderr (drawn only when stderr is a terminal)");
  return [o, sub]() {
    if (sub->count("--start") && o->start.empty()) throw UsageError("--start: empty time");
    if (sub->count("--end") && o->end.empty()) throw UsageError("--end: empty time");
    if (!o->labels.empty() && o->format != "openmetrics") throw UsageError("--label needs --format openmetrics");
    series_labels(o->labels, "");  // a malformed label: exit 2 before any work
#ifndef REVEAL_WITH_HTTP
    if (o->format == "openmetrics")
      throw UsageError("--format openmetrics: this reveal was built without the agent (REVEAL_STATIC_DEPS=ON)");
#endif
    return run_export(*o);
  };
}

}  // namespace reveal::cli
