// Helpers for the probe tests: fixture roots, temp copies to mutate, channel lookup.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "reveal/probe.h"

namespace reveal::testing {

inline std::filesystem::path fixture(const std::string& machine) {
  return std::filesystem::path(REVEAL_FIXTURES_DIR) / machine;
}

// A private copy of a fixture tree, removed on destruction.
class TempRoot {
 public:
  explicit TempRoot(const std::string& machine) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("reveal-probe-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::copy(fixture(machine), path_, std::filesystem::copy_options::recursive);
  }
  ~TempRoot() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel, std::ios::trunc) << text;
  }
  // Replaces the file atomically (new inode), as a kernel would never do but editors do.
  void replace(const std::string& rel, const std::string& text) const {
    write(rel + ".tmp", text);
    std::filesystem::rename(path_ / (rel + ".tmp"), path_ / rel);
  }
  void remove(const std::string& rel) const { std::filesystem::remove_all(path_ / rel); }

 private:
  std::filesystem::path path_;
};

inline std::vector<std::string> names(const Probe& p) {
  std::vector<std::string> out;
  for (const auto& c : p.channels()) out.push_back(c.name);
  return out;
}

inline std::vector<double> sample(Probe& p) {
  std::vector<double> v(p.channels().size(), -12345.0);
  p.sample(v);
  return v;
}

// Index of channel `name`, or fails the test.
inline std::size_t index_of(const Probe& p, const std::string& name) {
  const auto& ch = p.channels();
  for (std::size_t i = 0; i < ch.size(); ++i)
    if (ch[i].name == name) return i;
  ADD_FAILURE() << "no channel " << name;
  return 0;
}

inline const ChannelInfo& info(const Probe& p, const std::string& name) {
  return p.channels()[index_of(p, name)];
}

inline double value(const Probe& p, const std::vector<double>& v, const std::string& name) {
  return v[index_of(p, name)];
}

inline bool all_nan(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isnan(x)) return false;
  return true;
}
inline bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// Checks the channels named in `want` (each "<prefix><name>"): the same value bit for bit, or
// NaN where NaN is wanted. `context` says which step of a test failed.
inline void expect_values(const Probe& p, const std::vector<double>& v, const std::string& prefix,
                          const std::map<std::string, double>& want, const std::string& context) {
  for (const auto& [name, x] : want) {
    const double got = v[index_of(p, prefix + name)];
    if (std::isnan(x))
      EXPECT_TRUE(std::isnan(got)) << prefix << name << " = " << got << ", " << context;
    else
      EXPECT_EQ(got, x) << prefix << name << ", " << context;
  }
}

// Every channel name obeys "<source>:<field>[.<index>]" with the probe's source.
inline void expect_names_follow_rule(const Probe& p, const std::string& source) {
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.name.rfind(source + ":", 0), 0u) << c.name;
    EXPECT_GT(c.name.size(), source.size() + 1) << c.name;
    EXPECT_FALSE(c.unit.empty()) << c.name;
    EXPECT_EQ(c.name.find(' '), std::string::npos) << c.name;
  }
}

}  // namespace reveal::testing
