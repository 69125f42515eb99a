#include "telemetry/sysfs/cpuidle.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "sys.cpuidle";

struct Field {
  const char* file;
  const char* unit;
  const char* help;
};
// Idle-state residency mirrors the CPU's busy time (the complement of it): Subsystem::cpu.
constexpr Field kFields[] = {{"time", "us", "time spent idle in this state, summed over CPUs"},
                             {"usage", "count", "times a CPU entered this idle state, summed over CPUs"}};
}  // namespace

ProbeStatus SysCpuidleProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  files_.clear();
  cpu_begin_.clear();
  const auto base = root / "sys/devices/system/cpu";
  std::string first_error;
  std::vector<std::string> state_order;  // aggregate channels: field-major within a state
  for (const auto& cpu : numbered_entries(base, "cpu")) {
    const auto dir = base / cpu.name / "cpuidle";
    const auto states = numbered_entries(dir, "state");
    std::vector<std::string> names;
    for (const auto& s : states)
      names.push_back(sanitize_index(read_text(dir / s.name / "name").value_or(s.name)));
    make_unique_names(names);
    const std::size_t begin = files_.size();
    for (std::size_t k = 0; k < states.size(); ++k) {
      auto it = std::find(state_order.begin(), state_order.end(), names[k]);
      std::size_t state = std::size_t(it - state_order.begin());
      for (std::size_t f = 0; f < std::size(kFields); ++f) {
        const auto file = dir / states[k].name / kFields[f].file;
        SysfsAttr a;
        if (int err = a.open(file)) {
          if (first_error.empty()) first_error = file.string() + ": " + errno_message(err);
          continue;
        }
        if (it == state_order.end()) {  // a state first seen on this CPU: its two sums
          state_order.push_back(names[k]);
          it = state_order.end() - 1;
          state = state_order.size() - 1;
          for (const Field& g : kFields)
            channels_.push_back({channel_name(kSource, g.file, names[k]), g.unit, Kind::counter, Subsystem::cpu, 64,
                                 std::string(g.help) + " (cpuidle/state*/" + g.file + " named " + names[k] + ")"});
        }
        files_.push_back({std::move(a), state * std::size(kFields) + f, 0.0, false});
      }
    }
    if (files_.size() > begin) cpu_begin_.push_back(begin);
  }
  cpu_begin_.push_back(files_.size());
  totals_.assign(channels_.size(), std::nan(""));
  refresh_ = StripedRefresh(cpu_begin_.size() - 1, kRefreshPeriodS, clock_);
  if (!channels_.empty()) return {true, {}};
  if (!first_error.empty()) return {false, first_error};
  std::string reason = "no cpuidle states (" + (base / "cpu0/cpuidle").string() + " missing)";
  if (auto drv = read_text(base / "cpuidle/current_driver"))
    reason = "no cpuidle states (cpuidle current_driver: " + *drv + ")";
  return {false, reason};
}

void SysCpuidleProbe::sample(std::span<double> out) {
  const bool first = !refresh_.started();
  refresh_.tick([this, first](std::size_t cpu) {
    for (std::size_t i = cpu_begin_[cpu]; i < cpu_begin_[cpu + 1]; ++i) {
      File& f = files_[i];
      const double v = f.attr.read_number();
      if (!std::isfinite(v)) continue;  // offline: its share of the sum stands still
      double& total = totals_[f.channel];
      // The first tick's readings are the sums' start. Later, only increments add: a CPU
      // that comes online or a counter that resets starts a new base instead of a jump.
      if (first) total = (std::isnan(total) ? 0.0 : total) + v;
      else if (f.seen && v >= f.last) total += v - f.last;
      else if (std::isnan(total)) total = 0;
      f.last = v;
      f.seen = true;
    }
  });
  std::copy(totals_.begin(), totals_.end(), out.begin());
}

}  // namespace reveal::telemetry
