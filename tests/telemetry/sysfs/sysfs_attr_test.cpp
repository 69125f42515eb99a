#include "telemetry/sysfs/sysfs_attr.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>

#include "../probe_test_util.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(SysfsAttr, ReadsTrimmedValueAndNumbers) {
  TempRoot root("host-2socket");
  root.write("a", "  up\n");
  root.write("big", "18446744073709551615\n");
  root.write("neg", "-1\n");
  root.write("bad", "12abc\n");
  SysfsAttr a, big, neg, bad;
  ASSERT_EQ(a.open(root.path() / "a"), 0);
  ASSERT_EQ(big.open(root.path() / "big"), 0);
  ASSERT_EQ(neg.open(root.path() / "neg"), 0);
  ASSERT_EQ(bad.open(root.path() / "bad"), 0);
  EXPECT_EQ(a.read().value_or("?"), "up");
  EXPECT_EQ(big.read_number(), 18446744073709551615.0);
  EXPECT_EQ(neg.read_number(), -1);
  EXPECT_EQ(neg.read_number(1000), -0.001);
  EXPECT_TRUE(std::isnan(bad.read_number()));
  EXPECT_TRUE(std::isnan(a.read_number()));
}

TEST(SysfsAttr, OpenErrorsAreErrnos) {
  SysfsAttr a;
  EXPECT_EQ(a.open("/nonexistent/reveal/attr"), ENOENT);
  EXPECT_FALSE(a.read());
}

TEST(SysfsAttr, TooLongContentIsAGap) {
  TempRoot root("host-2socket");
  root.write("long", std::string(SysfsAttr::kCapacity, '1'));
  SysfsAttr a;
  ASSERT_EQ(a.open(root.path() / "long"), 0);
  EXPECT_FALSE(a.read());
}

// An attribute that exists but cannot be read now (EINVAL for a down link's speed; here a
// directory, EISDIR) keeps its fd and reads once it can be read.
TEST(SysfsAttr, ReadFailureRecovers) {
  TempRoot root("host-2socket");
  std::filesystem::create_directories(root.path() / "speed");
  SysfsAttr a;
  ASSERT_EQ(a.open(root.path() / "speed"), 0);
  EXPECT_FALSE(a.read());
  root.remove("speed");
  EXPECT_FALSE(a.read());
  root.write("speed", "10000\n");
  EXPECT_EQ(a.read_number(), 10000);
}

// A faulty sensor's failed read (here a directory in its place, EISDIR; on hosts EIO, ENODATA)
// and content too long for an attribute are counted for the probe's error count; an attribute
// that is gone is not.
TEST(SysfsAttr, FailedReadsAreCountedGoneOnesAreNot) {
  TempRoot root("host-2socket");
  std::filesystem::create_directories(root.path() / "temp1_input");
  root.write("long", std::string(SysfsAttr::kCapacity, '1'));
  root.write("gone", "1\n");
  SysfsAttr dir, lng, gone;
  ASSERT_EQ(dir.open(root.path() / "temp1_input"), 0);
  ASSERT_EQ(lng.open(root.path() / "long"), 0);
  ASSERT_EQ(gone.open(root.path() / "gone"), 0);
  root.remove("gone");
  const std::uint64_t before = read_failures_on_this_thread();
  EXPECT_FALSE(gone.read());
  EXPECT_FALSE(gone.read());
  EXPECT_EQ(read_failures_on_this_thread(), before) << "gone: not a failure";
  EXPECT_FALSE(dir.read());
  EXPECT_EQ(errno, EISDIR) << "errno kept";
  EXPECT_EQ(read_failures_on_this_thread(), before + 1);
  EXPECT_FALSE(lng.read());
  EXPECT_EQ(read_failures_on_this_thread(), before + 2);
}

// A live attribute answering EINVAL (carrier of an interface that is administratively down)
// keeps its fd: no open(2) per tick while the link stays down.
TEST(SysfsAttr, EinvalKeepsTheFd) {
  auto open_fds = [] {
    std::size_t n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd");
         it != std::filesystem::directory_iterator(); ++it)
      ++n;
    return n;
  };
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/sys/class/net", ec), end; !ec && it != end; it.increment(ec)) {
    SysfsAttr a;
    if (a.open(it->path() / "carrier") != 0 || !a.keeps_fd()) continue;
    const std::size_t before = open_fds();
    if (a.read()) continue;  // readable: the interface is up
    if (errno != EINVAL) continue;
    EXPECT_EQ(open_fds(), before) << it->path();
    EXPECT_FALSE(a.read());
    EXPECT_EQ(open_fds(), before) << it->path();
    return;
  }
  GTEST_SKIP() << "no administratively down interface here";
}

TEST(SysfsAttr, UnlinkedFileIsAGapUntilItReturns) {
  TempRoot root("host-2socket");
  root.write("v", "1\n");
  SysfsAttr a;
  ASSERT_EQ(a.open(root.path() / "v"), 0);
  EXPECT_EQ(a.read_number(), 1);
  root.remove("v");
  EXPECT_TRUE(std::isnan(a.read_number()));
  root.write("v", "2\n");
  EXPECT_EQ(a.read_number(), 2);
}

// Past half the RLIMIT_NOFILE soft limit, attributes stop keeping fds and open per read.
TEST(SysfsAttr, FdBudgetFollowsRlimit) {
  TempRoot root("host-2socket");
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  std::size_t open_now = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd");
       it != std::filesystem::directory_iterator(); ++it)
    ++open_now;
  struct rlimit low = saved;
  low.rlim_cur = 2 * (open_now + 8);  // budget: open_now + 8 kept fds (none kept now)
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<SysfsAttr> attrs(open_now + 20);
  std::size_t kept = 0;
  for (auto& a : attrs) {
    ASSERT_EQ(a.open(root.path() / "sys/class/net/eth0/mtu"), 0);
    kept += a.keeps_fd();
  }
  EXPECT_EQ(kept, open_now + 8);
  for (auto& a : attrs) EXPECT_EQ(a.read_number(), 9000);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  attrs.clear();
  SysfsAttr again;  // slots were released with their attributes
  ASSERT_EQ(again.open(root.path() / "sys/class/net/eth0/mtu"), 0);
  EXPECT_TRUE(again.keeps_fd());
}

TEST(SysfsHelpers, NumberedEntriesSortNumericallyAndFollowSymlinks) {
  TempRoot root("host-2socket");
  root.write("d/real/hwmon10/name", "x\n");
  root.write("d/real/hwmon2/name", "y\n");
  root.write("d/cls/hwmon1x", "not numbered\n");
  root.write("d/cls/hwmon3", "a file, not a directory\n");
  std::filesystem::create_directory_symlink("../real/hwmon10", root.path() / "d/cls/hwmon10");
  std::filesystem::create_directory_symlink("../real/hwmon2", root.path() / "d/cls/hwmon2");
  const auto e = numbered_entries(root.path() / "d/cls", "hwmon");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].name, "hwmon2");
  EXPECT_EQ(e[1].name, "hwmon10");
  EXPECT_EQ(e[1].number, 10u);
  EXPECT_EQ(numbered_entries(root.path() / "d/cls", "hwmon", false).size(), 3u);
  EXPECT_TRUE(numbered_entries(root.path() / "nonexistent", "hwmon").empty());
}

TEST(SysfsHelpers, SanitizeAndUnique) {
  EXPECT_EQ(sanitize_index("Package id 0"), "Package_id_0");
  EXPECT_EQ(sanitize_index("in0 1.8V:x"), "in0_1_8V_x");
  EXPECT_EQ(sanitize_index("+12V"), "+12V");
  EXPECT_EQ(sanitize_index(""), "_");
  std::vector<std::string> v{"coretemp", "nvme", "coretemp", "coretemp_1", "acpitz"};
  make_unique_names(v);
  EXPECT_EQ(v, (std::vector<std::string>{"coretemp_0", "nvme", "coretemp_2", "coretemp_1",
                                         "acpitz"}));
}

TEST(SysfsHelpers, ReadText) {
  EXPECT_EQ(read_text(fixture("host-2socket") / "sys/class/hwmon/hwmon0/temp1_label"),
            "Package id 0");
  EXPECT_FALSE(read_text(fixture("host-2socket") / "nonexistent"));
}

}  // namespace
}  // namespace reveal::telemetry
