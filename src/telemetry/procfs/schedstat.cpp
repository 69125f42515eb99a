#include "telemetry/procfs/schedstat.h"

#include <algorithm>
#include <cmath>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "proc.schedstat";
constexpr int kMinVersion = 15;       // the 9-field CPU line (yld counters dropped)
constexpr std::size_t kLeading = 6;   // fields before rq_cpu_time on a CPU line
constexpr std::size_t kSums = 3;      // run_time, run_delay, timeslices
constexpr double kNaN = __builtin_nan("");

bool is_cpu_key(std::string_view k) {
  if (k.size() < 4 || k.substr(0, 3) != "cpu") return false;
  for (char c : k.substr(3))
    if (c < '0' || c > '9') return false;
  return true;
}

// rq_cpu_time, run_delay, pcount of a CPU line after its key; false if malformed.
bool parse_cpu(std::string_view line, double& run, double& delay, double& slices) {
  for (std::size_t i = 0; i < kLeading; ++i)
    if (next_token(line).empty()) return false;
  run = next_u64_as_double(line);
  delay = next_u64_as_double(line);
  slices = next_u64_as_double(line);
  return std::isfinite(run) && std::isfinite(delay) && std::isfinite(slices);
}
}  // namespace

ProbeStatus ProcSchedstatProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  cpus_ = {};
  std::string err;
  if (!file_.open(root / "proc/schedstat", &err))
    return {false, err + " (kernel without CONFIG_SCHEDSTATS)"};
  auto text = file_.read();
  if (!text) return {false, file_.path().string() + ": unreadable or too large"};
  std::string_view rest = *text;
  std::string_view first = next_line(rest);
  const bool versioned = next_token(first) == "version";
  const auto version = parse_u64(next_token(first));
  if (!versioned || !version)
    return {false, file_.path().string() + ": no 'version N' first line"};
  if (*version < kMinVersion)
    return {false, file_.path().string() + ": schedstat version " + std::to_string(*version) +
                       " not supported (15 or later)"};
  std::vector<std::string> cpus;
  while (!rest.empty()) {
    std::string_view line = next_line(rest);
    const std::string_view key = next_token(line);
    double run, delay, slices;
    if (!is_cpu_key(key) || !parse_cpu(line, run, delay, slices)) continue;
    if (cpus_.find(key) != KeyIndex::npos) continue;  // a repeated line: the first one counts
    cpus_.add(key, kSums + cpus.size());
    cpus.emplace_back(key);
  }
  if (cpus.empty()) return {false, file_.path().string() + ": no CPU lines"};
  channels_.push_back({channel_name(kSource, "run_time"), "ns", Kind::counter, Subsystem::cpu, 64,
                       "time tasks ran on a CPU (rq_cpu_time), summed over CPUs"});
  channels_.push_back({channel_name(kSource, "run_delay"), "ns", Kind::counter, Subsystem::cpu, 64,
                       "time runnable tasks waited in a run queue (run_delay), summed over CPUs"});
  channels_.push_back({channel_name(kSource, "timeslices"), "count", Kind::counter, Subsystem::cpu, 64,
                       "timeslices run (pcount), summed over CPUs"});
  for (const auto& c : cpus)
    channels_.push_back({channel_name(kSource, "run_delay", c), "ns", Kind::counter, Subsystem::cpu, 64,
                         "time runnable tasks waited in " + c + "'s run queue (run_delay)"});
  seen_.assign(cpus.size(), 0);
  return {true, {}};
}

void ProcSchedstatProbe::sample(std::span<double> out) {
  for (double& v : out) v = kNaN;
  auto text = file_.read();
  if (!text) return;
  std::fill(seen_.begin(), seen_.end(), char{0});
  double sums[kSums] = {0, 0, 0};
  std::size_t n_seen = 0;
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view line = next_line(rest);
    std::size_t i = cpus_.match_next(line);
    if (i == KeyIndex::npos) {
      const std::string_view key = next_token(line);
      if (!is_cpu_key(key)) continue;  // domain lines: no key scan
      i = cpus_.find(key);
      if (i == KeyIndex::npos) continue;  // a CPU that came online after open
    }
    double run, delay, slices;
    if (seen_[i] || !parse_cpu(line, run, delay, slices)) continue;
    seen_[i] = 1;
    ++n_seen;
    out[cpus_[i].slot] = delay;
    sums[0] += run;
    sums[1] += delay;
    sums[2] += slices;
  }
  // A CPU missing this tick (offline, or a torn line) would make the sums step down and up
  // again: a gap instead.
  if (n_seen == seen_.size())
    for (std::size_t k = 0; k < kSums; ++k) out[k] = sums[k];
}

}  // namespace reveal::telemetry
