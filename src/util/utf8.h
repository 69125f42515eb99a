// UTF-8 validity for names the kernel hands over as bytes (interface, cgroup, disk and chip
// names may hold any byte but '/' and NUL), before they reach formats that require UTF-8:
// Prometheus label values and HELP text, JSON (nlohmann::json throws on invalid UTF-8 when it
// dumps), SQLite TEXT read back as text.
//
// Validity follows RFC 3629: no overlong forms, no surrogates (U+D800..U+DFFF), nothing past
// U+10FFFF.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace reveal {

// Length in bytes of the valid UTF-8 sequence at the start of `s`: 1 for ASCII, 2..4 for a
// well-formed multi-byte character, 0 when `s` is empty or does not start with one.
std::size_t utf8_sequence(std::string_view s) noexcept;

// True when all of `s` is valid UTF-8.
bool is_valid_utf8(std::string_view s) noexcept;

// `s` with each byte that is not part of a valid sequence written as "\xNN" (two lower-case hex
// digits): lossless, so two names differing only in invalid bytes stay two names (a name that
// already holds the text "\xNN" could meet one holding that byte; interface names rarely hold "\").
// Returns `s` unchanged when it is valid.
std::string escape_invalid_utf8(std::string_view s);

}  // namespace reveal
