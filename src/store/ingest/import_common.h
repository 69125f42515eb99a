// Internals shared by the importers (reveal/ingest.h): line splitting with positions, number
// parsing, error messages, and the metadata every imported Recording gets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "reveal/ingest.h"

namespace reveal::importer {

// One line of a text input without its terminator ("\n" or "\r\n"); `number` counts from 1.
struct Line {
  std::string_view text;
  std::size_t number = 0;
};
// Splits `data` into lines (a final line without "\n" included); a leading UTF-8 BOM is dropped.
std::vector<Line> split_lines(std::string_view data);

// A field of a line and the 1-based column of its first byte.
struct Field {
  std::string_view text;
  std::size_t col = 1;
};

// ImportError "<file>:<line>:<col>: <message>"; `col` counts from 1.
[[noreturn]] void fail_at(const std::string& file, std::size_t line, std::size_t col, const std::string& message);

// Parses a whole field as a finite double ("+1", "1e3", " 2.5 "); "nan"/"NaN"/"" give NaN
// when `allow_gap`. nullopt when malformed or infinite.
std::optional<double> parse_value(std::string_view s, bool allow_gap = true);
// Parses a whole field as a decimal int64 (optional sign). nullopt when malformed/overflowing.
std::optional<std::int64_t> parse_int(std::string_view s);

std::string_view trim(std::string_view s);
// Keeps [A-Za-z0-9_], `extra` and well-formed non-ASCII UTF-8 characters; replaces every other
// byte (spaces, punctuation, control characters, invalid UTF-8) by '_'.
std::string sanitise(std::string_view s, std::string_view extra);
// For error messages: the text quoted and cut to 40 bytes, non-printable bytes escaped.
std::string quote(std::string_view s);

// How a time column reads: ISO-8601 UTC, or a unix time in units of `mult` nanoseconds.
struct TimeFormat {
  bool iso = false;
  std::int64_t mult = 1;
};
// From the first row's time: ISO-8601 when it parses as one, else a number whose magnitude
// picks the unit (< 1e11 s, < 1e14 ms, < 1e17 µs, else ns).
TimeFormat detect_time_format(std::string_view first);
// Nanoseconds since 1970 (never negative; whole numbers only for ns), or nullopt.
std::optional<std::int64_t> parse_time(std::string_view text, const TimeFormat& tf);

// Sets the metadata every import gets (finish_metadata's, without times and interval):
// hostname, command "reveal import <format> <inputs>", probes = {"import.<format>", `channels`},
// version, complete; other fields are left as they are.
void set_import_metadata(RunMetadata& m, const std::string& format, const std::string& hostname,
                         const std::vector<std::string>& inputs, std::size_t channels);
// The median of `gaps` (ns between consecutive rows; reordered) in seconds, or
// `fallback_interval_s` when there are none.
double median_interval_s(std::vector<std::uint64_t>& gaps, double fallback_interval_s);
// Fills rec.meta: hostname, command, probes = {"import.<format>"}, interval_s (median spacing
// of rec.t_unix_ns, else `fallback_interval_s`), start/end, version. Requires t_unix_ns non-empty.
void finish_metadata(Recording& rec, const std::string& format, const std::string& hostname,
                     const std::vector<std::string>& inputs, double fallback_interval_s);

// Start of synthetic timestamps and their spacing in ns (interval_s must be > 0 and finite).
std::int64_t start_ns(const ImportOptions& opt);
std::int64_t interval_ns(const ImportOptions& opt);

// The file name without directories and extension.
std::string file_stem(std::string_view path);

// --- Lenient imports (ImportOptions::strict false; ImportNotes in reveal/ingest.h) ------------
// "<file>:<line>:<col>: <what>", the form of ImportError messages, for ImportNotes' examples.
std::string at(const std::string& file, std::size_t line, std::size_t col, const std::string& what);

// A problem that strict mode throws for (fail_at with `what`) and lenient mode counts: `count`
// is incremented and `first` set once. Returns normally only in lenient mode.
void tolerate(const ImportOptions& opt, std::size_t ImportNotes::*count, std::string ImportNotes::*first,
              const std::string& file, std::size_t line, std::size_t col, const std::string& what);

// Row times in order: what to do with the next row's time `t` (read at file:line:col from
// `text`). Strict: a time not after the previous one throws. Lenient: equal to the previous ->
// replace_last (counted as a duplicate); earlier -> drop (counted), the first of a run of such
// rows also appends an Event "clock_step" (source "import", value: the step in seconds, < 0) to
// `events`, at the last kept time.
class TimeOrder {
 public:
  enum class Verdict { append, replace_last, drop };
  TimeOrder(const ImportOptions& opt, std::vector<Event>& events) : opt_(opt), events_(events) {}
  Verdict next(std::int64_t t, const std::string& file, std::size_t line, std::size_t col, std::string_view text,
               const char* what_row);

 private:
  const ImportOptions& opt_;
  std::vector<Event>& events_;
  std::optional<std::int64_t> last_;
  bool stepped_back_ = false;
};

}  // namespace reveal::importer
