#include "telemetry/perf/pmu.h"

#include <algorithm>

namespace reveal::telemetry {
namespace {
std::optional<std::string> read_text(const std::filesystem::path& p) {
  FileReader f;
  if (!f.open(p)) return std::nullopt;
  auto t = f.read();
  if (!t) return std::nullopt;
  return std::string(*t);
}

std::optional<std::string> root_or_live(const std::filesystem::path& root, const char* rel) {
  if (auto t = read_text(root / rel)) return t;
  return read_text(std::filesystem::path("/") / rel);
}
}  // namespace

CpuId read_cpu_id(const std::filesystem::path& root) {
  CpuId id;
  const auto text = root_or_live(root, "proc/cpuinfo");
  if (!text) return id;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const std::string_view line = next_line(rest);
    if (trim(line).empty()) {
      if (!id.vendor_id.empty() || id.family >= 0) break;  // end of the first processor
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, colon)), val = trim(line.substr(colon + 1));
    if (key == "vendor_id") {
      id.vendor_id = std::string(val);
    } else if (key == "cpu family") {
      if (auto v = parse_i64(val)) id.family = static_cast<int>(*v);
    } else if (key == "model") {
      if (auto v = parse_i64(val)) id.model = static_cast<int>(*v);
    }
  }
  if (id.vendor_id == "GenuineIntel") id.vendor = CpuVendor::intel;
  if (id.vendor_id == "AuthenticAMD") id.vendor = CpuVendor::amd;
  return id;
}

bool nmi_watchdog_on(const std::filesystem::path& root) {
  const auto text = root_or_live(root, "proc/sys/kernel/nmi_watchdog");
  return !text || trim(*text) != "0";
}

int generic_budget(const PmuCounters& c, bool nmi_watchdog) {
  return std::max(1, c.generic - (nmi_watchdog ? 1 : 0));
}

int counter_cost(const PerfEvent& ev, const PmuCounters& c) {
  const bool fixed_capable = ev.type == PERF_TYPE_HARDWARE &&
                             (ev.config == PERF_COUNT_HW_CPU_CYCLES || ev.config == PERF_COUNT_HW_INSTRUCTIONS);
  return fixed_capable && c.fixed >= 2 ? 0 : 1;
}

std::vector<std::vector<std::size_t>> pack_groups(const std::vector<std::vector<std::size_t>>& bundles,
                                                  const std::vector<int>& cost, int budget) {
  budget = std::max(budget, 1);
  std::vector<std::vector<std::size_t>> groups;
  std::vector<int> used;
  auto place = [&](const std::vector<std::size_t>& part, int c) {
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (used[g] + c <= budget) {
        groups[g].insert(groups[g].end(), part.begin(), part.end());
        used[g] += c;
        return;
      }
    groups.push_back(part);
    used.push_back(c);
  };
  for (const auto& b : bundles) {
    if (b.empty()) continue;
    int total = 0;
    for (std::size_t i : b) total += cost[i];
    if (total <= budget) {
      place(b, total);
      continue;
    }
    std::vector<std::size_t> part;  // too big for one group: split greedily, in order
    int c = 0;
    for (std::size_t i : b) {
      if (c + cost[i] > budget && !part.empty()) {
        place(part, c);
        part.clear();
        c = 0;
      }
      part.push_back(i);
      c += cost[i];
    }
    if (!part.empty()) place(part, c);
  }
  return groups;
}

}  // namespace reveal::telemetry
