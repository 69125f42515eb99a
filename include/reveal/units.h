// Human units as text, both ways, for every layer (util: includes nothing of Reveal's).
// Parsing: every flag or configuration key that takes a duration or a size goes through
// parse_duration/parse_size, and every ISO 8601 time (command line, imported files) through
// parse_utc_time, so the same spellings work everywhere. Formatting: every value with a unit and
// every wall-clock time shown to a user (reports, `info`, errors) goes through
// format_value/format_utc, so they read alike everywhere.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reveal {

// "1s", "500ms", "2m", "1h", "1.5s", "250us"; a bare number is seconds. nullopt when malformed,
// negative or not finite.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view s);

// Bytes: a bare number, or a number with a unit B, kB/MB/GB/TB/PB/EB (powers of 10^3) or
// KiB/MiB/GiB/TiB/PiB/EiB (powers of 2^10): "4096", "500MB", "64KiB", "1.5GiB", "1EiB". A fraction must come to
// a whole number of bytes. nullopt when malformed, negative or above 2^64 - 1.
std::optional<std::uint64_t> parse_size(std::string_view s);

// Unix time in nanoseconds of "2024-01-31T12:00:00Z", "2024-01-31 12:00:00.123" or
// "2024/01/31 12:00:00.123" (nvidia-smi): date and time separated by 'T' or ' ', an optional
// fraction after '.' or ',', and an optional "Z" or "+hh:mm"/"-hh:mm"/"+hhmm" offset (no offset
// means UTC); blanks and tabs around it are ignored. nullopt when malformed, not a real date, or
// outside the years 1970..2200.
std::optional<std::int64_t> parse_utc_time(std::string_view s);

// "41.2 %", "12.3 MiB/s", "1.52 k/s": a value with its unit, compact. "%" with one decimal,
// "count" whole when it is, "bytes"/"kB" (and their "/s" rates) in binary multiples (B, KiB, MiB,
// GiB, TiB), any other unit with k/M/G prefixes. "n/a" when `v` is not finite.
std::string format_value(double v, const std::string& unit);

// ISO 8601 UTC to the whole second (the fraction is dropped), e.g. "2026-11-30T12:00:45Z".
std::string format_utc(std::int64_t unix_ns);

}  // namespace reveal
