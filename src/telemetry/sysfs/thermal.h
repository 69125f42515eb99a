// sys.thermal — thermal zone temperatures from /sys/class/thermal/thermal_zone<N>/temp
// (millidegree Celsius; Documentation/driver-api/thermal/sysfs-api.rst).
//
// Channels: sys.thermal:temp.<type>.zone<N> for every zone present at open, in N order;
// <type> is the zone's "type" file sanitized (x86_pkg_temp, acpitz, ...), and the zone number
// keeps names unique (a 2-socket host has two x86_pkg_temp zones), e.g.
// "sys.thermal:temp.x86_pkg_temp.zone0". Gauges, unit "celsius" (raw / 1000),
// Subsystem::power_thermal. A zone whose sensor cannot be read this tick (EAGAIN/ENODATA from
// some drivers, zone removed) reads NaN. cooling_device* entries are not read.
#pragma once

#include "reveal/probe.h"
#include "telemetry/sysfs/sysfs_attr.h"

namespace reveal::telemetry {

class SysThermalProbe final : public Probe {
 public:
  std::string_view name() const override { return "sys.thermal"; }
  std::string_view description() const override {
    return "Thermal zone temperatures (/sys/class/thermal/thermal_zone*)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  std::vector<SysfsAttr> files_;  // one per channel
};

}  // namespace reveal::telemetry
