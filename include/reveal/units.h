// Parsing of human units on the command line and in configuration files. Every flag or key that
// takes a duration or a size goes through these two, so the same spellings work everywhere.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace reveal {

// "1s", "500ms", "2m", "1h", "1.5s", "250us"; a bare number is seconds. nullopt when malformed,
// negative or not finite.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view s);

// Bytes: a bare number, or a number with a unit B, kB/MB/GB/TB/PB/EB (powers of 10^3) or
// KiB/MiB/GiB/TiB/PiB/EiB (powers of 2^10): "4096", "500MB", "64KiB", "1.5GiB", "1EiB". A fraction must come to
// a whole number of bytes. nullopt when malformed, negative or above 2^64 - 1.
std::optional<std::uint64_t> parse_size(std::string_view s);

}  // namespace reveal
