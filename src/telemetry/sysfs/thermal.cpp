#include "telemetry/sysfs/thermal.h"

#include <cerrno>
#include <cmath>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "sys.thermal";
}  // namespace

ProbeStatus SysThermalProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  files_.clear();
  const auto base = root / "sys/class/thermal";
  const auto zones = numbered_entries(base, "thermal_zone");
  if (zones.empty())
    return {false, "no thermal zones (" + (base / "thermal_zone0").string() + " missing)"};
  std::string first_error;
  for (const auto& z : zones) {
    const auto dir = base / z.name;
    SysfsAttr a;
    if (int err = a.open(dir / "temp")) {
      if (first_error.empty()) first_error = (dir / "temp").string() + ": " + errno_message(err);
      continue;
    }
    const std::string type = sanitize_index(read_text(dir / "type").value_or("zone"));
    files_.push_back(std::move(a));
    channels_.push_back({channel_name(kSource, "temp", type + ".zone" + std::to_string(z.number)),
                         "celsius", Kind::gauge, Subsystem::power_thermal, 64,
                         "thermal zone temperature (" + z.name + "/temp, type " + type + ")"});
  }
  if (channels_.empty()) return {false, first_error};
  return {true, {}};
}

void SysThermalProbe::sample(std::span<double> out) {
  // Below absolute zero is no reading (a zone's firmware answering garbage: -650788.984 °C on a
  // Raspberry Pi's thermal_zone0, raspberrypi/firmware#133): a gap, not an outlier.
  for (std::size_t i = 0; i < files_.size(); ++i) {
    const double c = files_[i].read_number(1000);
    out[i] = c < kAbsoluteZeroCelsius ? std::nan("") : c;
  }
}

}  // namespace reveal::telemetry
