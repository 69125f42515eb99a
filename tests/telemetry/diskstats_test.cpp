#include "telemetry/procfs/diskstats.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(ProcDiskstatsProbe, VmFixtureSkipsLoopDevices) {
  ProcDiskstatsProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  // vda and zram0 with 17 fields each (kernel 5.5+); loop0..7 skipped.
  ASSERT_EQ(p.channels().size(), 2u * 17);
  auto n = names(p);
  EXPECT_EQ(n[0], "proc.diskstats:reads_completed.vda");
  EXPECT_EQ(n[16], "proc.diskstats:flush_time_ms.vda");
  EXPECT_EQ(n[17], "proc.diskstats:reads_completed.zram0");
  for (const auto& name : n) EXPECT_EQ(name.find("loop"), std::string::npos) << name;
  expect_names_follow_rule(p, "proc.diskstats");
  EXPECT_EQ(info(p, "proc.diskstats:sectors_read.vda").unit, "sectors");
  EXPECT_EQ(info(p, "proc.diskstats:read_time_ms.vda").unit, "ms");
  EXPECT_EQ(info(p, "proc.diskstats:reads_completed.vda").unit, "count");
  EXPECT_EQ(info(p, "proc.diskstats:reads_completed.vda").kind, Kind::counter);
  EXPECT_EQ(info(p, "proc.diskstats:ios_in_progress.vda").kind, Kind::gauge);
  EXPECT_EQ(info(p, "proc.diskstats:io_time_ms.vda").subsystem, Subsystem::storage);
  // The kernel prints the times as unsigned ints (%u), the counts as unsigned longs.
  for (const char* f : {"read_time_ms", "write_time_ms", "io_time_ms", "weighted_io_time_ms", "discard_time_ms",
                        "flush_time_ms"})
    EXPECT_EQ(info(p, std::string("proc.diskstats:") + f + ".vda").counter_bits, 32) << f;
  EXPECT_EQ(info(p, "proc.diskstats:sectors_read.vda").counter_bits, 64);
  EXPECT_EQ(info(p, "proc.diskstats:reads_completed.vda").counter_bits, 64);
  // zram is compressed RAM (swap, usually): memory, not storage.
  EXPECT_EQ(info(p, "proc.diskstats:io_time_ms.zram0").subsystem, Subsystem::memory);
  EXPECT_EQ(info(p, "proc.diskstats:sectors_written.zram0").subsystem, Subsystem::memory);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.diskstats:reads_completed.vda"), 32739);
  EXPECT_EQ(value(p, v, "proc.diskstats:sectors_read.vda"), 3500050);
  EXPECT_EQ(value(p, v, "proc.diskstats:sectors_written.vda"), 3391152);
  EXPECT_EQ(value(p, v, "proc.diskstats:weighted_io_time_ms.vda"), 42381);
  EXPECT_EQ(value(p, v, "proc.diskstats:sectors_discarded.vda"), 865072);
  EXPECT_EQ(value(p, v, "proc.diskstats:flush_completed.vda"), 4090);
  EXPECT_EQ(value(p, v, "proc.diskstats:flush_time_ms.vda"), 2063);
  EXPECT_TRUE(all_finite(v));
}

TEST(ProcDiskstatsProbe, OldAndNewKernelLayouts) {
  ProcDiskstatsProbe p;
  ASSERT_TRUE(p.open(fixture("edge-extra-columns")).available);
  auto n = names(p);
  // nvme0n1: 18 values (one beyond 5.5's 17, ignored); sda: 14-field line (11 values).
  ASSERT_EQ(n.size(), 17u + 11);
  EXPECT_EQ(n[17], "proc.diskstats:reads_completed.sda");
  EXPECT_EQ(n.back(), "proc.diskstats:weighted_io_time_ms.sda");
  for (const auto& name : n) EXPECT_EQ(name.find("ram0"), std::string::npos) << name;
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.diskstats:flush_time_ms.nvme0n1"), 12);
  EXPECT_EQ(value(p, v, "proc.diskstats:ios_in_progress.nvme0n1"), 1);
  EXPECT_EQ(value(p, v, "proc.diskstats:sectors_written.sda"), 320);
}

// Kernels before 2.6.25 list partitions with 4 fields (reads, sectors read, writes, sectors
// written): kept as those four channels, not dropped; a line of another shape is skipped.
TEST(ProcDiskstatsProbe, OldKernelsFourFieldPartitionLines) {
  TempRoot root("edge-extra-columns");
  root.write("proc/diskstats",
             "   8    0 sda 100 2 3000 40 50 6 7000 80 0 90 120\n"
             "   8    1 sda1 11 2200 33 4400\n"
             "   8    2 sda2 1 2 3\n");
  ProcDiskstatsProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  auto n = names(p);
  ASSERT_EQ(n.size(), 11u + 4);
  EXPECT_EQ(std::vector<std::string>(n.begin() + 11, n.end()),
            (std::vector<std::string>{"proc.diskstats:reads_completed.sda1", "proc.diskstats:sectors_read.sda1",
                                      "proc.diskstats:writes_completed.sda1", "proc.diskstats:sectors_written.sda1"}));
  EXPECT_EQ(info(p, "proc.diskstats:sectors_read.sda1").unit, "sectors");
  const auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.diskstats:reads_completed.sda1"), 11);
  EXPECT_EQ(value(p, v, "proc.diskstats:sectors_read.sda1"), 2200);
  EXPECT_EQ(value(p, v, "proc.diskstats:writes_completed.sda1"), 33);
  EXPECT_EQ(value(p, v, "proc.diskstats:sectors_written.sda1"), 4400);
  EXPECT_EQ(value(p, v, "proc.diskstats:sectors_written.sda"), 7000);
}

TEST(ProcDiskstatsProbe, DeviceGoneThenBack) {
  TempRoot root("edge-extra-columns");
  ProcDiskstatsProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.write("proc/diskstats", "   8       0 sda 11 0 161 5 21 0 321 6 0 7 12\n");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.diskstats:reads_completed.sda"), 11);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.diskstats:reads_completed.nvme0n1")));
  root.remove("proc/diskstats");
  EXPECT_TRUE(all_nan(sample(p)));
  root.write(
      "proc/diskstats",
      " 259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n 8 0 sda 1 1 1 1 1 1 1 1 1 1 "
      "1\n");
  v = sample(p);
  EXPECT_EQ(value(p, v, "proc.diskstats:flush_time_ms.nvme0n1"), 17);
  EXPECT_EQ(value(p, v, "proc.diskstats:io_time_ms.sda"), 1);
}

}  // namespace
}  // namespace reveal::telemetry
