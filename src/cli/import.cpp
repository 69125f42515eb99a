// `reveal import FORMAT INPUT... -o OUT [--interval D] [--start TIME] [--host NAME]
// [--manifest TSV] [--channels-from STORE]`: foreign telemetry as a store that `reveal detect`
// reads. One nested subcommand per format, each with only the flags that apply to it (so --help,
// the man page and completion show them per format). Formats (reveal/ingest.h): csv (wide CSV, as `reveal export` writes or timestamp-first),
// smd (raw numpy arrays described by a MANIFEST.tsv, e.g. the Server Machine Dataset),
// prometheus (text exposition scrapes, one file each, in time order), nvidia-smi (--query-gpu
// CSV logs), reveal-table (the public Reveal dataset's tables; --host picks one host). OUT is
// written atomically: on any error nothing is left at OUT; it may not be one of the inputs. Exit 2
// for an unknown format (main.cpp) or a bad flag, 3 for unreadable or malformed input (one line:
// file:line:column, or file: byte N for binary input).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "commands.h"
#include "reveal/ingest.h"
#include "reveal/store.h"
#include "file_args.h"
#include "progress_bar.h"
#include "time_arg.h"

namespace reveal::cli {
namespace {

namespace fs = std::filesystem;

struct Opts {
  std::string format;
  std::vector<std::string> inputs;
  std::string out, interval, start, manifest, channels_from, host;
  int cores = 0;  // --cores: the host's CPU count (0: from the input or --channels-from)
  bool no_progress = false;
  bool strict = false;  // csv, nvidia-smi: fail at the first bad value, row or time
  std::string fields;   // nvidia-smi: the query fields of a headerless log, comma-separated
};

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw std::runtime_error(path + ": is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) throw std::runtime_error(path + ": read failed");
  return std::move(s).str();
}

// MANIFEST.tsv in the input's folder or up to three folders above it.
std::string find_manifest(const std::string& input) {
  fs::path dir = fs::absolute(input).parent_path();
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    std::error_code ec;
    if (fs::is_regular_file(dir / "MANIFEST.tsv", ec)) return (dir / "MANIFEST.tsv").string();
    if (dir == dir.root_path()) break;
  }
  throw std::runtime_error(input + ": no MANIFEST.tsv beside it or above it; name one with --manifest");
}

Recording import_inputs(const Opts& o, const ImportOptions& io) {
  if (o.format != "prometheus") {
    const std::string data = read_file(o.inputs[0]);
    const ImportInput in{o.inputs[0], data};
    if (o.format == "csv") return import_wide_csv(in, io);
    if (o.format == "nvidia-smi") return import_nvidia_smi(in, io);
    if (o.format == "reveal-table") return import_reveal_table(in, io);
    const std::string manifest_path = o.manifest.empty() ? find_manifest(o.inputs[0]) : o.manifest;
    const std::string manifest = read_file(manifest_path);
    const ArrayLayout layout =
        find_array_layout({manifest_path, manifest}, fs::absolute(o.inputs[0]).lexically_normal().string());
    return import_array(in, layout, io);
  }
  std::vector<std::string> data;
  data.reserve(o.inputs.size());
  for (const auto& path : o.inputs) data.push_back(read_file(path));
  std::vector<ImportInput> ins;
  for (std::size_t i = 0; i < data.size(); ++i) ins.push_back({o.inputs[i], data[i]});
  return import_prometheus(ins, io);
}

// The lines on stderr after an import: what a lenient import let through, and what was written.
void report_import(const ImportNotes& notes, std::size_t samples, std::size_t channels, const Opts& o,
                   std::size_t adopted) {
  if (const std::string what = notes.summary(); !what.empty())
    std::fprintf(stderr, "reveal: import: %s (--strict: fail instead)\n", what.c_str());
  std::fprintf(stderr, "reveal: imported %zu samples × %zu channels (%s) into %s%s\n", samples, channels,
               o.format.c_str(), o.out.c_str(),
               o.channels_from.empty() ? ""
                                       : fmt::format("; {} channels described by {}", adopted, o.channels_from).c_str());
}

int run_import(const Opts& o) {
  std::vector<std::string> inputs = o.inputs;
  if (!o.channels_from.empty()) inputs.push_back(o.channels_from);
  for (const auto& in : inputs) check_input_path("input", in);
  if (o.out.empty() || o.out == "-")
    throw UsageError("-o: a store is a file: give its path (standard output cannot hold one)");
  check_not_flag("-o", o.out);
  check_not_input(o.out, inputs, "-o");
  ImportOptions io;
  io.host = o.host;
  io.strict = o.strict;
  ImportNotes notes;
  io.notes = &notes;
  if (!o.fields.empty()) {
    std::string_view rest = o.fields;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      std::string_view f = rest.substr(0, comma);
      while (!f.empty() && f.front() == ' ') f.remove_prefix(1);
      while (!f.empty() && f.back() == ' ') f.remove_suffix(1);
      if (f.empty()) throw UsageError("--fields '" + o.fields + "': an empty field name");
      io.fields.emplace_back(f);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }
  if (!o.interval.empty()) {
    io.interval_s = double(parse_duration_arg("--interval", o.interval, 1)) * 1e-9;
  }
  if (!o.start.empty()) {
    io.start_unix_ns = parse_absolute_time("--start", o.start);
  }
  std::vector<ChannelInfo> known;
  int known_cores = 0;
  if (!o.channels_from.empty()) {
    LoadOptions none;
    none.start_unix_ns = 1;  // channel list only: no samples in (1, 0)
    none.end_unix_ns = 0;
    Recording from = load_recording(o.channels_from, none);
    known = std::move(from.channels);
    known_cores = from.meta.cores;
  }
  const auto bar = stderr_progress("reveal import", !o.no_progress);
  if (o.format == "csv") {
    // Streamed: read a line at a time and written as read, in memory that does not grow with
    // the file (issue #19).
    const CsvImported got =
        import_wide_csv_file(o.inputs[0], o.out, io, known, o.cores > 0 ? o.cores : known_cores, bar.get());
    bar->finish();
    report_import(notes, got.samples, got.channels, o, got.adopted);
    return kExitOk;
  }
  bar->update("convert", 0, 2);
  Recording rec = import_inputs(o, io);
  const std::size_t adopted = o.channels_from.empty() ? 0 : adopt_channel_info(rec, known);
  // The host's CPU count, which a CSV does not carry: runnable tasks are judged against it.
  if (o.cores > 0) rec.meta.cores = o.cores;
  else if (rec.meta.cores <= 0) rec.meta.cores = known_cores;
  bar->update("write", 1, 2);
  write_store(o.out, rec);
  bar->finish();
  report_import(notes, rec.t_unix_ns.size(), rec.channels.size(), o, adopted);
  return kExitOk;
}

}  // namespace

Action add_import(CLI::App& app) {
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand("import", "Convert foreign telemetry (csv, smd, prometheus, nvidia-smi, reveal-table) into a store");
  sub->require_subcommand(1);
  set_help_footer(sub, {"reveal import csv run.csv -o run.db --channels-from run-original.db",
                        "reveal import nvidia-smi gpu.csv -o gpu.db", "reveal import smd --help"});
  struct Format {
    const char* name;
    const char* help;
    const char* inputs;
    bool synthetic_time, manifest, host;
    const char* example;
    bool lenient = false, fields = false;  // --strict; --fields (headerless logs)
  };
  static const Format kFormats[] = {
      {"csv", "Wide CSV as `reveal export` writes it, or any timestamp-first CSV", "CSV file", false, false, false,
       "reveal import csv run.csv -o run.db --channels-from run-original.db", true, false},
      {"smd", "Raw numpy arrays described by a MANIFEST.tsv (e.g. the Server Machine Dataset)", "Array file (.pkl, .npy)",
       true, true, false, "reveal import smd SMD/processed/machine-1-6_train.pkl -o smd.db --interval 1s"},
      {"prometheus", "Prometheus text-format scrapes, one file each, in time order",
       "Scrape files, one per sample, in time order", true, false, false,
       "reveal import prometheus scrape-*.prom -o prom.db --interval 15s --start 2026-11-30T21:00:00Z"},
      {"nvidia-smi", "nvidia-smi --query-gpu=timestamp,index,... --format=csv logs", "nvidia-smi CSV log", false, false,
       false, "reveal import nvidia-smi gpu.csv -o gpu.db", true, true},
      {"reveal-table", "The public Reveal dataset's whitespace-separated tables", "Table file", true, false, true,
       "reveal import reveal-table table.txt -o n07.db --host nserver07"},
  };
  for (const Format& f : kFormats) {
    auto* fs = sub->add_subcommand(f.name, f.help);
    set_help_footer(fs, {f.example});
    auto* in = fs->add_option(std::string(f.name) == "prometheus" ? "inputs" : "input", o->inputs, f.inputs)->required();
    if (std::string(f.name) != "prometheus") in->expected(1);  // one file; scrapes are one per sample
    fs->add_option("-o,--output", o->out, "Store to write (replaced atomically)")->required();
    if (f.synthetic_time) {
      fs->add_option("--interval", o->interval, "Spacing of samples without timestamps, e.g. 1s, 15s, 500ms");
      fs->add_option("--start", o->start, "Time of the first sample without a timestamp, e.g. 2026-11-30T21:00:00Z "
                                          "(default 2020-01-01T00:00:00Z)");
    }
    if (f.manifest)
      fs->add_option("--manifest", o->manifest, "The MANIFEST.tsv describing the array (default: found beside or above the input)");
    if (f.host) fs->add_option("--host", o->host, "The host whose columns to import (when there are several)");
    if (f.lenient)
      fs->add_flag("--strict", o->strict,
                   "Fail at the first value that is not a number, ragged row or time that does not increase (default: "
                   "count them, make gaps, skip or drop the rows, and say so on stderr)");
    if (f.fields)
      fs->add_option("--fields", o->fields,
                     "The --query-gpu fields of a log written with --format=csv,noheader, e.g. "
                     "timestamp,index,utilization.gpu,memory.used");
    fs->add_option("--channels-from", o->channels_from,
                   "Take unit, kind and subsystem of same-named channels from this store (e.g. csv from `reveal export`), "
                   "and its host's CPU count when the input has none");
    fs->add_option("--cores", o->cores,
                   "The recorded host's CPU count (overrides the input's and --channels-from's): runnable tasks are "
                   "judged against it; without one they are left out of the symptom test")
        ->check(CLI::Range(1, 1 << 20));
    fs->add_flag("--no-progress", o->no_progress, "No progress bar on stderr (drawn only when stderr is a terminal)");
    fs->callback([o, name = std::string(f.name)] { o->format = name; });
  }
  return [o]() { return run_import(*o); };
}

}  // namespace reveal::cli
