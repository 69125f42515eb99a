#include "telemetry/sysfs/cpufreq.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <system_error>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "sys.cpufreq";
constexpr const char* kFiles[] = {"scaling_cur_freq", "scaling_min_freq", "scaling_max_freq"};

struct StatInfo {
  const char* name;
  std::size_t field;  // index into kFiles
  const char* help;
};
constexpr StatInfo kStatInfo[] = {
    {"scaling_cur_freq_mean", 0, "mean current CPU frequency over the CPUs (cpufreq driver)"},
    {"scaling_cur_freq_min", 0, "lowest current frequency of any CPU (a throttled core or socket)"},
    {"scaling_cur_freq_max", 0, "highest current frequency of any CPU"},
    {"scaling_min_freq_max", 1, "highest minimum frequency any CPU's cpufreq policy sets"},
    {"scaling_max_freq_min", 2, "lowest maximum frequency any CPU's cpufreq policy allows (a lowered cap)"},
};
}  // namespace

ProbeStatus SysCpufreqProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  cpus_.clear();
  slot_.fill(-1);
  const auto base = root / "sys/devices/system/cpu";
  std::string first_error;
  std::array<bool, kFields> any{};
  for (const auto& cpu : numbered_entries(base, "cpu")) {
    Cpu c;
    bool opened = false;
    for (std::size_t f = 0; f < kFields; ++f) {
      c.last[f] = std::nan("");
      const auto file = base / cpu.name / "cpufreq" / kFiles[f];
      if (int err = c.attr[f].open(file)) {
        std::error_code ec;
        if (first_error.empty() && std::filesystem::exists(base / cpu.name / "cpufreq", ec))
          first_error = file.string() + ": " + errno_message(err);
        continue;
      }
      c.open[f] = any[f] = opened = true;
    }
    if (opened) cpus_.push_back(std::move(c));
  }
  for (std::size_t s = 0; s < kStats; ++s) {
    if (!any[kStatInfo[s].field]) continue;
    slot_[s] = std::ptrdiff_t(channels_.size());
    channels_.push_back({std::string(kSource) + ":" + kStatInfo[s].name, "kHz", Kind::gauge, Subsystem::power_thermal,
                         64, kStatInfo[s].help});
  }
  refresh_ = StripedRefresh(cpus_.size(), kRefreshPeriodS, clock_);
  if (channels_.empty()) {
    if (!first_error.empty()) return {false, first_error};
    return {false, "no cpufreq driver (/sys/devices/system/cpu/cpu0/cpufreq missing)"};
  }
  return {true, {}};
}

void SysCpufreqProbe::sample(std::span<double> out) {
  refresh_.tick([this](std::size_t g) {
    Cpu& c = cpus_[g];
    for (std::size_t f = 0; f < kFields; ++f)
      if (c.open[f]) {
        // 0 kHz is no frequency: cppc_cpufreq (arm64, some AMD hosts and VMs) reads 0 for a CPU
        // whose feedback counters did not move (idle), and would pose as a CPU throttled to 0.
        const double x = c.attr[f].read_number();
        c.last[f] = x > 0 ? x : std::nan("");
      }
  });
  std::array<double, kStats> v;
  v.fill(std::nan(""));
  double sum = 0;
  std::size_t n = 0;
  auto lower = [](double& acc, double x) { acc = std::isnan(acc) ? x : std::min(acc, x); };
  auto upper = [](double& acc, double x) { acc = std::isnan(acc) ? x : std::max(acc, x); };
  for (const Cpu& c : cpus_) {
    if (std::isfinite(c.last[kCur])) {
      sum += c.last[kCur];
      ++n;
      lower(v[kCurMin], c.last[kCur]);
      upper(v[kCurMax], c.last[kCur]);
    }
    if (std::isfinite(c.last[kMin])) upper(v[kMinMax], c.last[kMin]);
    if (std::isfinite(c.last[kMax])) lower(v[kMaxMin], c.last[kMax]);
  }
  if (n > 0) v[kCurMean] = sum / double(n);
  for (std::size_t s = 0; s < kStats; ++s)
    if (slot_[s] >= 0) out[std::size_t(slot_[s])] = v[s];
}

}  // namespace reveal::telemetry
