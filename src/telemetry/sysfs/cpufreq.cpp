#include "telemetry/sysfs/cpufreq.h"

#include <cerrno>
#include <system_error>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "sys.cpufreq";

struct Field {
  const char* file;
  const char* help;
};
constexpr Field kFields[] = {
    {"scaling_cur_freq", "current CPU frequency (cpufreq driver)"},
    {"scaling_min_freq", "lowest frequency the cpufreq policy allows"},
    {"scaling_max_freq", "highest frequency the cpufreq policy allows"},
};
}  // namespace

ProbeStatus SysCpufreqProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  files_.clear();
  const auto base = root / "sys/devices/system/cpu";
  const auto cpus = numbered_entries(base, "cpu");
  std::string first_error;
  for (const Field& f : kFields) {
    for (const auto& cpu : cpus) {
      const auto file = base / cpu.name / "cpufreq" / f.file;
      SysfsAttr a;
      if (int err = a.open(file)) {
        std::error_code ec;
        if (first_error.empty() &&
            std::filesystem::exists(base / cpu.name / "cpufreq", ec))
          first_error = file.string() + ": " + errno_message(err);
        continue;
      }
      files_.push_back(std::move(a));
      channels_.push_back({channel_name(kSource, f.file, cpu.name), "kHz", Kind::gauge,
                           Subsystem::power_thermal, 64, f.help});
    }
  }
  if (channels_.empty()) {
    if (!first_error.empty()) return {false, first_error};
    return {false, "no cpufreq driver (/sys/devices/system/cpu/cpu0/cpufreq missing)"};
  }
  return {true, {}};
}

void SysCpufreqProbe::sample(std::span<double> out) {
  for (std::size_t i = 0; i < files_.size(); ++i) out[i] = files_[i].read_number();
}

}  // namespace reveal::telemetry
