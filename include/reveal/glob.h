// The one wildcard syntax of Reveal: probe selection (`reveal record --probes/--no-probes`, the
// agent's `probes`/`exclude_probes`), the agent's `channels` (what /metrics shows) and
// `reveal export --channels`. It is fnmatch(3) without flags, byte by byte (the C locale):
//
//   *          any run of characters, including none ('/' and a leading '.' are not special)
//   ?          any one character
//   [set]      one character of the set: single characters, ranges "a-z" (by byte value; a
//              range that runs backwards holds nothing), classes "[:digit:]" (alnum alpha blank
//              cntrl digit graph lower print punct space upper xdigit, ASCII only); "[!set]" or
//              "[^set]" is any character not in it; a ']' right after '[', "[!" or "[^" is a
//              member, as is a '-' first or last; "\c" inside is c. A '[' with no closing ']'
//              is an ordinary character.
//   \c         the character c itself: "\*", "\?", "\[", "\\" (a '\' at the very end matches nothing)
//   any other  itself; the whole text must match (anchored at both ends)
//
// A pattern with an unknown class ("[[:foo:]]") matches nothing. Equivalence classes "[=a=]"
// and collating symbols "[.a.]" are not supported (read as plain set members), and a range
// ending in '[' ("[a-[]") is unspecified: glibc's own answer there depends on what follows.
//
// Before this file the three callers differed: probe selection took exact names or a prefix
// ending in '*' (the same on every probe name, none holds a wildcard character), the agent took
// only '*' and '?' (a '[' or '\' in its `channels` was literal), export used fnmatch(3).
#pragma once

#include <string_view>

namespace reveal {

// True when `text` matches `pattern` (syntax above). Never throws or allocates; time is
// O(|pattern| * |text|) at worst.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace reveal
