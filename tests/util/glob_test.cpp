// The one wildcard matcher (reveal/glob.h): each former caller's cases, then fnmatch(3).
#include <fnmatch.h>

#include <random>
#include <string>

#include <gtest/gtest.h>

#include "reveal/glob.h"
#include "reveal/registry.h"

namespace reveal {
namespace {

// The agent's `channels` (formerly agent_config.h's own '*'/'?' matcher).
TEST(Glob, AgentChannelCases) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "proc.stat:user"));
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "a"));
  EXPECT_TRUE(glob_match("proc.*", "proc.stat"));
  EXPECT_FALSE(glob_match("proc.*", "sys.net"));
  EXPECT_TRUE(glob_match("proc.stat:user", "proc.stat:user"));
  EXPECT_FALSE(glob_match("proc.stat:user", "proc.stat:user.cpu3"));  // anchored at both ends
  EXPECT_FALSE(glob_match("stat", "proc.stat"));
  EXPECT_TRUE(glob_match("nvml:util.gpu?", "nvml:util.gpu0"));
  EXPECT_FALSE(glob_match("nvml:util.gpu?", "nvml:util.gpu"));
  EXPECT_FALSE(glob_match("nvml:util.gpu?", "nvml:util.gpu10"));
  EXPECT_TRUE(glob_match("?", "x"));
  EXPECT_FALSE(glob_match("?", ""));
  EXPECT_TRUE(glob_match("*:*.cpu?", "proc.stat:user.cpu3"));
  EXPECT_TRUE(glob_match("a*b*c", "aXbYbZc"));
  EXPECT_TRUE(glob_match("a*b", "abab"));  // needs the backtrack past the first 'b'
  EXPECT_FALSE(glob_match("a*b", "abac"));
  EXPECT_TRUE(glob_match("**x**", "x"));
  EXPECT_TRUE(glob_match("*?", "a"));
  EXPECT_FALSE(glob_match("*?", ""));
  EXPECT_TRUE(glob_match("a*", "a"));
  // Pathological pattern: linear backtracking, not exponential.
  EXPECT_FALSE(glob_match("a*a*a*a*a*a*a*a*a*a*b", std::string(2000, 'a')));
}

// Probe selection (formerly sampler.cpp: an exact name, or a prefix ending in '*'). The glob
// reads those the same because no probe name holds a wildcard character.
TEST(Glob, ProbeSelectionCases) {
  for (const auto& f : probe_registry()) {
    EXPECT_EQ(f.name.find_first_of("*?[\\"), std::string::npos) << f.name;
    EXPECT_TRUE(glob_match(f.name, f.name));
    EXPECT_TRUE(glob_match("*", f.name));
    EXPECT_EQ(glob_match("proc.*", f.name), f.name.starts_with("proc.")) << f.name;
    EXPECT_EQ(glob_match("perf*", f.name), f.name.starts_with("perf")) << f.name;
    EXPECT_EQ(glob_match("sys.", f.name), false) << f.name;  // no '*': the exact name only
  }
  EXPECT_TRUE(glob_match("proc.net*", "proc.net.dev"));
  EXPECT_FALSE(glob_match("proc.stat", "proc.stat2"));
}

// `reveal export --channels` (formerly fnmatch(3) itself).
TEST(Glob, ExportChannelCases) {
  EXPECT_TRUE(glob_match("nvml:*", "nvml:util.gpu0"));
  EXPECT_TRUE(glob_match("*.eth0", "proc.net.dev:rx_bytes.eth0"));
  EXPECT_TRUE(glob_match("nvml:util.gpu[0-3]", "nvml:util.gpu2"));
  EXPECT_FALSE(glob_match("nvml:util.gpu[0-3]", "nvml:util.gpu4"));
  EXPECT_TRUE(glob_match("nvml:util.gpu[!0]", "nvml:util.gpu1"));
  EXPECT_FALSE(glob_match("nvml:util.gpu[^0]", "nvml:util.gpu0"));
  EXPECT_TRUE(glob_match("*gpu[[:digit:]]", "nvml:util.gpu7"));
  EXPECT_FALSE(glob_match("*gpu[[:alpha:]]", "nvml:util.gpu7"));
  EXPECT_TRUE(glob_match("[]]", "]"));
  EXPECT_TRUE(glob_match("[!]]", "a"));
  EXPECT_TRUE(glob_match("[a-]", "-"));
  EXPECT_TRUE(glob_match("a\\*b", "a*b"));
  EXPECT_FALSE(glob_match("a\\*b", "axb"));
  EXPECT_TRUE(glob_match("a[b", "a[b"));      // unterminated '[': literal
  EXPECT_FALSE(glob_match("a\\", "a\\"));     // trailing '\\' matches nothing
  EXPECT_FALSE(glob_match("[[:foo:]]", "f"));  // unknown class
  EXPECT_TRUE(glob_match("cgroup:/a/b.slice/*", "cgroup:/a/b.slice/c.scope"));  // '/' not special
  EXPECT_TRUE(glob_match("*", ".hidden"));     // nor a leading '.'
}

// Same answer as glibc's fnmatch(pattern, text, 0) on random patterns and texts over the
// characters that mean something (the syntax in reveal/glob.h).
TEST(Glob, AgreesWithFnmatch) {
  std::mt19937 rng(16);
  const std::string pat_chars = "ab-*?[]!^\\:";
  const char* tokens[] = {"[:digit:]", "[:alpha:]", "[:punct:]", "[a-c]", "[!a]", "\\*", "\\[", "[]a]"};
  const std::string text_chars = "ab-*?[]!^\\:1";
  for (int iter = 0; iter < 200000; ++iter) {
    std::string pat, text;
    const int np = int(rng() % 9), nt = int(rng() % 7);
    for (int i = 0; i < np; ++i) {
      if (rng() % 6 == 0) pat += tokens[rng() % std::size(tokens)];
      else pat += pat_chars[rng() % pat_chars.size()];
    }
    // A range ending in '[' ("a-[") is left unspecified (glibc's answers there depend on what follows).
    if (pat.find("-[") != std::string::npos) continue;
    for (int i = 0; i < nt; ++i) text += text_chars[rng() % text_chars.size()];
    ASSERT_EQ(glob_match(pat, text), ::fnmatch(pat.c_str(), text.c_str(), 0) == 0)
        << "pattern '" << pat << "' text '" << text << "'";
  }
}

}  // namespace
}  // namespace reveal
