// `reveal export RUN -o OUT [--channels GLOB...] [--start T] [--end T]`: a store as a wide
// CSV, one row per sample: t_unix_ns, t_s (seconds since the first sample), then one column per
// channel in store order with the raw recorded value (counters as counted; an empty field is a
// gap). GLOB is a wildcard pattern (reveal/glob.h, fnmatch(3) syntax) on channel names ("nvml:*", "*.eth0"); --start/--end are
// times in the run (time_arg.h parse_run_time: "30s"/"+2m" from the first sample, "-30s" from
// the last, or ISO 8601), compared at the CSV's millisecond resolution. OUT "-" is standard
// output; --csv is the old spelling of -o. OUT is written whole or not at all (output_file.h); it
// may not be the input store or any other store.
// Exit 2 when no channel matches, the range is empty or malformed, or OUT is the input; 3 on a bad
// store, an OUT that is a directory or another store, or a failed write.
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "reveal/glob.h"
#include "reveal/store.h"
#include "reveal/store_reader.h"
#include "file_args.h"
#include "output_file.h"
#include "progress_bar.h"
#include "time_arg.h"

namespace reveal::cli {
namespace {

struct Opts {
  std::string store, out;
  std::vector<std::string> globs;
  std::string start, end;
  bool no_progress = false;
};

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

  OutputFile out(o.out, {o.store}, "-o");
  std::string line = "t_unix_ns,t_s";
  for (const auto& ch : channels) line += "," + csv_field(ch.name);
  line += "\n";
  out.write(line);
  std::size_t done = 0, written = 0;
  // Only the chunks that can hold wanted rows are decoded (a millisecond of slack each side:
  // wanted() compares rounded milliseconds).
  const auto widen = [](std::int64_t t, std::int64_t d) {
    std::int64_t r = 0;
    return __builtin_add_overflow(t, d, &r) ? (d < 0 ? INT64_MIN : INT64_MAX) : r;
  };
  reader.begin_samples(widen(from, -1'000'000), widen(to, 1'000'000));
  while (reader.next_samples(block)) {
    for (std::size_t r = 0; r < block.t_unix_ns.size(); ++r, ++done) {
      report_progress(bar.get(), "write", done, samples, 64);
      const std::int64_t t = block.t_unix_ns[r];
      if (!wanted(t)) continue;
      ++written;
      line = fmt::format("{},{:.3f}", t, double(t - t0) * 1e-9);
      for (std::size_t c = 0; c < channels.size(); ++c) {
        const double v = block.values(r, c);
        line += std::isfinite(v) ? fmt::format(",{}", v) : std::string(",");
      }
      line += "\n";
      out.write(line);
    }
  }
  bar->finish();
  out.commit();
  if (!out.is_stdout()) std::fprintf(stderr, "reveal: wrote %zu rows × %zu channels to %s\n", written, channels.size(), o.out.c_str());
  return kExitOk;
}

}  // namespace

Action add_export(CLI::App& app) {
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand("export", "Write a store's samples as wide CSV (one row per sample)");
  set_help_footer(sub, {"reveal export run.db -o run.csv", "reveal export run.db -o - --channels 'nvml:*' --start 30s --end 2m",
                        "reveal export run.db -o last-minute.csv --start -60s",
                        "reveal export run.db -o window.csv --start 2026-11-30T21:00:00Z --end 2026-11-30T21:05:00Z"});
  sub->add_option("store", o->store, "Store written by `reveal record`")->required();
  sub->add_option("-o,--output,--csv", o->out, "Output CSV file, or - for standard output (--csv: the old spelling)")
      ->required();
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
    return run_export(*o);
  };
}

}  // namespace reveal::cli
