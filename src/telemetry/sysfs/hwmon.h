// sys.hwmon — hardware monitoring sensors from /sys/class/hwmon/hwmon<N>/
// (Documentation/hwmon/sysfs-interface.rst). Chips in N order; the chip name comes from the
// "name" file (older drivers keep their files in hwmon<N>/device/, also read).
//
// Channels: sys.hwmon:<type>.<chip>.<label>, per chip by type (temp, power, fan, in, curr),
// then sensor number:
//   temp<n>_input   millidegree C -> "celsius" (/1000)
//   power<n>_input  microwatt     -> "W"       (/1e6); power<n>_average when no _input
//                                               (ACPI power_meter)
//   fan<n>_input    "rpm"
//   in<n>_input     millivolt     -> "V"       (/1000)
//   curr<n>_input   milliampere   -> "A"       (/1000)
// label = the sensor's <stem>_label when present ("Package id 0"), else the stem ("temp2"),
// sanitized (sanitize_index: spaces -> '_'), e.g. "sys.hwmon:temp.coretemp.Package_id_0",
// "sys.hwmon:temp.coretemp.temp2". Chip names shared by several chips (two coretemp on a
// 2-socket host) become "<name>_0", "<name>_1", ... in hwmon order; a label repeated within a
// chip falls back to the stem. Gauges, Subsystem::power_thermal. A sensor whose read fails
// (unplugged fan, faulty diode: EIO/ENODATA) reads NaN, and so does one that reports a
// driver's "no reading" value instead of an error: raw 4294967295 or 2147483647, or either
// times 1000 (acpi power_meter's invalid meter: 4294967295000 uW).
#pragma once

#include "reveal/probe.h"
#include "telemetry/sysfs/sysfs_attr.h"

namespace reveal::telemetry {

class SysHwmonProbe final : public Probe {
 public:
  std::string_view name() const override { return "sys.hwmon"; }
  std::string_view description() const override {
    return "Temperatures, power, fans, voltages, currents per hwmon chip (/sys/class/hwmon)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  std::vector<SysfsAttr> files_;  // one per channel
  std::vector<double> divisor_;   // raw value / divisor = value in the channel's unit
};

}  // namespace reveal::telemetry
