// proc.pressure — pressure stall information from /proc/pressure/{cpu,memory,io}
// (Documentation/accounting/psi.rst). Each file has a "some" line and (memory, io, and
// cpu since 5.13) a "full" line: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0".
//
// Channels: proc.pressure:<resource>_<some|full>_<stat>, e.g. "proc.pressure:cpu_some_total",
// "proc.pressure:io_full_avg10", for each resource file and line present at open.
//   avg10/avg60/avg300  gauges, unit "%" (share of wall time stalled over 10/60/300 s)
//   total               counter, unit "us" (cumulative stall time)
// Subsystem: cpu -> cpu, memory -> memory, io -> storage. An all-zero line (cpu "full"
// on some kernels) is kept as is. Unavailable when /proc/pressure is missing (no PSI).
#pragma once

#include <array>

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class ProcPressureProbe final : public Probe {
 public:
  std::string_view name() const override { return "proc.pressure"; }
  std::string_view description() const override {
    return "Pressure stall information for cpu, memory and io (/proc/pressure)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  struct Resource {
    FileReader file;
    std::array<std::size_t, 2> slot{kNone, kNone};  // first channel of "some", "full"
  };
  std::vector<ChannelInfo> channels_;
  std::vector<Resource> resources_;
};

}  // namespace reveal::telemetry
