#include "util/replace_target.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace reveal {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path p;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "replace-target-XXXXXX").string();
    p = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(p); }
};

TEST(ReplaceTarget, FollowsLinksHopByHopFromRealDirectories) {
  TempDir d;
  fs::create_directories(d.p / "real" / "sub");
  std::fclose(std::fopen((d.p / "real" / "file").c_str(), "w"));
  fs::create_symlink("real/sub", d.p / "linkdir");
  fs::create_symlink("real/file", d.p / "hop2");
  fs::create_symlink("hop2", d.p / "hop1");
  fs::create_symlink("missing/../new", d.p / "dangling");
  const fs::path real = fs::canonical(d.p);
  EXPECT_EQ(replace_target(d.p / "plain"), real / "plain");              // a new file
  EXPECT_EQ(replace_target(d.p / "hop1"), real / "real" / "file");       // two links
  EXPECT_EQ(replace_target(d.p / "linkdir" / ".." / "x"), real / "real" / "x");  // not d.p / "x"
  EXPECT_THROW(replace_target(d.p / "dangling"), fs::filesystem_error);  // its directory is missing
  EXPECT_THROW(replace_target(d.p / "no" / "dir" / "x"), fs::filesystem_error);
}

TEST(ReplaceTarget, DevProcAndLoops) {
  TempDir d;
  fs::create_symlink("/dev/null", d.p / "to-null");
  fs::create_symlink("loop-b", d.p / "loop-a");
  fs::create_symlink("loop-a", d.p / "loop-b");
  EXPECT_FALSE(replace_target("/dev/null").has_value());
  EXPECT_FALSE(replace_target("/proc/self/fd/1").has_value());
  EXPECT_FALSE(replace_target(d.p / "to-null").has_value());
  EXPECT_THROW(replace_target(d.p / "loop-a"), fs::filesystem_error);
}

}  // namespace
}  // namespace reveal
