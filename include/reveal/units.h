// Parsing of human units on the command line.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace reveal {

// "1s", "500ms", "2m", "1h", "1.5s", "250us"; a bare number is seconds. nullopt when malformed,
// negative or not finite.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view s);

}  // namespace reveal
