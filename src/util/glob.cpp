// fnmatch(3)-compatible matching (no flags, C locale); syntax in reveal/glob.h.
#include "reveal/glob.h"

#include <cstddef>

namespace reveal {
namespace {

bool in_class(std::string_view name, unsigned char c) {
  const bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
  const bool print = c >= 0x20 && c < 0x7f;
  if (name == "alnum") return upper || lower || digit;
  if (name == "alpha") return upper || lower;
  if (name == "blank") return c == ' ' || c == '\t';
  if (name == "cntrl") return c < 0x20 || c == 0x7f;
  if (name == "digit") return digit;
  if (name == "graph") return print && c != ' ';
  if (name == "lower") return lower;
  if (name == "print") return print;
  if (name == "punct") return print && c != ' ' && !upper && !lower && !digit;
  if (name == "space") return c == ' ' || (c >= '\t' && c <= '\r');
  if (name == "upper") return upper;
  if (name == "xdigit") return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  return false;
}

bool known_class(std::string_view name) {
  for (std::string_view k : {"alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
                             "space", "upper", "xdigit"})
    if (name == k) return true;
  return false;
}

enum class Element { match, no_match, invalid };

// Matches the bracket expression at pattern[p] == '[' against c. On success sets `next` past
// its ']'. Returns nullopt-like `unterminated` through `closed` = false (then '[' is literal).
Element bracket(std::string_view pat, std::size_t p, unsigned char c, std::size_t& next, bool& closed) {
  closed = false;
  std::size_t i = p + 1;
  const bool negate = i < pat.size() && (pat[i] == '!' || pat[i] == '^');
  if (negate) ++i;
  bool hit = false, first = true;
  while (true) {
    if (i >= pat.size()) return Element::no_match;  // unterminated: closed stays false
    unsigned char lo = static_cast<unsigned char>(pat[i]);
    if (lo == ']' && !first) { ++i; break; }
    first = false;
    if (lo == '[' && i + 1 < pat.size() && pat[i + 1] == ':') {
      // "[:name:]" with name of 'a'..'y' (as glibc); anything else makes '[' a plain member.
      std::size_t j = i + 2;
      while (j < pat.size() && pat[j] >= 'a' && pat[j] < 'z') ++j;
      if (j + 1 < pat.size() && pat[j] == ':' && pat[j + 1] == ']') {
        const std::string_view name = pat.substr(i + 2, j - i - 2);
        if (!known_class(name)) return Element::invalid;
        hit = hit || in_class(name, c);
        i = j + 2;
        continue;
      }
      if (j >= pat.size()) return Element::no_match;  // unterminated
    }
    if (lo == '\\') {
      if (i + 1 >= pat.size()) return Element::invalid;
      lo = static_cast<unsigned char>(pat[++i]);
    }
    ++i;
    // A range "lo-hi" unless the '-' is last in the set.
    if (i + 1 < pat.size() && pat[i] == '-' && pat[i + 1] != ']') {
      std::size_t k = i + 1;
      unsigned char hi = static_cast<unsigned char>(pat[k]);
      if (hi == '\\') {
        if (k + 1 >= pat.size()) return Element::invalid;
        hi = static_cast<unsigned char>(pat[++k]);
      }
      hit = hit || (lo <= c && c <= hi);
      i = k + 1;
    } else {
      hit = hit || lo == c;
    }
  }
  closed = true;
  next = i;
  return hit != negate ? Element::match : Element::no_match;
}

// Matches one pattern element (not '*') at pattern[p] against c; sets `next` past it.
Element element(std::string_view pat, std::size_t p, unsigned char c, std::size_t& next) {
  const char e = pat[p];
  if (e == '?') { next = p + 1; return Element::match; }
  if (e == '[') {
    bool closed = false;
    const Element r = bracket(pat, p, c, next, closed);
    if (closed || r == Element::invalid) return r;
    next = p + 1;  // unterminated: a literal '['
    return c == '[' ? Element::match : Element::no_match;
  }
  if (e == '\\') {
    if (p + 1 >= pat.size()) return Element::invalid;  // trailing '\' matches nothing
    next = p + 2;
    return static_cast<unsigned char>(pat[p + 1]) == c ? Element::match : Element::no_match;
  }
  next = p + 1;
  return static_cast<unsigned char>(e) == c ? Element::match : Element::no_match;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  // Greedy with one backtrack point: after the last '*' seen, retry one character further on.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = ++p;
      mark = t;
      continue;
    }
    if (p < pattern.size()) {
      std::size_t next = p;
      const Element r = element(pattern, p, static_cast<unsigned char>(text[t]), next);
      if (r == Element::invalid) return false;
      if (r == Element::match) {
        p = next;
        ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star;
    t = ++mark;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace reveal
