#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "reveal/ingest.h"

namespace reveal {
namespace {

std::string error_of(std::string_view text, const std::string& host = "") {
  ImportOptions opt;
  opt.host = host;
  try {
    import_reveal_table({"t.txt", text}, opt);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

const char* kTwoHosts =
    "Time  Perf:Branches.nserver07[count]  Turbostat:Avg_MHz.3.nserver07[MHz]  Memory:CommitLimit.nserver08[kB]\n"
    "1700000000  100  2400.5  5\n"
    "1700000001  nan  2401    6\n";

TEST(RevealTableImport, OneHostPerStoreWithTimeColumn) {
  ImportOptions opt;
  opt.host = "nserver07";
  const Recording r = import_reveal_table({"t.txt", kTwoHosts}, opt);
  ASSERT_EQ(r.channels.size(), 2u);
  EXPECT_EQ(r.channels[0].name, "Perf:Branches");
  EXPECT_EQ(r.channels[0].unit, "count");
  EXPECT_EQ(r.channels[0].subsystem, Subsystem::cpu);
  EXPECT_EQ(r.channels[1].name, "Turbostat:Avg_MHz.3");
  EXPECT_EQ(r.channels[1].unit, "MHz");
  EXPECT_EQ(r.t_unix_ns[1], 1'700'000'001'000'000'000);
  EXPECT_TRUE(std::isnan(r.values(1, 0)));
  EXPECT_EQ(r.values(0, 1), 2400.5);
  EXPECT_EQ(r.meta.hostname, "nserver07");

  opt.host = "nserver08";
  const Recording m = import_reveal_table({"t.txt", kTwoHosts}, opt);
  ASSERT_EQ(m.channels.size(), 1u);
  EXPECT_EQ(m.channels[0].subsystem, Subsystem::memory);
  EXPECT_EQ(m.values(1, 0), 6);
}

TEST(RevealTableImport, WithoutTimeColumnRowsAreSpacedByTheInterval) {
  ImportOptions opt;
  opt.start_unix_ns = 1'000'000'000;
  opt.interval_s = 2;
  const Recording r = import_reveal_table({"t.txt", "Perf:Cycles.n1[count]\t Memory:MemFree.n1[kB]\n1 2\n3 4\n"}, opt);
  EXPECT_EQ(r.t_unix_ns[1], 3'000'000'000);
  EXPECT_EQ(r.values(1, 1), 4);
  EXPECT_EQ(r.meta.hostname, "n1");
}

TEST(RevealTableImport, MalformedInputNamesFileLineAndColumn) {
  EXPECT_EQ(error_of(""), "t.txt:1:1: no header line (empty input)");
  EXPECT_EQ(error_of(kTwoHosts), "t.txt:1:1: columns of 2 hosts (nserver07, nserver08): choose one with --host");
  EXPECT_EQ(error_of(kTwoHosts, "nserver09"), "t.txt:1:1: no column of host 'nserver09'");
  EXPECT_EQ(error_of("Time Perf:Cycles.n1[count] Cycles\n1 2 3\n"),
            "t.txt:1:28: 'Cycles' is not a <Source>:<Field>[.<idx>].<host>[<unit>] column");
  EXPECT_EQ(error_of("Time Perf:Cycles.n1[count] Perf:Cycles.n1[count]\n1 2 3\n"),
            "t.txt:1:28: duplicate column 'Perf:Cycles.n1[count]'");
  EXPECT_EQ(error_of("Time Perf:Cycles.n1[count]\n1 2\n2 x\n"), "t.txt:3:3: 'x' is not a number (column 'Perf:Cycles.n1[count]')");
  EXPECT_EQ(error_of("Time Perf:Cycles.n1[count]\n1 2\n2\n"), "t.txt:3:2: 1 fields, the header has 2");
  EXPECT_EQ(error_of("Time Perf:Cycles.n1[count]\n2 2\n1 2\n"), "t.txt:3:1: time '1' is not after the previous row's");
  EXPECT_EQ(error_of("Time Perf:Cycles.n1[count]\n2 2\nlater 2\n"), "t.txt:3:1: 'later' is not a time like the first row's");
  EXPECT_EQ(error_of("Time Perf:Cycles.n1[count]\n"), "t.txt:2:1: no data rows after the header");
  EXPECT_EQ(error_of("Time\n1\n"), "t.txt:1:1: no <Source>:<Field>.<host>[<unit>] column");
}

}  // namespace
}  // namespace reveal
