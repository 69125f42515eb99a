#include "telemetry/sysfs/cpuidle.h"

#include <cerrno>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "sys.cpuidle";

struct Field {
  const char* file;
  const char* unit;
  const char* help;
};
// Idle-state residency mirrors the CPU's busy time (the complement of it): Subsystem::cpu.
constexpr Field kFields[] = {{"time", "us", "time the CPU spent idle in this state"},
                             {"usage", "count", "times the CPU entered this idle state"}};
}  // namespace

ProbeStatus SysCpuidleProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  files_.clear();
  const auto base = root / "sys/devices/system/cpu";
  std::string first_error;
  for (const auto& cpu : numbered_entries(base, "cpu")) {
    const auto dir = base / cpu.name / "cpuidle";
    const auto states = numbered_entries(dir, "state");
    std::vector<std::string> names;
    for (const auto& s : states)
      names.push_back(sanitize_index(read_text(dir / s.name / "name").value_or(s.name)));
    make_unique_names(names);
    for (std::size_t k = 0; k < states.size(); ++k) {
      const std::string index = cpu.name + "." + names[k];
      for (const Field& f : kFields) {
        const auto file = dir / states[k].name / f.file;
        SysfsAttr a;
        if (int err = a.open(file)) {
          if (first_error.empty()) first_error = file.string() + ": " + errno_message(err);
          continue;
        }
        files_.push_back(std::move(a));
        channels_.push_back({channel_name(kSource, f.file, index), f.unit, Kind::counter,
                             Subsystem::cpu, 64,
                             std::string(f.help) + " (cpuidle/" + states[k].name + "/" + f.file + ")"});
      }
    }
  }
  if (!channels_.empty()) return {true, {}};
  if (!first_error.empty()) return {false, first_error};
  std::string reason = "no cpuidle states (" + (base / "cpu0/cpuidle").string() + " missing)";
  if (auto drv = read_text(base / "cpuidle/current_driver"))
    reason = "no cpuidle states (cpuidle current_driver: " + *drv + ")";
  return {false, reason};
}

void SysCpuidleProbe::sample(std::span<double> out) {
  for (std::size_t i = 0; i < files_.size(); ++i) out[i] = files_[i].read_number();
}

}  // namespace reveal::telemetry
