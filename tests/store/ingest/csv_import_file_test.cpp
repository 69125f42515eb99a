// `reveal import csv` streamed from a file into a store (import_wide_csv_file, issue #19): the
// same store as write_store(import_wide_csv(whole file)), the lines as split_lines() gives them
// whatever the block boundaries, errors that leave nothing behind.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "reveal/ingest.h"
#include "reveal/store.h"
#include "store/ingest/import_common.h"
#include "store/ingest/line_reader.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;

class CsvImportFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("reveal-csvfile-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path put(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  fs::path dir_;
};

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void expect_same_store(const Recording& a, const Recording& b) {
  EXPECT_EQ(a.meta.hostname, b.meta.hostname);
  EXPECT_EQ(a.meta.command, b.meta.command);
  EXPECT_EQ(a.meta.cores, b.meta.cores);
  EXPECT_EQ(a.meta.interval_s, b.meta.interval_s);
  EXPECT_EQ(a.meta.start_unix_ns, b.meta.start_unix_ns);
  EXPECT_EQ(a.meta.end_unix_ns, b.meta.end_unix_ns);
  ASSERT_EQ(a.meta.probes.size(), b.meta.probes.size());
  EXPECT_EQ(a.meta.probes[0].name, b.meta.probes[0].name);
  EXPECT_EQ(a.meta.probes[0].n_channels, b.meta.probes[0].n_channels);
  ASSERT_EQ(a.channels.size(), b.channels.size());
  for (std::size_t c = 0; c < a.channels.size(); ++c) {
    EXPECT_EQ(a.channels[c].name, b.channels[c].name);
    EXPECT_EQ(a.channels[c].unit, b.channels[c].unit);
    EXPECT_EQ(a.channels[c].kind, b.channels[c].kind);
    EXPECT_EQ(a.channels[c].subsystem, b.channels[c].subsystem);
  }
  ASSERT_EQ(a.t_unix_ns, b.t_unix_ns);
  for (std::size_t r = 0; r < a.t_unix_ns.size(); ++r)
    for (std::size_t c = 0; c < a.channels.size(); ++c)
      EXPECT_TRUE(same(a.values(r, c), b.values(r, c))) << r << "," << c;
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t e = 0; e < a.events.size(); ++e) {
    EXPECT_EQ(a.events[e].t_unix_ns, b.events[e].t_unix_ns);
    EXPECT_EQ(a.events[e].kind, b.events[e].kind);
    EXPECT_EQ(a.events[e].value, b.events[e].value);
  }
}

// Every lenient case at once: a BOM, CRLF, blank lines, quotes, a gap, a ragged row, a row at
// the previous time (replaces it), a clock step back (dropped rows, an event).
const char* kMessy =
    "\xEF\xBB\xBF\r\n"
    "time,\"a,b\",cpu_busy,proc.stat:user\r\n"
    "1700000000,1,2,3\n"
    "1700000001,1.5,,4\n"
    "\n"
    "1700000002,x,5,6\n"
    "1700000002,7,8,9\n"
    "1700000003,1,2\n"
    "1700000001,0,0,0\n"
    "1700000005,10,11,12";

TEST_F(CsvImportFileTest, TheStoreIsThatOfTheWholeFileImport) {
  const fs::path in = put("host-7.csv", kMessy);
  ImportNotes whole_notes, file_notes;
  ImportOptions o;
  o.notes = &whole_notes;
  const std::string text = kMessy;
  Recording whole = import_wide_csv({in.string(), text}, o);
  std::vector<ChannelInfo> known = {{"proc.stat:user", "ticks", Kind::counter, Subsystem::cpu}};
  const std::size_t adopted = adopt_channel_info(whole, known);
  whole.meta.cores = 8;
  write_store(dir_ / "whole.db", whole);
  o.notes = &file_notes;
  const CsvImported got = import_wide_csv_file(in.string(), dir_ / "file.db", o, known, 8);
  EXPECT_EQ(got.samples, 4u);  // +0, +1, +2 (its second row), +5
  EXPECT_EQ(got.channels, 3u);
  EXPECT_EQ(got.adopted, adopted);
  EXPECT_EQ(got.adopted, 1u);
  EXPECT_EQ(file_notes.summary(), whole_notes.summary());
  EXPECT_EQ(file_notes.duplicate_times, 1u);
  EXPECT_EQ(file_notes.clock_steps, 1u);
  const Recording a = load_recording(dir_ / "file.db"), b = load_recording(dir_ / "whole.db");
  expect_same_store(a, b);
  EXPECT_EQ(a.meta.hostname, "host-7");
  EXPECT_EQ(a.meta.interval_s, 1.0);
  EXPECT_EQ(a.channels[2].kind, Kind::counter);
  EXPECT_EQ(a.values(2, 0), 7);  // the later row at +2 s
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0].kind, "clock_step");
}

// Many rows over several 1-MiB blocks: lines split across blocks read whole.
TEST_F(CsvImportFileTest, RowsAcrossReadBlocksAreWhole) {
  std::mt19937_64 rng(7);
  std::string text = "t_unix_ns,t_s";
  for (int c = 0; c < 40; ++c) text += ",t:c" + std::to_string(c);
  text += "\n";
  for (int r = 0; r < 6000; ++r) {
    text += std::to_string(1'700'000'000'000'000'000 + std::int64_t(r) * 500'000'000) + "," + std::to_string(r * 0.5);
    for (int c = 0; c < 40; ++c) text += "," + std::to_string(double(rng() % 1000000) / 7.0);
    text += r % 3 ? "\n" : "\r\n";
  }
  ASSERT_GT(text.size(), 3u << 20);
  const fs::path in = put("big.csv", text);
  write_store(dir_ / "whole.db", import_wide_csv({in.string(), text}));
  const CsvImported got = import_wide_csv_file(in.string(), dir_ / "file.db");
  EXPECT_EQ(got.samples, 6000u);
  const Recording a = load_recording(dir_ / "file.db");
  expect_same_store(a, load_recording(dir_ / "whole.db"));
  EXPECT_EQ(a.meta.interval_s, 0.5);
  // The reader gives the lines split_lines() gives.
  importer::LineReader lines(in.string());
  const auto want = importer::split_lines(text);
  importer::Line l;
  std::size_t k = 0;
  while (lines.next(l)) {
    ASSERT_LT(k, want.size());
    EXPECT_EQ(l.text, want[k].text) << k;
    EXPECT_EQ(l.number, want[k].number);
    ++k;
  }
  EXPECT_EQ(k, want.size());
  EXPECT_EQ(lines.bytes_read(), text.size());
}

TEST_F(CsvImportFileTest, ErrorsLeaveNothingAndKeepAPreviousStore) {
  const fs::path out = dir_ / "out.db";
  import_wide_csv_file(put("ok.csv", "t,x\n1,2\n2,3\n").string(), out);
  const auto before = fs::last_write_time(out);
  const auto error = [&](const fs::path& in) -> std::string {
    try {
      import_wide_csv_file(in.string(), out);
    } catch (const ImportError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error(dir_ / "missing.csv"), (dir_ / "missing.csv").string() + ": cannot open: No such file or directory");
  EXPECT_EQ(error(dir_), dir_.string() + ": is a directory");
  const fs::path header_only = put("h.csv", "t,x\n\n");
  EXPECT_EQ(error(header_only), header_only.string() + ":3:1: no data rows after the header");
  const fs::path empty = put("e.csv", "");
  EXPECT_EQ(error(empty), empty.string() + ":1:1: no header line (empty input)");
  ImportOptions strict;
  strict.strict = true;
  const fs::path bad = put("bad.csv", "t,x\n1,2\n2,oops\n");
  EXPECT_THROW(import_wide_csv_file(bad.string(), out, strict), ImportError);
  // A line without an end past 64 MiB: one line, bounded.
  const fs::path endless = put("endless.csv", "t,x\n1," + std::string((64u << 20) + 10, '1'));
  EXPECT_EQ(error(endless), endless.string() + ":2:1: a line longer than 64 MiB");
  fs::remove(endless);
  // One that ends in the block after the limit is refused too.
  const fs::path longer = put("longer.csv", "t,x\n1," + std::string((64u << 20) + (600u << 10), '1') + "\n2,3\n");
  EXPECT_EQ(error(longer), longer.string() + ":2:1: a line longer than 64 MiB");
  fs::remove(longer);
  EXPECT_EQ(fs::last_write_time(out), before);
  EXPECT_EQ(load_recording(out).t_unix_ns.size(), 2u);
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().rfind(".reveal-import-", 0), std::string::npos) << e.path();
}

}  // namespace
}  // namespace reveal
