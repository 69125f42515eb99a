// A long recording built from real ones, in bounded memory (issue #19's benchmark: "a week of
// one host in bounded memory"). Reveal's own real recordings are at most hours long; to measure
// what `reveal detect`, `reveal agent --replay` and the store do with 6 hours, a day or a week of
// one host at 1 Hz and ~800 channels, this tool writes such a store out of real recordings'
// clean samples.
//
// usage: reveal_make_long_store --out OUT.db --hours H [--seed N] [--block-s 600] [--min-block-s 60]
//                               [--common-channels] [--verbose] SRC.db[:LABELS.json] [SRC2.db[:LABELS2.json] ...]
// --common-channels: write only the first source's channels that every source has (see Limits).
// --verbose: one line per block on stderr (output sample index, samples, source, source times),
// to check joins against the output.
//
// Method:
//   1. Clean spans. For each source store, its samples (read an hour at a time, no channel
//      decoded) are split into spans of consecutive samples: a span ends where two samples are
//      more than 1.5 intervals apart (the recorder was down or missed ticks) and where a sample
//      falls inside [start - 30 s, end + 30 s] of a fault of LABELS.json (a JSON object whose
//      "faults" array holds items with "start_unix_ns" and "end_unix_ns", as
//      bench/hostday writes; items without both are skipped; "skipped_faults" and workload
//      "events" are not faults). Spans shorter than --min-block-s are dropped.
//   2. Blocks. Until --hours of samples are written, draw (std::mt19937_64 seeded by --seed) a
//      clean span, with probability proportional to its length (so every clean second of every
//      source is equally likely to be used), then a uniformly random offset inside it, and
//      append the contiguous block of min(--block-s, span length, what is left) seconds that
//      starts there. A block is read with load_recording() restricted to its own time range.
//   3. Times. Output sample k is stamped start + k * interval, where start is the first
//      source's start and interval its meta interval_s. Every source must have the same
//      interval. The channel list is the first source's; another source's channels are matched
//      by name, and a channel it lacks is NaN in its blocks (its extra channels are dropped).
//   4. Counters continue across block joins. For a counter channel (Kind::counter, by the first
//      source's channel table) a block gets one offset: its first value (the first non-NaN one)
//      becomes the previous output value plus the block's own first delta (the next sample's
//      value minus it, 0 where that is NaN), i.e. offset = prev_out_last + first_delta -
//      src_block_first, and out = src + offset through the block. NaN stays NaN and does not
//      move prev_out_last; a counter with no output value yet keeps its source values. A
//      counter's rate across a join is thus a rate the host really had, and inside a block
//      every delta (resets and wraps included) is the source's own. Gauges and states are
//      copied as they are (they may step at a join).
//   5. Writing. One StoreWriter (default chunk length) and finish() at the end. Metadata is
//      the first source's (host, kernel, CPU, cores, probes, interval) with start and end set
//      from the output times, command "reveal_make_long_store <args>" and exit code 0. The
//      first source's configuration snapshot is written once at the start (its configuration
//      changes are not). Events are NOT copied. Tenant scans (per-cgroup scans, which the
//      detector uses to tell a job starting from an incident) are copied with --tenant-scans:
//      each block's scans re-stamped as its samples are (block start + their offset in the
//      block), paths given output ids by name, and each cgroup's counters (CPU usage, PSI
//      totals) continued across joins as the channels' counters are (step 4: the first delta
//      of the block is kept). Without the flag there are none. `reveal info OUT` shows the host,
//      the time range and the command.
//
// Memory does not depend on --hours: what is held is one block (--block-s samples x channels
// doubles, 4 MB at 600 s x 837 channels), the writer's chunk, and per source the list of clean
// spans (a few numbers each). Each block load also reads the source's events and
// configuration whole, and its tenant scans for the block's range (load_recording has no
// option to skip them), which is small for bench/hostday's stores.
//
// Measured (2-core VM, shared; from bench/hostday's days 39 and 40: 30 + 20 minutes, 837
// channels, 1745 s clean in 14 spans; --seed 1, default blocks; /usr/bin/time): peak RSS 11.9 MB
// for 1 h (0.25 s, 0.8 MB on disk), 12.2 MB for 6 h (1.0 s, 4.3 MB), 12.2 MB for 24 h (3.2 s,
// 17 MB) and 11.9 MB for a week (23 s, 118 MB). bench/scale/check_joins.py checks an output
// against its sources (on the 1-h store: every counter join and in-block delta as described;
// its 70 negative counter deltas are the sources' own, all of proc.vmstat:workingset_nodes).
//
// Why blocks rather than shuffling single samples or windows: inside a block the host's
// time structure is kept — the autocorrelation of load, job phases, the sampler's jitter, the
// bursts a detector must not flag — so a detector sees real behaviour for minutes at a time.
// A block join looks like a workload change (a job starting or stopping, a phase boundary),
// which real hosts have too, many times a day; long blocks keep joins rare (one per 10
// minutes by default).
//
// Limits:
//   - Not a real week: the content is the sources' clean minutes reused, so there are no daily
//     cycles, no slow drifts (memory leaks, disks filling, counters wrapping) beyond what the
//     sources had, and a week from 30 clean minutes uses each clean second ~350 times (in
//     different orders and block boundaries). Good for cost and memory measurements and for
//     false-positive rates on clean data; not for detection quality on faults (there are none:
//     fault intervals are excluded, with 30 s of margin either side).
//   - Channels one source lacks are NaN in its blocks, which `reveal detect` reports as data
//     that stopped and came back at every switch of source. bench/hostday's days name their
//     veth interfaces after a process id, so two days differ by ~30 network channels: use
//     --common-channels to keep only the channels every source has (`reveal detect` on the 1-h
//     store of the measurement below: 17 incidents, 10 of them "data stopped"; with
//     --common-channels 7, none).
//   - Blocks are also cut short by the clean spans: sources with frequent faults (days 39 and
//     40: a fault every ~3 minutes) give spans of ~2 minutes, so joins come every ~2 minutes
//     (657 a day) whatever --block-s.
//   - Gauges step at joins (memory levels, load averages, smoothed PSI averages); only counters
//     are made continuous.
//   - A source stamped irregularly is re-stamped on a regular grid; a block is the samples
//     found in its time range (a few fewer or more than its nominal length where the source's
//     ticks drifted), and spans do not cross gaps in a source.
//   - An unfinished source (end time 0: recorder killed) has its sample times read in one load,
//     which also decodes all its tenant scans.
//
// Output: one line on stdout (samples, channels, blocks, bytes on disk, seconds taken).
// Exit status: 0 done, 2 bad command line, 3 an input unreadable or unusable (a store that does
// not load, labels that do not parse, sources of different intervals, no clean span long
// enough), 1 the output could not be written.
#include <time.h>

#include <algorithm>
#include <array>
#include <map>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "reveal/store.h"

namespace {

using reveal::ChannelInfo;
using reveal::LoadOptions;
using reveal::Recording;

constexpr std::int64_t kFaultMarginNs = 30'000'000'000;   // excluded before a fault's start and after its end
constexpr std::int64_t kScanWindowNs = 3'600'000'000'000;  // sample times are read an hour at a time

// A command-line error (exit 2) and an input error (exit 3).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double parse_number(const std::string& flag, const std::string& s) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || errno != 0 || !std::isfinite(v))
    throw UsageError(flag + ": '" + s + "' is not a number");
  return v;
}

struct Source {
  std::filesystem::path store, labels;  // labels empty: none
};

struct Args {
  std::filesystem::path out;
  double hours = 0;
  std::uint64_t seed = 1;
  double block_s = 600, min_block_s = 60;
  bool verbose = false;
  bool common_channels = false;
  bool tenant_scans = false;
  std::vector<Source> sources;
  std::string command;  // "reveal_make_long_store <args>"
};

constexpr const char* kUsage =
    "usage: reveal_make_long_store --out OUT.db --hours H [--seed N] [--block-s 600] [--min-block-s 60]\n"
    "                              [--common-channels] [--tenant-scans] [--verbose] SRC.db[:LABELS.json] [SRC2.db[:LABELS2.json] ...]";

Args parse_args(int argc, char** argv) {
  Args a;
  a.command = "reveal_make_long_store";
  for (int i = 1; i < argc; ++i) a.command += std::string(" ") + argv[i];
  bool have_hours = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--out" || arg == "-o") {
      a.out = value();
    } else if (arg == "--hours") {
      a.hours = parse_number(arg, value());
      have_hours = true;
    } else if (arg == "--seed") {
      const std::string v = value();
      char* end = nullptr;
      errno = 0;
      a.seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno != 0 || v[0] == '-') throw UsageError("--seed: '" + v + "' is not a whole number");
    } else if (arg == "--block-s") {
      a.block_s = parse_number(arg, value());
    } else if (arg == "--min-block-s") {
      a.min_block_s = parse_number(arg, value());
    } else if (arg == "--common-channels") {
      a.common_channels = true;
    } else if (arg == "--tenant-scans") {
      a.tenant_scans = true;
    } else if (arg == "--verbose" || arg == "-v") {
      a.verbose = true;
    } else if (arg == "-h" || arg == "--help") {
      std::puts(kUsage);
      std::exit(0);
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError("unknown option " + arg);
    } else {
      // SRC.db[:LABELS.json]: split at the last ':' unless the whole argument is a file.
      Source s;
      const auto colon = arg.rfind(':');
      if (colon != std::string::npos && colon > 0 && colon + 1 < arg.size() && !std::filesystem::exists(arg)) {
        s.store = arg.substr(0, colon);
        s.labels = arg.substr(colon + 1);
      } else {
        s.store = arg;
      }
      a.sources.push_back(std::move(s));
    }
  }
  if (a.out.empty()) throw UsageError("--out is required");
  if (!have_hours) throw UsageError("--hours is required");
  if (!(a.hours > 0) || a.hours > 24 * 366) throw UsageError("--hours must be > 0 and at most a year");
  if (!(a.block_s >= 1)) throw UsageError("--block-s must be at least 1");
  if (!(a.min_block_s >= 1)) throw UsageError("--min-block-s must be at least 1");
  if (a.min_block_s > a.block_s) throw UsageError("--min-block-s must not exceed --block-s");
  if (a.sources.empty()) throw UsageError("no source store given");
  for (const auto& s : a.sources)
    if (std::filesystem::weakly_canonical(s.store) == std::filesystem::weakly_canonical(a.out))
      throw UsageError("--out " + a.out.string() + " is also a source");
  return a;
}

// [start, end] intervals (ns) excluded by LABELS.json's faults, with the margin.
std::vector<std::pair<std::int64_t, std::int64_t>> read_fault_intervals(const std::filesystem::path& labels) {
  std::ifstream in(labels);
  if (!in) throw InputError(labels.string() + ": cannot read");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(labels.string() + ": not JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw InputError(labels.string() + ": not a JSON object");
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  auto it = j.find("faults");
  if (it == j.end()) {
    std::fprintf(stderr, "reveal_make_long_store: warning: %s has no \"faults\" array: nothing excluded\n", labels.c_str());
    return out;
  }
  if (!it->is_array()) throw InputError(labels.string() + ": \"faults\" is not an array");
  std::size_t skipped = 0;
  for (const auto& f : *it) {
    auto s = f.is_object() ? f.find("start_unix_ns") : f.end(), e = f.is_object() ? f.find("end_unix_ns") : f.end();
    if (!f.is_object() || s == f.end() || e == f.end() || !s->is_number() || !e->is_number()) {
      ++skipped;
      continue;
    }
    const auto start = s->is_number_integer() ? s->get<std::int64_t>() : std::int64_t(s->get<double>());
    const auto end = e->is_number_integer() ? e->get<std::int64_t>() : std::int64_t(e->get<double>());
    out.emplace_back(start - kFaultMarginNs, std::max(start, end) + kFaultMarginNs);
  }
  if (skipped)
    std::fprintf(stderr, "reveal_make_long_store: warning: %s: %zu of %zu faults have no start_unix_ns/end_unix_ns: skipped\n",
                 labels.c_str(), skipped, it->size());
  return out;
}

// A run of consecutive clean samples of one source: first and last sample times.
struct Span {
  std::size_t source = 0;
  std::int64_t t_first = 0, t_last = 0;
  double seconds = 0;  // nominal length: (t_last - t_first) / interval + 1 samples' worth
};

struct SourceInfo {
  Recording head;                 // metadata, channels (and events, config) without samples
  std::vector<int> col_of;        // output channel -> this source's column, -1 = NaN
};

// Output channel -> column of `src` with the same name, -1 where it has none.
std::vector<int> map_columns(const std::vector<ChannelInfo>& out, const std::vector<ChannelInfo>& src) {
  std::unordered_map<std::string, int> by_name;
  for (std::size_t c = 0; c < src.size(); ++c) by_name.emplace(src[c].name, int(c));
  std::vector<int> col_of(out.size(), -1);
  for (std::size_t c = 0; c < out.size(); ++c)
    if (auto it = by_name.find(out[c].name); it != by_name.end()) col_of[c] = it->second;
  return col_of;
}

LoadOptions range(std::int64_t start, std::int64_t end) {
  LoadOptions o;
  o.start_unix_ns = start;
  o.end_unix_ns = end;
  return o;
}

// Appends the clean spans of source `si` to `spans`; returns its samples seen.
std::size_t find_spans(const Args& args, std::size_t si, const Recording& head, std::int64_t iv_ns,
                       std::vector<Span>& spans) {
  const auto& src = args.sources[si];
  std::vector<std::pair<std::int64_t, std::int64_t>> faults;
  if (!src.labels.empty()) faults = read_fault_intervals(src.labels);
  std::sort(faults.begin(), faults.end());
  const auto excluded = [&](std::int64_t t) {
    for (const auto& [a, b] : faults) {
      if (a > t) break;
      if (t <= b) return true;
    }
    return false;
  };
  const double iv_s = double(iv_ns) * 1e-9;
  const std::int64_t max_gap = iv_ns + iv_ns / 2;
  bool open = false;
  Span cur;
  cur.source = si;
  std::int64_t prev_t = 0;
  std::size_t seen = 0;
  const auto close = [&]() {
    if (!open) return;
    cur.seconds = double(cur.t_last - cur.t_first) / double(iv_ns) * iv_s + iv_s;
    if (cur.seconds >= args.min_block_s) spans.push_back(cur);
    open = false;
  };
  const auto visit = [&](const std::vector<std::int64_t>& times) {
    for (const std::int64_t t : times) {
      ++seen;
      if (open && (t - prev_t > max_gap || t <= prev_t)) close();
      prev_t = t;
      if (excluded(t)) {
        close();
        continue;
      }
      if (!open) {
        open = true;
        cur.t_first = t;
      }
      cur.t_last = t;
    }
  };
  LoadOptions o;
  o.keep_channel = [](const ChannelInfo&) { return false; };  // times only
  if (head.meta.end_unix_ns != 0 && head.meta.end_unix_ns >= head.meta.start_unix_ns) {
    // Windows of an hour from the first sample on (a rolling store's start may precede its
    // oldest chunk: those windows are empty).
    std::int64_t from = std::numeric_limits<std::int64_t>::min();
    const std::int64_t stop = head.meta.end_unix_ns;
    std::int64_t w = head.meta.start_unix_ns;
    while (true) {
      o.start_unix_ns = from;
      o.end_unix_ns = (w >= stop) ? std::numeric_limits<std::int64_t>::max() : w + kScanWindowNs - 1;
      visit(reveal::load_recording(src.store, o).t_unix_ns);
      if (w >= stop) break;
      from = w + kScanWindowNs;
      w = from;
    }
  } else {
    visit(reveal::load_recording(src.store, o).t_unix_ns);
  }
  close();
  return seen;
}

}  // namespace

int main(int argc, char** argv) {
  const double t0 = now_s();
  Args args;
  try {
    args = parse_args(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "reveal_make_long_store: %s\n%s\n", e.what(), kUsage);
    return 2;
  }

  // Sources: metadata and channels (no samples), then their clean spans.
  std::vector<SourceInfo> sources(args.sources.size());
  std::vector<Span> spans;
  std::int64_t iv_ns = 0;
  try {
    for (std::size_t si = 0; si < args.sources.size(); ++si) {
      auto& s = sources[si];
      // An empty time range: metadata, channels, events and configuration only.
      s.head = reveal::load_recording(args.sources[si].store,
                                      range(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::min()));
      const double iv = s.head.meta.interval_s;
      if (!(iv > 0)) throw InputError(args.sources[si].store.string() + ": interval " + std::to_string(iv) + " s is not positive");
      if (si == 0) {
        iv_ns = std::llround(iv * 1e9);
        if (iv_ns <= 0) throw InputError(args.sources[si].store.string() + ": interval too small");
      } else if (std::llround(iv * 1e9) != iv_ns) {
        throw InputError(args.sources[si].store.string() + ": interval " + std::to_string(iv) + " s differs from " +
                         args.sources[0].store.string() + "'s " + std::to_string(sources[0].head.meta.interval_s) + " s");
      }
      s.col_of = map_columns(sources[0].head.channels, s.head.channels);
      const auto missing = std::size_t(std::count(s.col_of.begin(), s.col_of.end(), -1));
      const std::size_t before = spans.size();
      const std::size_t seen = find_spans(args, si, s.head, iv_ns, spans);
      double clean_s = 0;
      for (std::size_t k = before; k < spans.size(); ++k) clean_s += spans[k].seconds;
      std::fprintf(stderr, "%s: %zu samples, %zu channels (%zu of the output's missing), %zu clean spans, %.0f s clean\n",
                   args.sources[si].store.c_str(), seen, s.head.channels.size(), missing, spans.size() - before, clean_s);
    }
  } catch (const reveal::StoreError& e) {
    std::fprintf(stderr, "reveal_make_long_store: %s\n", e.what());
    return 3;
  } catch (const InputError& e) {
    std::fprintf(stderr, "reveal_make_long_store: %s\n", e.what());
    return 3;
  }
  if (spans.empty()) {
    std::fprintf(stderr, "reveal_make_long_store: no clean span of at least %g s in any source\n", args.min_block_s);
    return 3;
  }

  reveal::RunMetadata meta = sources[0].head.meta;
  std::vector<ChannelInfo> channels = sources[0].head.channels;
  if (args.common_channels && sources.size() > 1) {
    std::vector<ChannelInfo> kept;
    for (std::size_t c = 0; c < channels.size(); ++c) {
      bool everywhere = true;
      for (const auto& s : sources) everywhere = everywhere && s.col_of[c] >= 0;
      if (everywhere) {
        kept.push_back(channels[c]);
        continue;
      }
      // The probe table's channel counts follow (a channel's source is its probe's name).
      const auto source = channels[c].name.substr(0, channels[c].name.find(':'));
      for (auto& p : meta.probes)
        if (p.name == source && p.n_channels > 0) --p.n_channels;
    }
    std::fprintf(stderr, "--common-channels: %zu of %zu channels are in every source\n", kept.size(), channels.size());
    channels = std::move(kept);
    for (auto& s : sources) s.col_of = map_columns(channels, s.head.channels);
  }
  if (channels.empty()) {
    std::fprintf(stderr, "reveal_make_long_store: no channel to write\n");
    return 3;
  }
  const std::size_t nc = channels.size();
  const double iv_s = double(iv_ns) * 1e-9;
  const auto total = static_cast<std::uint64_t>(std::llround(args.hours * 3600.0 / iv_s));
  const auto block_n = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(args.block_s / iv_s)));
  if (total == 0) {
    std::fprintf(stderr, "reveal_make_long_store: --hours %g is less than one interval\n", args.hours);
    return 2;
  }

  const std::int64_t out_start = meta.start_unix_ns;
  meta.end_unix_ns = 0;
  meta.complete = true;
  meta.command = args.command;
  meta.exit_code = 0;

  std::vector<bool> is_counter(nc);
  for (std::size_t c = 0; c < nc; ++c) is_counter[c] = channels[c].kind == reveal::Kind::counter;
  std::vector<double> prev_out(nc, std::nan(""));  // counters: last output value written
  std::vector<double> offset(nc, 0.0);
  std::vector<double> row(nc);

  std::mt19937_64 rng(args.seed);
  std::vector<double> weights;
  for (const auto& s : spans) weights.push_back(s.seconds);
  std::discrete_distribution<std::size_t> pick_span(weights.begin(), weights.end());

  std::uint64_t written = 0, blocks = 0, empty_draws = 0;
  std::int64_t last_t = out_start;
  // --tenant-scans: output path ids by name, and each output cgroup's last written counters.
  std::vector<std::string> out_paths;
  std::map<std::string, std::uint32_t> out_id;
  std::vector<std::array<double, 4>> last_counters;
  using TC = reveal::TenantCounters;
  static constexpr double TC::*kFields[4] = {&TC::cpu_usage_us, &TC::cpu_some_us, &TC::memory_some_us, &TC::io_some_us};
  try {
    reveal::StoreWriter writer(args.out, meta, channels);
    writer.append_config(out_start, sources[0].head.config);
    while (written < total) {
      const Span& sp = spans[pick_span(rng)];
      const auto span_n = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(sp.seconds / iv_s)));
      const std::uint64_t want = std::min({block_n, span_n, total - written});
      std::uniform_int_distribution<std::uint64_t> pick_off(0, span_n - want);
      const std::uint64_t off = pick_off(rng);
      const std::int64_t from = std::max(sp.t_first, sp.t_first + std::int64_t(off) * iv_ns - iv_ns / 2);
      const std::int64_t to = std::min(sp.t_last, sp.t_first + std::int64_t(off + want - 1) * iv_ns + iv_ns / 2);
      Recording block;
      try {
        block = reveal::load_recording(args.sources[sp.source].store, range(from, to));
      } catch (const reveal::StoreError& e) {
        std::fprintf(stderr, "reveal_make_long_store: %s\n", e.what());
        return 3;
      }
      const std::size_t n = std::min<std::size_t>(block.t_unix_ns.size(), std::size_t(want));
      if (n == 0) {
        if (++empty_draws > 1000) throw InputError("1000 blocks read no samples: the sources changed while being read?");
        continue;
      }
      const auto& col_of = sources[sp.source].col_of;
      const std::size_t bc = block.values.cols();
      const auto src = [&](std::size_t i, std::size_t c) -> double {
        const int k = col_of[c];
        return k < 0 || std::size_t(k) >= bc ? std::nan("") : block.values(i, std::size_t(k));
      };
      // Counter offsets of this block.
      for (std::size_t c = 0; c < nc; ++c) {
        offset[c] = 0;
        if (!is_counter[c] || std::isnan(prev_out[c])) continue;
        std::size_t i0 = 0;
        while (i0 < n && !std::isfinite(src(i0, c))) ++i0;
        if (i0 == n) continue;
        double first_delta = i0 + 1 < n ? src(i0 + 1, c) - src(i0, c) : 0.0;
        if (!std::isfinite(first_delta)) first_delta = 0.0;
        offset[c] = prev_out[c] + first_delta - src(i0, c);
      }
      if (args.verbose)
        std::fprintf(stderr, "block %llu: out %llu +%zu from source %zu t %lld..%lld\n", static_cast<unsigned long long>(blocks),
                     static_cast<unsigned long long>(written), n, sp.source, static_cast<long long>(block.t_unix_ns.front()),
                     static_cast<long long>(block.t_unix_ns[n - 1]));
      const std::int64_t block_out_start = out_start + std::int64_t(written) * iv_ns;
      if (args.tenant_scans) {
        const auto& tl = block.tenants;
        const std::int64_t lo = block.t_unix_ns.front() - iv_ns / 2, hi = block.t_unix_ns[n - 1] + iv_ns / 2;
        // Per output cgroup: its counters' offsets for this block (continuation across the join).
        std::map<std::uint32_t, std::array<double, 4>> offset_of, first_of;
        std::map<std::uint32_t, std::array<double, 4>> second_of;
        const auto out_of = [&](std::uint32_t src_id) {
          const std::string& path = tl.paths.at(src_id);
          auto [it, fresh] = out_id.try_emplace(path, std::uint32_t(out_paths.size()));
          if (fresh) {
            out_paths.push_back(path);
            last_counters.push_back({NAN, NAN, NAN, NAN});
          }
          return it->second;
        };
        for (const auto& sc : tl.scans) {
          if (sc.t_unix_ns < lo || sc.t_unix_ns > hi) continue;
          for (std::size_t k = 0; k < sc.ids.size(); ++k) {
            const std::uint32_t id = out_of(sc.ids[k]);
            std::array<double, 4> v;
            for (int f = 0; f < 4; ++f) v[f] = sc.counters[k].*kFields[f];
            if (!first_of.count(id)) first_of[id] = v;
            else if (!second_of.count(id)) second_of[id] = v;
          }
        }
        for (const auto& [id, first] : first_of) {
          std::array<double, 4> off{};
          for (int f = 0; f < 4; ++f) {
            const double prev = last_counters[id][f];
            if (!std::isfinite(prev) || !std::isfinite(first[f])) continue;
            const auto sec = second_of.find(id);
            double d = sec != second_of.end() ? sec->second[f] - first[f] : 0.0;
            if (!std::isfinite(d)) d = 0.0;
            off[f] = prev + d - first[f];
          }
          offset_of[id] = off;
        }
        reveal::TenantScan out;
        for (const auto& sc : tl.scans) {
          if (sc.t_unix_ns < lo || sc.t_unix_ns > hi) continue;
          out.t_unix_ns = block_out_start + (sc.t_unix_ns - block.t_unix_ns.front());
          out.ids.clear();
          out.counters.clear();
          for (std::size_t k = 0; k < sc.ids.size(); ++k) {
            const std::uint32_t id = out_of(sc.ids[k]);
            TC c = sc.counters[k];
            for (int f = 0; f < 4; ++f) {
              if (!std::isfinite(c.*kFields[f])) continue;
              c.*kFields[f] += offset_of[id][f];
              last_counters[id][f] = c.*kFields[f];
            }
            out.ids.push_back(id);
            out.counters.push_back(c);
          }
          writer.append_tenant_scan(out, out_paths);
        }
      }
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t c = 0; c < nc; ++c) {
          const double v = src(i, c);
          if (is_counter[c] && std::isfinite(v)) {
            row[c] = v + offset[c];
            prev_out[c] = row[c];
          } else {
            row[c] = v;
          }
        }
        last_t = out_start + std::int64_t(written) * iv_ns;
        writer.append(last_t, row);
        ++written;
      }
      ++blocks;
    }
    writer.finish(last_t, 0);
  } catch (const InputError& e) {
    std::fprintf(stderr, "reveal_make_long_store: %s\n", e.what());
    return 3;
  } catch (const reveal::StoreError& e) {
    std::fprintf(stderr, "reveal_make_long_store: %s\n", e.what());
    return 1;
  }
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(args.out, ec);
  std::printf("%s: %llu samples, %zu channels, %llu blocks, %llu bytes, %.1f s\n", args.out.c_str(),
              static_cast<unsigned long long>(written), nc, static_cast<unsigned long long>(blocks),
              static_cast<unsigned long long>(ec ? 0 : bytes), now_s() - t0);
  return 0;
}
