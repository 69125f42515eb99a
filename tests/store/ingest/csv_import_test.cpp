#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "reveal/ingest.h"

namespace reveal {
namespace {

Recording csv(std::string_view text, const ImportOptions& opt = {}) { return import_wide_csv({"in.csv", text}, opt); }

// The ImportError message of importing `text` with --strict, "" when it imports.
std::string csv_error(std::string_view text) {
  try {
    ImportOptions strict;
    strict.strict = true;
    csv(text, strict);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

TEST(CsvImport, ExportFormKeepsNamesTimesValuesAndGaps) {
  const Recording r = csv(
      "t_unix_ns,t_s,proc.stat:user,\"odd,name:x\",nvml:power_usage.gpu0\n"
      "1700000000000000000,0.000,10,1.5,\n"
      "1700000001000000000,1.000,12,-2e3,250.25\r\n");
  ASSERT_EQ(r.channels.size(), 3u);
  EXPECT_EQ(r.channels[0].name, "proc.stat:user");
  EXPECT_EQ(r.channels[1].name, "odd,name:x");
  EXPECT_EQ(r.channels[0].subsystem, Subsystem::cpu);
  EXPECT_EQ(r.channels[2].subsystem, Subsystem::gpu);
  EXPECT_EQ(r.channels[0].kind, Kind::gauge);
  ASSERT_EQ(r.t_unix_ns.size(), 2u);
  EXPECT_EQ(r.t_unix_ns[1], 1'700'000'001'000'000'000);
  EXPECT_EQ(r.values(1, 0), 12);
  EXPECT_EQ(r.values(1, 1), -2000);
  EXPECT_TRUE(std::isnan(r.values(0, 2)));
  EXPECT_EQ(r.values(1, 2), 250.25);
  EXPECT_EQ(r.meta.start_unix_ns, r.t_unix_ns[0]);
  EXPECT_EQ(r.meta.end_unix_ns, r.t_unix_ns[1]);
  EXPECT_DOUBLE_EQ(r.meta.interval_s, 1.0);
  EXPECT_EQ(r.meta.hostname, "in");
  EXPECT_EQ(r.meta.command, "reveal import csv in.csv");
  ASSERT_EQ(r.meta.probes.size(), 1u);
  EXPECT_EQ(r.meta.probes[0].name, "import.csv");
}

TEST(CsvImport, PlainFormTimestampsInSecondsNanosecondsAndIso) {
  Recording s = csv("time,load avg,mem_used\n1700000000,1,2\n1700000000.5,3,NaN\n");
  EXPECT_EQ(s.channels[0].name, "csv:load_avg");
  EXPECT_EQ(s.channels[1].subsystem, Subsystem::memory);
  EXPECT_EQ(s.t_unix_ns[1], 1'700'000'000'500'000'000);
  EXPECT_TRUE(std::isnan(s.values(1, 1)));
  EXPECT_DOUBLE_EQ(s.meta.interval_s, 0.5);

  Recording ns = csv("ts,a\n1700000000000000000,1\n1700000002000000000,2\n");
  EXPECT_EQ(ns.t_unix_ns[1], 1'700'000'002'000'000'000);
  Recording ms = csv("ts,a\n1700000000000,1\n1700000000250,2\n");
  EXPECT_EQ(ms.t_unix_ns[1], 1'700'000'000'250'000'000);

  Recording iso = csv("\xEF\xBB\xBFwhen,a\n2024-01-31T12:00:00Z,1\n2024-01-31 12:00:01.5,2\n");
  EXPECT_EQ(iso.t_unix_ns[0], 1'706'702'400'000'000'000);
  EXPECT_EQ(iso.t_unix_ns[1], 1'706'702'401'500'000'000);
}

TEST(CsvImport, NonAsciiColumnNamesStayDistinctAndInvalidBytesBecomeUnderscores) {
  const Recording r = csv("time,temp\xC3\xA9,temp\xC3\xBC,\xE6\xB8\xA9\xE5\xBA\xA6 gpu,bad\xFF\xC3(\n1700000000,1,2,3,4\n");
  ASSERT_EQ(r.channels.size(), 4u);
  EXPECT_EQ(r.channels[0].name, "csv:temp\xC3\xA9");          // é
  EXPECT_EQ(r.channels[1].name, "csv:temp\xC3\xBC");          // ü
  EXPECT_EQ(r.channels[2].name, "csv:\xE6\xB8\xA9\xE5\xBA\xA6_gpu");  // 温度 gpu
  EXPECT_EQ(r.channels[3].name, "csv:bad___");                 // an invalid byte, a cut sequence, '('
  // Overlong and surrogate encodings are not characters either.
  EXPECT_EQ(csv("time,a\xC0\xAF,b\xED\xA0\x80\n1,1,1\n").channels[0].name, "csv:a__");
  EXPECT_EQ(csv("time,a\xC0\xAF,b\xED\xA0\x80\n1,1,1\n").channels[1].name, "csv:b___");
}

TEST(CsvImport, MalformedInputNamesFileLineAndColumn) {
  EXPECT_EQ(csv_error(""), "in.csv:1:1: no header line (empty input)");
  EXPECT_EQ(csv_error("t,a\n"), "in.csv:2:1: no data rows after the header");
  EXPECT_EQ(csv_error("t\n1\n"), "in.csv:1:1: a header needs a time column and at least one value column");
  EXPECT_EQ(csv_error("t,a,a\n1,2,3\n"), "in.csv:1:5: duplicate column 'csv:a'");
  EXPECT_EQ(csv_error("t,a,\n1,2,3\n"), "in.csv:1:5: empty column name");
  EXPECT_EQ(csv_error("t,a,b\n1,2,3\n2,4x,5\n"), "in.csv:3:3: '4x' is not a number (column 'a')");
  EXPECT_EQ(csv_error("t,a,b\n1,2,3\n2,4\n"), "in.csv:3:4: 2 fields, the header has 3");
  EXPECT_EQ(csv_error("t,a,b\n1,2,3\n2,4,5,6\n"), "in.csv:3:7: 4 fields, the header has 3");
  EXPECT_EQ(csv_error("t,a\n2,1\n1,1\n"), "in.csv:3:1: time '1' is not after the previous row's");
  EXPECT_EQ(csv_error("t,a\n2,1\n2,1\n"), "in.csv:3:1: time '2' is not after the previous row's");
  EXPECT_EQ(csv_error("t,a\n2024-01-31T12:00:00Z,1\n17,1\n"),
            "in.csv:3:1: '17' is not an ISO-8601 UTC time like the first row's");
  EXPECT_EQ(csv_error("t_unix_ns,t_s,a\n1.5,0,1\n"), "in.csv:2:1: '1.5' is not a time in unix nanoseconds");
  EXPECT_EQ(csv_error("t,a\n1,inf\n"), "in.csv:2:3: 'inf' is not a number (column 'a')");
  EXPECT_EQ(csv_error("t,\"a\n1,2\n"), "in.csv:1:3: unterminated quoted field");
  EXPECT_EQ(csv_error("t,\"a\"b\n1,2\n"), "in.csv:1:6: text after a closing quote");
  EXPECT_EQ(csv_error("t,a\n99999999999999999999,1\n"), "in.csv:2:1: '99999999999999999999' is not a unix time like the first row's");
}

// Without --strict, what real logs contain does not throw the file away: bad values are gaps,
// ragged rows and unreadable times are skipped, a repeated time keeps the later row, rows whose
// time went back are dropped and the step is an event; all counted, the first of each named.
TEST(CsvImport, LenientImportCountsWhatItLetThrough) {
  ImportNotes notes;
  ImportOptions opt;
  opt.notes = &notes;
  const Recording r = csv(
      "t,a,b\n"
      "10,1,inf\n"           // line 2: inf -> gap
      "11,N/A,2\n"           // line 3: N/A -> gap
      "12,3\n"               // line 4: ragged, skipped
      "13,4,[Unknown Error]\n"  // line 5: gap
      "13,5,6\n"             // line 6: same time, replaces line 5
      "x,7,7\n"              // line 7: unreadable time, skipped
      "9,8,8\n"              // line 8: went back 4 s: dropped, a clock step
      "12,9,9\n"             // line 9: still before 13: dropped, same step
      "14,10,-inf\n",        // line 10: kept; -inf -> gap
      opt);
  ASSERT_EQ(r.t_unix_ns.size(), 4u);
  EXPECT_EQ(r.t_unix_ns[2], 13'000'000'000);
  EXPECT_EQ(r.t_unix_ns[3], 14'000'000'000);
  EXPECT_EQ(r.values(0, 0), 1);
  EXPECT_TRUE(std::isnan(r.values(0, 1)));
  EXPECT_TRUE(std::isnan(r.values(1, 0)));
  EXPECT_EQ(r.values(2, 0), 5) << "the later row at 13 s";
  EXPECT_EQ(r.values(2, 1), 6);
  EXPECT_EQ(r.values(3, 0), 10);
  EXPECT_TRUE(std::isnan(r.values(3, 1)));
  EXPECT_EQ(notes.gap_values, 4u);
  EXPECT_EQ(notes.first_gap, "in.csv:2:6: 'inf' is not a number (column 'b')");
  EXPECT_EQ(notes.ragged_rows, 1u);
  EXPECT_EQ(notes.first_ragged, "in.csv:4:5: 2 fields, the header has 3");
  EXPECT_EQ(notes.bad_time_rows, 1u);
  EXPECT_EQ(notes.duplicate_times, 1u);
  EXPECT_EQ(notes.backward_rows, 2u);
  EXPECT_EQ(notes.clock_steps, 1u);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, "clock_step");
  EXPECT_EQ(r.events[0].t_unix_ns, 13'000'000'000);
  EXPECT_DOUBLE_EQ(r.events[0].value, -4.0);
  const std::string line = notes.summary();
  EXPECT_NE(line.find("4 values became gaps (first: in.csv:2:6:"), std::string::npos) << line;
  EXPECT_NE(line.find("1 clock step"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(ImportNotes{}.summary(), "");
  // Nothing readable at all is still an error.
  EXPECT_THROW(csv("t,a\nx,1\n", opt), ImportError);
}

TEST(ImportSubsystem, GuessesConservatively) {
  EXPECT_EQ(guess_subsystem("proc.meminfo:MemFree"), Subsystem::memory);
  EXPECT_EQ(guess_subsystem("proc.net.dev:rx_bytes.eth0"), Subsystem::network);
  EXPECT_EQ(guess_subsystem("sys.rapl:energy_uj.package-0"), Subsystem::power_thermal);
  EXPECT_EQ(guess_subsystem("sys.cpuidle:time.cpu0.C1"), Subsystem::cpu);
  EXPECT_EQ(guess_subsystem("sys.cpufreq:scaling_cur_freq_min"), Subsystem::power_thermal);  // as the probe says
  EXPECT_EQ(guess_subsystem("proc.diskstats:sectors_written.vda"), Subsystem::storage);
  EXPECT_EQ(guess_subsystem("proc.diskstats:sectors_written.zram0"), Subsystem::memory);  // as the probe says
  EXPECT_EQ(guess_subsystem("reveal.sampler:delay_seconds"), Subsystem::cpu);
  EXPECT_EQ(guess_subsystem("node_cpu_seconds_total"), Subsystem::cpu);
  EXPECT_EQ(guess_subsystem("node_disk_read_bytes_total"), Subsystem::storage);
  EXPECT_EQ(guess_subsystem("DCGM_FI_DEV_GPU_UTIL"), Subsystem::gpu);
  EXPECT_EQ(guess_subsystem("csv:eth1_fi"), Subsystem::network);
  EXPECT_EQ(guess_subsystem("csv:requests"), Subsystem::system);
  EXPECT_EQ(guess_subsystem("csv:cpuset_name"), Subsystem::system);  // a word, not "cpu<N>"
}

TEST(ImportChannels, AdoptsKnownChannelInfo) {
  Recording r = csv("t_unix_ns,t_s,proc.stat:user,other:x\n1,0,1,2\n");
  const std::vector<ChannelInfo> known{
      {"proc.stat:user", "ticks", Kind::counter, Subsystem::cpu, 64, "user time", 0}};
  EXPECT_EQ(adopt_channel_info(r, known), 1u);
  EXPECT_EQ(r.channels[0].kind, Kind::counter);
  EXPECT_EQ(r.channels[0].unit, "ticks");
  EXPECT_EQ(r.channels[1].kind, Kind::gauge);
}

}  // namespace
}  // namespace reveal
