#include "telemetry/procfs/stat.h"

#include <array>
#include <cmath>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "proc.stat";
constexpr std::array<std::string_view, 8> kStates{"user",   "nice", "system",  "idle",
                                                  "iowait", "irq",  "softirq", "steal"};
constexpr std::array<std::string_view, 8> kStateHelp{
    "CPU time in user mode",         "CPU time in user mode at low priority (nice)",
    "CPU time in kernel mode",       "CPU time idle",
    "CPU time idle waiting for I/O", "CPU time servicing hardware interrupts",
    "CPU time servicing softirqs",   "CPU time stolen by the hypervisor"};

struct Scalar {
  std::string_view key;
  Kind kind;
  std::string_view help;
};
constexpr std::array<Scalar, 4> kScalars{{
    {"ctxt", Kind::counter, "context switches since boot"},
    {"processes", Kind::counter, "processes and threads created (forks) since boot"},
    {"procs_running", Kind::gauge, "runnable threads"},
    {"procs_blocked", Kind::gauge, "threads blocked on I/O"},
}};

bool is_cpu_key(std::string_view k) { return k.size() >= 3 && k.substr(0, 3) == "cpu"; }
}  // namespace

ProbeStatus ProcStatProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  lines_ = {};
  std::string err;
  if (!file_.open(root / "proc/stat", &err)) return {false, err};
  auto text = file_.read();
  if (!text) return {false, file_.path().string() + ": unreadable or too large"};
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view line = next_line(rest);
    std::string_view key = next_token(line);
    if (is_cpu_key(key)) {
      std::size_t n = 0;
      while (n < kStates.size() && !next_token(line).empty()) ++n;
      if (n == 0) continue;
      const std::string_view index = key.size() == 3 ? std::string_view{} : key;
      lines_.add(std::string(key), channels_.size(), n);
      for (std::size_t i = 0; i < n; ++i)
        channels_.push_back({channel_name(kSource, kStates[i], index), "ticks", Kind::counter,
                             Subsystem::cpu, 64, std::string(kStateHelp[i])});
      continue;
    }
    for (const auto& s : kScalars) {
      if (key != s.key || next_token(line).empty()) continue;
      lines_.add(std::string(key), channels_.size(), 1);
      channels_.push_back(
          {channel_name(kSource, s.key), "count", s.kind, Subsystem::cpu, 64, std::string(s.help)});
    }
  }
  if (channels_.empty()) return {false, file_.path().string() + ": no cpu lines"};
  return {true, {}};
}

void ProcStatProbe::sample(std::span<double> out) {
  for (double& v : out) v = std::nan("");
  auto text = file_.read();
  if (!text) return;
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view line = next_line(rest);
    const std::size_t i = lines_.find(next_token(line));
    if (i == KeyIndex::npos) continue;
    const auto& e = lines_[i];
    for (std::size_t k = 0; k < e.count; ++k) out[e.slot + k] = next_u64_as_double(line);
  }
}

}  // namespace reveal::telemetry
