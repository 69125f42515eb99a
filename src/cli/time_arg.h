// Time, duration and size flags of the CLI, parsed in one place so every subcommand accepts the
// same spellings and fails the same way: a UsageError (exit 2) whose one-line message names the
// flag, the value and the forms it takes.
//
// Times come in two contexts:
//  * wall clock (detect --prometheus --start/--end): "now", Unix seconds ("1764536400"),
//    ISO 8601 / RFC 3339 ("2026-11-30T21:00:00Z", "2026-11-30T22:00:00+01:00",
//    "2026-11-30 21:00:00.5"), or relative to now ("-10m", "now-10m");
//  * within a recording (export --start/--end): an offset from the run's first sample ("30s",
//    "+2m", a bare number of seconds), from its last sample ("-30s"), or an absolute ISO 8601
//    time.
#pragma once

#include <cstdint>
#include <string>

namespace reveal::cli {

// A duration flag ("90s", "2m", "500ms", "1h", a bare number of seconds) in nanoseconds, at least
// `min_ns`. Throws UsageError "FLAG: 'TEXT' is not a duration ...".
std::int64_t parse_duration_arg(const std::string& flag, const std::string& text, std::int64_t min_ns = 0);

// A size flag (reveal/units.h parse_size: "1GiB", "500MB", "64KiB", bytes) of at least
// `min_bytes`. Throws UsageError naming the flag.
std::uint64_t parse_size_arg(const std::string& flag, const std::string& text, std::uint64_t min_bytes = 0);

// A wall-clock time flag (see above) in Unix nanoseconds; `now_ns` anchors "now" and "-10m".
std::int64_t parse_wall_time(const std::string& flag, const std::string& text, std::int64_t now_ns);

// A time within a recording whose first and last samples are at `first_ns` and `last_ns` (Unix
// nanoseconds): "30s"/"+30s" → first + 30 s, "-30s" → last − 30 s, ISO 8601 → itself.
std::int64_t parse_run_time(const std::string& flag, const std::string& text, std::int64_t first_ns,
                            std::int64_t last_ns);

// An absolute time flag (ISO 8601 only; import --start) in Unix nanoseconds.
std::int64_t parse_absolute_time(const std::string& flag, const std::string& text);

}  // namespace reveal::cli
