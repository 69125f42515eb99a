#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "reveal/ingest.h"

namespace reveal {
namespace {

std::size_t col(const Recording& r, const std::string& name) {
  for (std::size_t c = 0; c < r.channels.size(); ++c)
    if (r.channels[c].name == name) return c;
  ADD_FAILURE() << "no channel " << name;
  return 0;
}

std::string error_of(std::string_view text) {  // with --strict
  try {
    ImportOptions strict;
    strict.strict = true;
    import_nvidia_smi({"smi.csv", text}, strict);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

const char* kLog =
    "timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W], temperature.gpu, "
    "pstate, clocks_throttle_reasons.active, temperature.memory, enforced.power.limit [W]\n"
    "2024/01/31 12:00:00.123, 0, NVIDIA H200, 45 %, 1024 MiB, 250.50 W, 60, P0, 0x0000000000000000, 50, 700.00 W\n"
    "2024/01/31 12:00:00.127, 1, NVIDIA H200, 0 %, 0 MiB, [N/A], 35, P8, 0x0000000000000001, [N/A], 700.00 W\n"
    "2024/01/31 12:00:01.123, 0, NVIDIA H200, 50 %, 2048 MiB, 260.00 W, 61, P0, 0x0000000000000000, 51, 700.00 W\n"
    "2024/01/31 12:00:01.126, 1, NVIDIA H200, 1 %, 0 MiB, 70.25 W, 35, P8, 0x0000000000000000, 40, 700.00 W\n";

TEST(NvidiaSmiImport, OnePassPerSampleChannelsNamedLikeTheNvmlProbe) {
  const Recording r = import_nvidia_smi({"h200-smi.csv", kLog});
  ASSERT_EQ(r.t_unix_ns.size(), 2u);
  EXPECT_EQ(r.t_unix_ns[0], 1'706'702'400'123'000'000);
  EXPECT_EQ(r.t_unix_ns[1], 1'706'702'401'123'000'000);
  const std::size_t util1 = col(r, "nvml:utilization_gpu.gpu1");
  EXPECT_EQ(r.values(1, util1), 1);
  EXPECT_EQ(r.channels[util1].unit, "%");
  EXPECT_EQ(r.channels[util1].subsystem, Subsystem::gpu);
  const std::size_t mem0 = col(r, "nvml:memory_used.gpu0");
  EXPECT_EQ(r.channels[mem0].unit, "bytes");
  EXPECT_EQ(r.values(1, mem0), 2048.0 * 1024 * 1024);
  const std::size_t power1 = col(r, "nvml:power_usage.gpu1");
  EXPECT_EQ(r.channels[power1].subsystem, Subsystem::power_thermal);
  EXPECT_TRUE(std::isnan(r.values(0, power1)));
  EXPECT_EQ(r.values(1, power1), 70.25);
  EXPECT_EQ(r.values(0, col(r, "nvml:temperature_gpu.gpu0")), 60);
  const std::size_t pstate = col(r, "nvml:pstate.gpu1");
  EXPECT_EQ(r.channels[pstate].kind, Kind::state);
  EXPECT_EQ(r.values(0, pstate), 8);
  EXPECT_EQ(r.values(0, col(r, "nvml:enforced_power_limit.gpu0")), 700);
  const std::size_t tmem = col(r, "nvidia_smi:temperature_memory.gpu0");
  EXPECT_EQ(r.channels[tmem].subsystem, Subsystem::power_thermal);
  for (const auto& ch : r.channels) {
    EXPECT_EQ(ch.name.find("name"), std::string::npos) << ch.name;  // a label column
    EXPECT_EQ(ch.name.find("throttle"), std::string::npos) << ch.name;  // hex: not a number
    EXPECT_EQ(ch.name.find("index"), std::string::npos) << ch.name;
  }
  EXPECT_EQ(r.channels.size(), 2u * 7);
  EXPECT_EQ(r.meta.hostname, "h200-smi");
}

TEST(NvidiaSmiImport, NoUnitsAndNoIndex) {
  const Recording r = import_nvidia_smi(
      {"a.csv", "timestamp, utilization.gpu [%]\n2024/01/31 12:00:00.000, 5\n2024/01/31 12:00:00.500, 7\n"});
  EXPECT_EQ(r.values(1, col(r, "nvml:utilization_gpu.gpu0")), 7);
  EXPECT_DOUBLE_EQ(r.meta.interval_s, 0.5);
}

TEST(NvidiaSmiImport, MalformedInputNamesFileLineAndColumn) {
  EXPECT_EQ(error_of(""), "smi.csv:1:1: no header line (empty input)");
  EXPECT_EQ(error_of("index, utilization.gpu [%]\n0, 1\n"),
            "smi.csv:1:1: no timestamp column (query timestamp first: --query-gpu=timestamp,index,...)");
  EXPECT_EQ(error_of("timestamp, utilization.gpu [%]\n"), "smi.csv:2:1: no data rows after the header");
  EXPECT_EQ(error_of("timestamp, utilization.gpu [%]\n2024/01/31 12:00:00.000, 5 %, 3\n"),
            "smi.csv:2:31: 3 fields, the header has 2");
  EXPECT_EQ(error_of("timestamp, utilization.gpu [%]\n2024/01/31 12:00:00.000, 5 %\n2024/01/31 12:00:01.000, x %\n"),
            "smi.csv:3:26: 'x %' is not a number (utilization.gpu)");
  EXPECT_EQ(error_of("timestamp, utilization.gpu [%]\n2024/01/31 12:00:01.000, 5\n2024/01/31 12:00:00.000, 5\n"),
            "smi.csv:3:1: time '2024/01/31 12:00:00.000' is not after the previous sample's");
  EXPECT_EQ(error_of("timestamp, utilization.gpu [%]\nyesterday, 5\n"),
            "smi.csv:2:1: 'yesterday' is not a time like 2024/01/31 12:00:00.123");
  EXPECT_EQ(error_of("timestamp, index, utilization.gpu [%]\n2024/01/31 12:00:00.000, -1, 5\n"),
            "smi.csv:2:26: '-1' is not a GPU index");
  EXPECT_EQ(error_of("timestamp, name\n2024/01/31 12:00:00.000, H200\n"), "smi.csv:1:1: no numeric column to import");
}

// What real nvidia-smi logs hold does not throw the log away: "inf" and "[Unknown Error]" are
// gaps, a "GPU is lost" line is an event and that GPU's channels are gaps while its rows are
// missing, the other GPU's rows are kept.
TEST(NvidiaSmiImport, LenientImportKeepsTheOtherGpusWhenOneIsLost) {
  ImportNotes notes;
  ImportOptions opt;
  opt.notes = &notes;
  const Recording r = import_nvidia_smi(
      {"smi.csv",
       "timestamp, index, utilization.gpu [%], power.draw [W]\n"
       "2024/01/31 12:00:00.000, 0, 40 %, inf W\n"
       "2024/01/31 12:00:00.001, 1, 41 %, 100.00 W\n"
       "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU\n"
       "2024/01/31 12:00:01.000, 0, 42 %, [Unknown Error]\n"
       "2024/01/31 12:00:02.000, 0, 43 %, 101.00 W\n"},
      opt);
  ASSERT_EQ(r.t_unix_ns.size(), 3u);
  const std::size_t u0 = col(r, "nvml:utilization_gpu.gpu0"), u1 = col(r, "nvml:utilization_gpu.gpu1");
  EXPECT_EQ(r.values(0, u0), 40);
  EXPECT_EQ(r.values(0, u1), 41);
  EXPECT_EQ(r.values(2, u0), 43);
  EXPECT_TRUE(std::isnan(r.values(1, u1))) << "GPU 1 lost: no rows, gaps";
  EXPECT_TRUE(std::isnan(r.values(2, u1)));
  EXPECT_TRUE(std::isnan(r.values(0, col(r, "nvml:power_usage.gpu0")))) << "inf W";
  EXPECT_TRUE(std::isnan(r.values(1, col(r, "nvml:power_usage.gpu0")))) << "[Unknown Error]";
  EXPECT_EQ(notes.gap_values, 1u) << "inf (a bracketed value is a gap anyway, not counted)";
  EXPECT_EQ(notes.gpus_lost, 1u);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].kind, "gpu_lost");
  EXPECT_EQ(r.events[0].t_unix_ns, r.t_unix_ns[1]) << "seen at the pass after it";
  EXPECT_NE(r.events[0].detail.find("GPU is lost"), std::string::npos);
  // --strict: the old behaviour, the lost line is a malformed row.
  ImportOptions strict;
  strict.strict = true;
  EXPECT_THROW(import_nvidia_smi({"smi.csv", "timestamp, utilization.gpu [%]\n2024/01/31 12:00:00.000, inf %\n"}, strict),
               ImportError);
}

// A log written with --format=csv,noheader imports when its fields are given; units from the
// values, or nvidia-smi's own with nounits.
TEST(NvidiaSmiImport, HeaderlessLogWithFieldsGiven) {
  ImportOptions opt;
  opt.fields = {"timestamp", "index", "utilization.gpu", "memory.used"};
  Recording r = import_nvidia_smi(
      {"nohdr.csv", "2024/01/31 12:00:00.000, 0, 45 %, 1024 MiB\n2024/01/31 12:00:01.000, 0, 46 %, 2048 MiB\n"}, opt);
  ASSERT_EQ(r.t_unix_ns.size(), 2u);
  EXPECT_EQ(r.values(1, col(r, "nvml:utilization_gpu.gpu0")), 46);
  EXPECT_EQ(r.values(1, col(r, "nvml:memory_used.gpu0")), 2048.0 * 1024 * 1024);
  r = import_nvidia_smi({"nounits.csv", "2024/01/31 12:00:00.000, 0, 45, 1024\n2024/01/31 12:00:01.000, 0, 46, 2048\n"}, opt);
  EXPECT_EQ(r.values(1, col(r, "nvml:memory_used.gpu0")), 2048.0 * 1024 * 1024) << "MiB: nvidia-smi's unit";
  opt.fields = {"index", "utilization.gpu"};
  EXPECT_THROW(import_nvidia_smi({"x.csv", "0, 45\n"}, opt), ImportError) << "no timestamp field";
}

}  // namespace
}  // namespace reveal
