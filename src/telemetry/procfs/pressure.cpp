#include "telemetry/procfs/pressure.h"

#include <cmath>
#include <system_error>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "proc.pressure";
struct ResourceInfo {
  std::string_view name;
  Subsystem subsystem;
};
constexpr std::array<ResourceInfo, 3> kResources{
    {{"cpu", Subsystem::cpu}, {"memory", Subsystem::memory}, {"io", Subsystem::storage}}};
constexpr std::array<std::string_view, 2> kLines{"some", "full"};
constexpr std::array<std::string_view, 4> kStats{"avg10", "avg60", "avg300", "total"};

int line_index(std::string_view tok) {
  for (std::size_t i = 0; i < kLines.size(); ++i)
    if (tok == kLines[i]) return static_cast<int>(i);
  return -1;
}
int stat_index(std::string_view key) {
  for (std::size_t i = 0; i < kStats.size(); ++i)
    if (key == kStats[i]) return static_cast<int>(i);
  return -1;
}

// Parses "avg10=1.23 avg60=... total=N" into out[0..3]; returns the number of stats found.
int parse_stats(std::string_view line, std::span<double> out) {
  int found = 0;
  for (std::string_view tok = next_token(line); !tok.empty(); tok = next_token(line)) {
    const auto eq = tok.find('=');
    if (eq == std::string_view::npos) continue;
    const int s = stat_index(tok.substr(0, eq));
    if (s < 0) continue;
    const std::string_view num = tok.substr(eq + 1);
    if (s == 3) {
      auto v = parse_u64(num);
      out[3] = v ? static_cast<double>(*v) : std::nan("");
    } else {
      auto v = parse_double(num);
      out[s] = v ? *v : std::nan("");
    }
    ++found;
  }
  return found;
}
}  // namespace

ProbeStatus ProcPressureProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  resources_.clear();
  const auto dir = root / "proc/pressure";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return {false, "PSI not enabled in this kernel (/proc/pressure missing)"};
  std::string first_error;
  for (const auto& r : kResources) {
    Resource res;
    std::string err;
    if (!res.file.open(dir / r.name, &err)) {
      if (first_error.empty()) first_error = err;
      continue;
    }
    auto text = res.file.read();
    if (!text) continue;
    std::string_view rest = *text;
    while (!rest.empty()) {
      std::string_view line = next_line(rest);
      const int li = line_index(next_token(line));
      std::array<double, 4> tmp{};
      if (li < 0 || res.slot[li] != kNone || parse_stats(line, tmp) != 4) continue;
      res.slot[li] = channels_.size();
      for (std::size_t s = 0; s < kStats.size(); ++s) {
        std::string field =
            std::string(r.name) + "_" + std::string(kLines[li]) + "_" + std::string(kStats[s]);
        const bool total = s == 3;
        std::string help = std::string(kLines[li] == "some" ? "some" : "all") +
                           " non-idle tasks stalled on " + std::string(r.name) +
                           (total ? ", cumulative"
                                  : ", % of time over " + std::string(kStats[s].substr(3)) + " s");
        channels_.push_back({channel_name(kSource, field), total ? "us" : "%",
                             total ? Kind::counter : Kind::gauge, r.subsystem, 64,
                             std::move(help)});
      }
    }
    if (res.slot[0] != kNone || res.slot[1] != kNone) resources_.push_back(std::move(res));
  }
  if (channels_.empty())
    return {false,
            first_error.empty() ? "no readable PSI lines under " + dir.string() : first_error};
  return {true, {}};
}

void ProcPressureProbe::sample(std::span<double> out) {
  for (double& v : out) v = std::nan("");
  for (auto& res : resources_) {
    auto text = res.file.read();
    if (!text) continue;
    std::string_view rest = *text;
    while (!rest.empty()) {
      std::string_view line = next_line(rest);
      const int li = line_index(next_token(line));
      if (li < 0 || res.slot[li] == kNone) continue;
      parse_stats(line, out.subspan(res.slot[li], kStats.size()));
    }
  }
}

}  // namespace reveal::telemetry
