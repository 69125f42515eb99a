// CPU settings: model, microcode, cpufreq governor, SMT (see reveal/host_config.h).
#include <string_view>
#include <utility>

#include "telemetry/host_config/config_files.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry::config {
namespace {

// "cpu12" -> 12; -1 for anything else ("cpufreq", "cpuidle", "cpu").
int cpu_number(std::string_view name) {
  if (name.size() < 4 || name.substr(0, 3) != "cpu") return -1;
  auto n = parse_u64(name.substr(3));
  return n && *n < 1'000'000 ? static_cast<int>(*n) : -1;
}

// The value after ':' of the first line of /proc/cpuinfo whose key is `key`. Only the
// beginning of the file is read: the first CPU's block has what we need, and generating the
// whole file costs an IPI per CPU on x86 ("cpu MHz").
void cpuinfo_fields(const std::filesystem::path& path, ConfigSnapshot& out) {
  auto text = read_file(path, 16384);
  if (!text) return;
  std::string_view rest = *text;
  bool have_model = false, have_microcode = false;
  while (!rest.empty() && !(have_model && have_microcode)) {
    std::string_view line = next_line(rest);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (value.empty()) continue;
    if (key == "model name" && !have_model) {
      out["cpu.model"] = std::string(value);
      have_model = true;
    } else if (key == "microcode" && !have_microcode) {
      out["cpu.microcode"] = std::string(value);
      have_microcode = true;
    }
  }
}

}  // namespace

void read_cpu_config(const std::filesystem::path& root, ConfigSnapshot& out) {
  cpuinfo_fields(root / "proc/cpuinfo", out);
  const auto cpus = root / "sys/devices/system/cpu";
  std::vector<std::pair<int, std::string>> governors;
  for (const auto& d : list_dir(cpus)) {
    const int n = cpu_number(d);
    if (n < 0) continue;
    if (auto g = read_value(cpus / d / "cpufreq/scaling_governor")) governors.emplace_back(n, std::move(*g));
  }
  bool all_equal = true;
  for (const auto& [n, g] : governors) all_equal = all_equal && g == governors.front().second;
  if (!governors.empty() && all_equal) {
    out["cpu.governor"] = governors.front().second;
  } else {
    for (auto& [n, g] : governors) out["cpu.cpu" + std::to_string(n) + ".governor"] = std::move(g);
  }
  // CPUs taken offline (echo 0 > cpuN/online, or at boot): their per-CPU channels read
  // nothing, and a CPU going offline or coming back is a configuration change.
  put_value(out, "cpu.online", cpus / "online");
  put_value(out, "cpu.offline", cpus / "offline");
  put_value(out, "smt.control", cpus / "smt/control");
  put_value(out, "smt.active", cpus / "smt/active");
}

}  // namespace reveal::telemetry::config
