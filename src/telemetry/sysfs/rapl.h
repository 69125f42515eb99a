// sys.rapl — RAPL energy counters from the powercap framework,
// /sys/class/powercap/intel-rapl:<P>[:<S>]/ (Documentation/power/powercap/powercap.rst).
// Zones are found both as entries of /sys/class/powercap (a real host lists every zone there,
// as symlinks) and nested inside their parent zone's directory (intel-rapl:0/intel-rapl:0:0);
// a zone id seen twice is counted once. Intel and AMD (same driver) alike; the MMIO
// interface (intel-rapl-mmio:*) duplicates the package zones and is not read.
//
// Channels: sys.rapl:energy_uj.<index>, zones in id order (0, 0:0, 0:1, 1, ...).
//   index = the zone's "name" file, prefixed by its parent zone's name for a subzone:
//   "package-0", "package-0.dram", "package-0.core", "package-1", "psys". Names are
//   sanitized (sanitize_index); if two zones still share an index, each gets "_<k>".
// Counter, unit "uJ", Subsystem::power_thermal, wrap_range = max_energy_range_uj read at open
// (the counter wraps to 0 past it; the rate stage unwraps). energy_uj is root-only since
// Linux 5.10 (CVE-2020-8694): when no zone is readable the probe is unavailable with the
// EACCES reason; zones readable among unreadable ones are kept.
#pragma once

#include "reveal/probe.h"
#include "telemetry/sysfs/sysfs_attr.h"

namespace reveal::telemetry {

class SysRaplProbe final : public Probe {
 public:
  std::string_view name() const override { return "sys.rapl"; }
  std::string_view description() const override {
    return "RAPL energy per package and subzone (/sys/class/powercap/intel-rapl:*)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  std::vector<SysfsAttr> files_;  // one per channel
};

}  // namespace reveal::telemetry
