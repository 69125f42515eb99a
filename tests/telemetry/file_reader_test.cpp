#include "telemetry/file_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using reveal::testing::TempRoot;

TEST(FileReader, ReadsWholeFileAndRereads) {
  TempRoot root("edge-missing");
  FileReader f;
  ASSERT_TRUE(f.open(root.path() / "proc/stat"));
  EXPECT_EQ(f.capacity(), FileReader::kMinCapacity);
  auto t = f.read();
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, "cpu  10 0 5 100 1 0 0 0 0 0\nctxt 42\nprocesses 7\n");
  root.write("proc/stat", "ctxt 43\n");  // same inode, rewritten in place
  t = f.read();
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, "ctxt 43\n");
}

TEST(FileReader, OpenFailureGivesReason) {
  FileReader f;
  std::string err;
  EXPECT_FALSE(f.open("/nonexistent/reveal/file", &err));
  EXPECT_NE(err.find("/nonexistent/reveal/file"), std::string::npos);
  EXPECT_NE(err.find("No such file"), std::string::npos) << err;
  EXPECT_FALSE(f.read());
}

TEST(FileReader, CapacityIsTwiceTheSizeSeen) {
  TempRoot root("edge-missing");
  root.write("big", std::string(10000, 'x'));
  FileReader f;
  ASSERT_TRUE(f.open(root.path() / "big"));
  EXPECT_EQ(f.capacity(), 20000u);
  ASSERT_TRUE(f.read());
  EXPECT_EQ(f.read()->size(), 10000u);
}

// A file that outgrows its buffer (a node's pods adding interfaces to /proc/net/dev) is read
// whole at once, the buffer grown 4x as often as needed; only kMaxCapacity or more is a gap.
TEST(FileReader, ContentOutgrowingTheBufferGrowsItAndIsReadWhole) {
  TempRoot root("edge-missing");
  root.write("f", "small\n");
  FileReader f;
  ASSERT_TRUE(f.open(root.path() / "f"));
  ASSERT_EQ(f.capacity(), FileReader::kMinCapacity);
  const std::uint64_t failures = read_failures_on_this_thread();
  const std::string big(FileReader::kMinCapacity, 'y');
  root.write("f", big);
  auto t = f.read();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->size(), big.size());
  EXPECT_EQ(f.capacity(), 4 * FileReader::kMinCapacity);
  const std::string bigger(17 * FileReader::kMinCapacity + 5, 'z');  // past 16 KiB and 64 KiB at once
  root.write("f", bigger);
  t = f.read();
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, bigger);
  EXPECT_EQ(f.capacity(), 64 * FileReader::kMinCapacity);
  EXPECT_EQ(read_failures_on_this_thread(), failures) << "read whole: no failure";
  root.write("f", std::string(FileReader::kMaxCapacity, 'w'));  // not a kernel statistics file
  EXPECT_FALSE(f.read());
  EXPECT_EQ(f.capacity(), FileReader::kMaxCapacity);
  EXPECT_EQ(read_failures_on_this_thread(), failures + 1);
  root.write("f", "small again\n");
  ASSERT_TRUE(f.read());
  EXPECT_EQ(*f.read(), "small again\n");
}

TEST(FileReader, VanishesAndComesBack) {
  TempRoot root("edge-missing");
  FileReader f;
  ASSERT_TRUE(f.open(root.path() / "proc/stat"));
  root.remove("proc/stat");
  EXPECT_FALSE(f.read());
  EXPECT_FALSE(f.read());
  root.write("proc/stat", "ctxt 1\n");
  auto t = f.read();
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, "ctxt 1\n");
  root.replace("proc/stat", "ctxt 2\n");  // new inode under the same name
  t = f.read();
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, "ctxt 2\n");
}

// A file that is gone is the host changing, not a failure; one that cannot be read where it
// stands (here: a directory in its place, EISDIR; on hosts EIO, EACCES) or that overflows the
// buffer is counted on the reading thread, for the sampler's per-probe error count.
TEST(FileReader, FailedReadsAreCountedGoneFilesAreNot) {
  TempRoot root("edge-missing");
  FileReader f;
  ASSERT_TRUE(f.open(root.path() / "proc/stat"));
  const std::uint64_t before = read_failures_on_this_thread();
  root.remove("proc/stat");
  EXPECT_FALSE(f.read());
  EXPECT_FALSE(f.read());
  EXPECT_EQ(read_failures_on_this_thread(), before) << "gone (ENOENT): not a failure";
  std::filesystem::create_directory(root.path() / "proc/stat");
  EXPECT_FALSE(f.read());
  EXPECT_EQ(read_failures_on_this_thread(), before + 1) << "a directory where the file was: a failure";
  std::filesystem::remove(root.path() / "proc/stat");
  root.write("proc/stat", "ctxt 1\n");
  EXPECT_TRUE(f.read());
  EXPECT_EQ(read_failures_on_this_thread(), before + 1);
  root.write("proc/stat", std::string(FileReader::kMaxCapacity, 'x'));  // overflows any buffer: a gap, counted
  EXPECT_FALSE(f.read());
  EXPECT_EQ(read_failures_on_this_thread(), before + 2);
  note_read_failure();
  EXPECT_EQ(read_failures_on_this_thread(), before + 3);
}

TEST(FileReader, ReadsProcfs) {
  FileReader f;
  ASSERT_TRUE(f.open("/proc/self/stat"));
  auto t = f.read();
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->empty());
}

TEST(FileReader, SmallerMinimumCapacityForBoundedFiles) {
  TempRoot root("edge-missing");
  root.write("small", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  FileReader f;
  ASSERT_TRUE(f.open(root.path() / "small", nullptr, 1024));
  EXPECT_EQ(f.capacity(), 1024u);
  root.write("mid", std::string(700, 'm'));
  ASSERT_TRUE(f.open(root.path() / "mid", nullptr, 1024));
  EXPECT_EQ(f.capacity(), 1400u);  // twice the size seen
  EXPECT_EQ(f.read()->size(), 700u);
  ASSERT_TRUE(f.open(root.path() / "small"));
  EXPECT_EQ(f.capacity(), FileReader::kMinCapacity);  // the default
}

TEST(FileReader, SingleRecordFileReadsWholeAndKeepsTheGapRule) {
  TempRoot root("edge-missing");
  root.write("f", "usage_usec 10\nuser_usec 4\n");
  FileReader f;
  ASSERT_TRUE(f.open(root.path() / "f"));
  f.set_single_record(true);
  EXPECT_EQ(*f.read(), "usage_usec 10\nuser_usec 4\n");
  const std::string almost(FileReader::kMinCapacity - 1, 'a');
  root.write("f", almost);
  EXPECT_EQ(f.read()->size(), almost.size());
  const std::string full(FileReader::kMinCapacity, 'b');
  root.write("f", full);
  EXPECT_EQ(*f.read(), full);  // filled the buffer: grown and read again, whole
  EXPECT_EQ(f.capacity(), 4 * FileReader::kMinCapacity);
  root.write("f", std::string(FileReader::kMaxCapacity, 'c'));
  EXPECT_FALSE(f.read());  // fills even the largest buffer: possibly truncated, a gap
  root.write("f", "usage_usec 11\n");
  EXPECT_EQ(*f.read(), "usage_usec 11\n");
}

// A cgroup interface file (cgroupfs, no unlink check): a removed cgroup reads nothing (ENODEV),
// and a cgroup made again under the same path reads again. Needs a writable cgroup v2 mount.
TEST(FileReader, RemovedCgroupReadsNothingThenComesBack) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path base;
  for (const char* m : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"})
    if (fs::exists(fs::path(m) / "cgroup.controllers", ec)) {
      base = m;
      break;
    }
  if (base.empty()) GTEST_SKIP() << "no cgroup v2 mount";
  const fs::path cg = base / ("reveal-file-reader-test-" + std::to_string(::getpid()));
  if (!fs::create_directory(cg, ec)) GTEST_SKIP() << "cannot create " << cg << ": " << ec.message();
  struct RemoveAtEnd {  // never leave a cgroup behind on the host, whatever fails
    fs::path p;
    ~RemoveAtEnd() {
      std::error_code e;
      fs::remove(p, e);
    }
  } guard{cg};
  FileReader f;
  ASSERT_TRUE(f.open(cg / "cpu.stat"));
  f.set_single_record(true);
  auto t = f.read();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->rfind("usage_usec ", 0), 0u) << *t;
  ASSERT_TRUE(fs::remove(cg, ec)) << ec.message();
  EXPECT_FALSE(f.read());
  EXPECT_FALSE(f.read());
  ASSERT_TRUE(fs::create_directory(cg, ec)) << ec.message();
  t = f.read();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->rfind("usage_usec ", 0), 0u) << *t;
}

TEST(FileReaderParse, LinesAndTokens) {
  std::string_view text = "a 1\n\nb  2 3";
  EXPECT_EQ(next_line(text), "a 1");
  EXPECT_EQ(next_line(text), "");
  std::string_view line = next_line(text);
  EXPECT_TRUE(text.empty());
  EXPECT_EQ(next_token(line), "b");
  EXPECT_EQ(next_token(line), "2");
  EXPECT_EQ(next_token(line), "3");
  EXPECT_EQ(next_token(line), "");
  EXPECT_EQ(trim("  x y \n"), "x y");
}

TEST(FileReaderParse, Numbers) {
  EXPECT_EQ(parse_u64("18446744073709551615"), 18446744073709551615ull);
  EXPECT_FALSE(parse_u64("18446744073709551616"));
  EXPECT_FALSE(parse_u64("-1"));
  EXPECT_FALSE(parse_u64("12kB"));
  EXPECT_FALSE(parse_u64(""));
  EXPECT_EQ(parse_i64("-1"), -1);
  EXPECT_EQ(parse_double("2.25"), 2.25);
  EXPECT_FALSE(parse_double("x"));
  std::string_view s = " 7 x";
  EXPECT_EQ(next_u64_as_double(s), 7.0);
  EXPECT_TRUE(std::isnan(next_u64_as_double(s)));
  EXPECT_TRUE(std::isnan(next_u64_as_double(s)));
}

// The in-line hot-path parsers must agree with parse_u64/parse_i64 (std::from_chars) on
// next_token, value for value (bit for bit: NaN or the same double) and in what they consume.
TEST(FileReaderParse, FastNumbersMatchFromChars) {
  std::vector<std::string> cases{
      "", " ", "0", "-0", "007", "42", "-1", "+1", "-", "--1", "1-", "12kB", "kB", "1.5", "0x10",
      "18446744073709551615", "18446744073709551616", "99999999999999999999999",
      "9223372036854775807", "9223372036854775808", "-9223372036854775808",
      "-9223372036854775809", " \t 5\n7", "5\r", "12 34", "1a 2", "-x 3", "\n", "  -17  x"};
  std::mt19937 rng(7);  // plus random strings over the characters that matter
  const std::string alphabet = "0123456789- \tk9";
  for (int i = 0; i < 5000; ++i) {
    std::string c(rng() % 24, ' ');
    for (char& ch : c) ch = alphabet[rng() % alphabet.size()];
    cases.push_back(c);
  }
  const auto same = [](double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
  };
  for (const auto& c : cases) {
    std::string_view ref_u = c, ref_i = c, fast_u = c, fast_i = c;
    const auto u = parse_u64(next_token(ref_u));
    const auto i = parse_i64(next_token(ref_i));
    EXPECT_TRUE(same(next_u64_as_double(fast_u), u ? static_cast<double>(*u) : std::nan("")))
        << '"' << c << '"';
    EXPECT_TRUE(same(next_i64_as_double(fast_i), i ? static_cast<double>(*i) : std::nan("")))
        << '"' << c << '"';
    EXPECT_EQ(fast_u.data(), ref_u.data()) << '"' << c << '"';
    EXPECT_EQ(fast_i.data(), ref_i.data()) << '"' << c << '"';
  }
}

TEST(FileReaderParse, CpuList) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("0\n"), std::vector<int>{0});
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a"));
}

TEST(FileReaderKeyIndex, FindsInOrderAndOutOfOrder) {
  KeyIndex k;
  k.add("a", 0, 2);
  k.add("b", 2);
  k.add("c", 3);
  EXPECT_EQ(k.find("a"), 0u);
  EXPECT_EQ(k.find("b"), 1u);
  EXPECT_EQ(k.find("c"), 2u);
  EXPECT_EQ(k.find("b"), 1u);
  EXPECT_EQ(k.find("zz"), KeyIndex::npos);
  EXPECT_EQ(k.find("a"), 0u);
  EXPECT_EQ(k[0].count, 2u);
  EXPECT_EQ(k[2].slot, 3u);
  EXPECT_EQ(k.key(1), "b");
}

TEST(FileReaderKeyIndex, MatchNextIsFindOfTheFirstTokenInOrder) {
  KeyIndex k;
  k.add("nr_free_pages", 0);
  k.add("nr_free", 1);
  k.add("pgfault", 2);
  std::string_view line = "nr_free_pages 12";
  EXPECT_EQ(k.match_next(line), 0u);
  EXPECT_EQ(line, " 12");                     // the key is consumed, the value left
  line = "nr_free_pages 3";                   // expected "nr_free": a longer key is no match
  EXPECT_EQ(k.match_next(line), KeyIndex::npos);
  EXPECT_EQ(line, "nr_free_pages 3");         // left alone on a miss
  line = "nr_fre 3";                          // a shorter one neither
  EXPECT_EQ(k.match_next(line), KeyIndex::npos);
  line = "nr_free\t3";
  EXPECT_EQ(k.match_next(line), 1u);
  line = "pgfault";                           // key alone at the end of the text
  EXPECT_EQ(k.match_next(line), 2u);
  EXPECT_EQ(line, "");
  line = "nr_free_pages 1";                   // past the last key: nothing expected
  EXPECT_EQ(k.match_next(line), KeyIndex::npos);
  EXPECT_EQ(k.find("nr_free"), 1u);           // find() moves the expectation on
  line = "pgfault 1";
  EXPECT_EQ(k.match_next(line), 2u);
  KeyIndex empty;
  EXPECT_EQ(empty.match_next(line), KeyIndex::npos);
}

TEST(FileReaderMisc, ChannelName) {
  EXPECT_EQ(channel_name("proc.stat", "user"), "proc.stat:user");
  EXPECT_EQ(channel_name("proc.stat", "user", "cpu3"), "proc.stat:user.cpu3");
  // An interface named with bytes that are not UTF-8 (the kernel allows any but '/' and NUL)
  EXPECT_EQ(channel_name("net.dev", "rx_bytes", "eth\xff"), "net.dev:rx_bytes.eth\\xff");
  EXPECT_NE(channel_name("net.dev", "rx_bytes", "eth\xfe"), channel_name("net.dev", "rx_bytes", "eth\xff"));
  EXPECT_EQ(channel_name("hwmon", "temp1_input", "\xc3\xa9t\xc3\xa9"), "hwmon:temp1_input.\xc3\xa9t\xc3\xa9");
}

}  // namespace
}  // namespace reveal::telemetry
