// Import: foreign telemetry converted into a Recording that StoreWriter can write, so that
// `reveal detect` runs on it (`reveal import FORMAT INPUT... -o OUT.db`).
//
// Every importer takes its input as bytes (ImportInput: a name for messages and the contents),
// never a path, so tests and fuzzers drive it directly; the CLI reads the files. Each returns a
// Recording with
//   meta      hostname (from the input where it names one, else the file stem), command
//             "reveal import FORMAT FILE...", one ProbeRecord "import.<format>", interval_s (the
//             median spacing of the timestamps), start/end of the samples, complete = true;
//   channels  name, unit, kind, subsystem and help as described per format below;
//   t_unix_ns strictly increasing; values NaN where the input has a gap.
//
// Errors: malformed input throws ImportError whose what() is ONE line
//   "<file>:<line>:<column>: <what is wrong>"       (text formats; line and column from 1)
//   "<file>: byte <offset>: <what is wrong>"          (binary arrays)
// The importers never write anything; write_store() writes atomically (see there).
//
// Subsystems are guessed conservatively from names (guess_subsystem); what is not recognised is
// Subsystem::system. adopt_channel_info() replaces the guesses with a real store's channel info.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/recording.h"

namespace reveal {

class ImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One input: `name` (usually the path) appears in messages, `data` is the whole file.
struct ImportInput {
  std::string name;
  std::string_view data;
};

// What a lenient import (ImportOptions::strict false) let through instead of failing: counted,
// with the first occurrence of each ("<file>:<line>:<col>: <what>"), for one line on stderr.
struct ImportNotes {
  std::size_t gap_values = 0;  // values that were not numbers ("inf", "N/A", "[Unknown Error]",
  std::string first_gap;       // text) and became gaps
  std::size_t ragged_rows = 0;  // rows with too few or too many fields: skipped
  std::string first_ragged;
  std::size_t bad_time_rows = 0;  // rows whose time does not read: skipped
  std::string first_bad_time;
  std::size_t duplicate_times = 0;  // rows at the previous row's time: the later one kept
  std::size_t backward_rows = 0;    // rows whose time went back: dropped
  std::size_t clock_steps = 0;      // runs of backward rows; each is also an event "clock_step"
  std::string first_backward;
  std::size_t gpus_lost = 0;  // nvidia-smi "GPU is lost" lines: events "gpu_lost", its rows absent
  // One line, e.g. "3 values became gaps (first: run.csv:4:7: 'inf'); 2 rows ...", or "" when
  // nothing was let through.
  std::string summary() const;
};

struct ImportOptions {
  // Spacing of synthetic timestamps (smd; prometheus scrapes without sample timestamps).
  double interval_s = 1.0;
  // First synthetic timestamp; default kDefaultImportStartNs.
  std::optional<std::int64_t> start_unix_ns;
  // reveal-table: the host to import when the table holds several ("" = the only one).
  std::string host;
  // csv, nvidia-smi: throw ImportError at the first bad value, ragged row or time that does not
  // increase (the old all-or-nothing behaviour). Otherwise such problems are counted in `notes`
  // (when given) and the rest of the file is imported.
  bool strict = false;
  ImportNotes* notes = nullptr;
  // nvidia-smi: the query fields of a log written with --format=csv,noheader, in order (e.g.
  // {"timestamp", "index", "utilization.gpu", "memory.used"}); empty: the first line is the header.
  std::vector<std::string> fields;
};

// 2020-01-01T00:00:00Z: the first timestamp of inputs that carry none, unless --start says.
inline constexpr std::int64_t kDefaultImportStartNs = 1'577'836'800'000'000'000;

// --- wide CSV ("csv") ----------------------------------------------------------------------
// The inverse of `reveal export --csv`. Two header forms:
//   export form  "t_unix_ns,t_s,<channel>,..."  (t_s is ignored; channel names kept verbatim)
//   plain form   "<anything>,<name>,..."         first column a timestamp, one per row, as
//                unix seconds (may be fractional), milliseconds, microseconds or nanoseconds
//                (told apart by the magnitude of the first row: < 1e11 s, < 1e14 ms, < 1e17 µs,
//                else ns) or ISO-8601 UTC ("2024-01-31T12:00:00.5Z", "2024-01-31 12:00:00");
//                names containing ':' are kept verbatim, others become "csv:<name>" with
//                characters outside [A-Za-z0-9_.:-] replaced by '_'.
// Fields may be double-quoted ("" = a quote); CRLF and a UTF-8 BOM are accepted. An empty field,
// "nan" or "NaN" is a gap. Every value channel is a gauge with unit "" (export does not carry
// kinds: use adopt_channel_info). Errors: a duplicate column name, no data rows; with
// opt.strict also ragged rows, a bad number, a time that does not read or does not increase.
// Otherwise (ImportNotes): a value that is not a number ("inf", "N/A", "[Unknown Error]") is a
// gap; a ragged row or one whose time does not read is skipped; a row at the previous row's
// time replaces it (last write wins); rows whose time went back are dropped until the time
// passes the last kept row's, and each such run is an event "clock_step" (source "import").
Recording import_wide_csv(const ImportInput& in, const ImportOptions& opt = {});

// `reveal import csv`: the CSV file at `path` into the store `out`, in memory that does not grow
// with the file (issue #19): the store write_store(out, import_wide_csv(the whole file, opt))
// writes, with the channels `known` describes adopted (adopt_channel_info) and meta.cores =
// `cores`, but read a line at a time (a line may hold 64 MiB) and written as the rows are read.
// Memory: a line, a row, and 8 bytes a row (for the median spacing). `progress` (when given)
// hears stage "import", KiB read of the file's KiB. Errors as import_wide_csv and write_store,
// and "<path>: cannot open: …"; on any error nothing is left at `out`.
struct CsvImported {
  std::size_t samples = 0, channels = 0, adopted = 0;  // rows and channels written; channels adopted
};
class Progress;
CsvImported import_wide_csv_file(const std::string& path, const std::filesystem::path& out,
                                 const ImportOptions& opt = {}, const std::vector<ChannelInfo>& known = {},
                                 int cores = 0, Progress* progress = nullptr);

// --- raw numpy arrays with a manifest ("smd") ----------------------------------------------
// The Server Machine Dataset pickles (and any array described the same way): the manifest
// (MANIFEST.tsv beside the dataset) gives per file its shape, dtype (f4|f8), endianness, order
// (C|F), data_offset, data_nbytes and file_size; the array is the contiguous block
// [data_offset, data_offset + data_nbytes). Rows are time steps: one sample each, spaced
// interval_s from start_unix_ns. Channels "smd:col00".."smd:colNN", unit "", gauge; for the
// 38-column SMD layout the help names the published metric (cpu_r, load_1, ... from
// OmniAnomaly issue #22) and the subsystem follows it. The hostname is the file stem without
// "_train"/"_test". Labels (`*_test_label.pkl`) are not imported: they are for evaluation only.
struct ArrayLayout {
  std::string file;  // the manifest's path for it, e.g. "processed/machine-1-6_train.pkl"
  std::size_t rows = 0, cols = 0;
  std::size_t item_size = 4;  // 4 (f4) or 8 (f8)
  bool little_endian = true;
  bool row_major = true;  // order C; false = F (column-major)
  std::uint64_t data_offset = 0, data_nbytes = 0, file_size = 0;
};
// Parses the manifest and returns the entry whose file path is a suffix (at a '/' boundary) of
// `input_path`. Throws ImportError naming the manifest line for a malformed entry, and naming
// the input when no entry matches.
ArrayLayout find_array_layout(const ImportInput& manifest, std::string_view input_path);
// Checks the layout against the bytes (file size, block inside the file, the pickle opcode that
// introduces the block with the same length) and converts. Errors name a byte offset.
Recording import_array(const ImportInput& in, const ArrayLayout& layout, const ImportOptions& opt = {});

// --- Prometheus text exposition ("prometheus") ---------------------------------------------
// Each input is one scrape: one sample (row) per input, in the given order. The row's time is
// the largest sample timestamp (ms) in the scrape, else start_unix_ns + index·interval_s.
// One channel per series: "prom:<metric>" or "prom:<metric>.<k>=<v>+<k>=<v>" with labels sorted
// by key and characters outside [A-Za-z0-9_:-] in values replaced by '_'. Kind counter for
// `# TYPE x counter`, for untyped names ending "_total", and for histogram/summary _bucket,
// _sum and _count series; else gauge. Unit from the name's suffix (_seconds "s", _bytes
// "bytes", _celsius "C", _joules "J", _watts "W", else ""). A series absent from a scrape is a
// gap. Errors: bad metric name, bad label syntax, bad value or timestamp, a series twice in one
// scrape, two series whose names sanitise alike, times that do not increase across scrapes.
Recording import_prometheus(std::span<const ImportInput> scrapes, const ImportOptions& opt = {});

// --- nvidia-smi CSV logs ("nvidia-smi") ----------------------------------------------------
// `nvidia-smi --query-gpu=timestamp,index,utilization.gpu,... --format=csv[,nounits] -l 1`:
// a header of query fields with units in brackets ("utilization.gpu [%]"), then one row per GPU
// per pass; a pass (one sample) ends where a GPU index repeats and takes the time of its first
// row ("2024/01/31 12:00:00.123", read as UTC: nvidia-smi prints the host's local time, so give
// UTC logs or accept the shift). One channel per (field, GPU): named as the nvml probe names it
// where the meaning is the same ("nvml:utilization_gpu.gpu0", memory.* MiB converted to bytes,
// power W, clocks MHz, temperature C, pstate "P2" -> 2), else "nvidia_smi:<field>.gpu<N>" with
// the header's unit. Values may carry their unit ("45 %"); "[N/A]", "[Not Supported]" are gaps.
// Columns with no numeric value (name, pci.bus_id, ...) are not imported. Without an index
// column every row is GPU 0. A log without its header (--format=csv,noheader) needs
// opt.fields; units then come from the values ("45 %") or nvidia-smi's fixed ones (MiB, W, MHz).
// Lenient unless opt.strict, as "csv": "inf", "-inf" and other non-numbers are gaps, ragged rows
// and unreadable times skipped, times that do not increase handled per pass; a line reporting
// "GPU is lost" (nvidia-smi cannot reach a GPU) is an event "gpu_lost" (source "nvidia-smi"),
// and that GPU's channels are gaps while its rows are missing; the other GPUs' rows are kept.
Recording import_nvidia_smi(const ImportInput& in, const ImportOptions& opt = {});

// --- Reveal dataset tables ("reveal-table") -------------------------------------------------
// Whitespace-separated; a header of columns "<Source>:<Field>[.<idx>].<host>[<unit>]" (e.g.
// "Perf:Branches.nserver07[count]", "Turbostat:Avg_MHz.3.nserver07[MHz]"), optionally after a
// first time column (any name that is not of that form; its values read as in "csv": unix
// s/ms/µs/ns or ISO-8601 UTC). Without a time column rows are spaced interval_s from
// start_unix_ns. One store holds one host: ImportOptions::host picks it when the table has
// several (required then). Channels "<Source>:<Field>[.<idx>]" with the bracketed unit, gauge,
// subsystem by guess_subsystem; the hostname is the host. "nan" or an empty-looking "NaN" is a gap.
Recording import_reveal_table(const ImportInput& in, const ImportOptions& opt = {});

// Writes `rec` to `out` atomically: into ".reveal-import-<pid>" beside it first, renamed over
// `out` once finished, so a failure never leaves a half-written store (the temporary files are
// removed); a replaced store's permissions are kept, and a symbolic link at `out` stays a link
// (the store it leads to is replaced). Refuses (ImportError) an existing `out` that is not a
// regular file, not an SQLite file, or a store a recorder still holds.
void write_store(const std::filesystem::path& out, const Recording& rec);

// For each channel of `rec` whose name matches one of `known` (a store's channels), takes its
// unit, kind, subsystem, counter width, wrap range and help. Returns how many matched.
std::size_t adopt_channel_info(Recording& rec, const std::vector<ChannelInfo>& known);

// The subsystem a channel name most likely belongs to: Reveal's own sources exactly, as their
// probes classify them ("proc.meminfo:…" memory, "nvml:…" gpu, "proc.diskstats:….zram0" memory),
// other names by keyword; Subsystem::system otherwise.
Subsystem guess_subsystem(std::string_view name);

}  // namespace reveal
