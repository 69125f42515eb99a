#include "telemetry/sysfs/cpufreq.h"

#include <algorithm>
#include <cmath>
#include <system_error>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "sys.cpufreq";

// CPU numbers of the cpuN directories under `dir`, ascending.
std::vector<int> list_cpus(const std::filesystem::path& dir) {
  std::vector<int> cpus;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with("cpu")) continue;
    if (auto n = parse_u64(std::string_view(name).substr(3)); n && *n < (1u << 20))
      cpus.push_back(static_cast<int>(*n));
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}
}  // namespace

ProbeStatus SysCpufreqProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  files_.clear();
  const auto base = root / "sys/devices/system/cpu";
  std::string first_error;
  for (int cpu : list_cpus(base)) {
    const std::string index = "cpu" + std::to_string(cpu);
    FileReader f;
    std::string err;
    if (!f.open(base / index / "cpufreq/scaling_cur_freq", &err)) {
      std::error_code ec;
      if (first_error.empty() && std::filesystem::exists(base / index / "cpufreq", ec))
        first_error = err;
      continue;
    }
    files_.push_back(std::move(f));
    channels_.push_back({channel_name(kSource, "scaling_cur_freq", index), "kHz", Kind::gauge,
                         Subsystem::power_thermal, 64, "current CPU frequency (cpufreq driver)"});
  }
  if (channels_.empty()) {
    if (!first_error.empty()) return {false, first_error};
    return {false, "no cpufreq driver (/sys/devices/system/cpu/cpu0/cpufreq missing)"};
  }
  return {true, {}};
}

void SysCpufreqProbe::sample(std::span<double> out) {
  for (std::size_t i = 0; i < files_.size(); ++i) {
    auto text = files_[i].read();
    auto v = text ? parse_u64(trim(*text)) : std::nullopt;
    out[i] = v ? static_cast<double>(*v) : std::nan("");
  }
}

}  // namespace reveal::telemetry
