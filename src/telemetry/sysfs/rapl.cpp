#include "telemetry/sysfs/rapl.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <system_error>
#include <vector>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "sys.rapl";
constexpr std::string_view kPrefix = "intel-rapl:";

// Zone id "0" or "0:1" parsed into numbers; empty if malformed.
std::vector<std::uint64_t> parse_zone_id(std::string_view id) {
  std::vector<std::uint64_t> out;
  while (true) {
    const auto colon = id.find(':');
    auto n = parse_u64(id.substr(0, colon));
    if (!n) return {};
    out.push_back(*n);
    if (colon == std::string_view::npos) return out;
    id.remove_prefix(colon + 1);
  }
}

// Zone directories: id numbers -> path. Entries of `dir` named intel-rapl:<id>, plus their
// nested subzones, recursively.
void collect_zones(const std::filesystem::path& dir,
                   std::map<std::vector<std::uint64_t>, std::filesystem::path>& zones) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(kPrefix)) continue;
    std::error_code sec;
    if (!it->is_directory(sec)) continue;
    auto id = parse_zone_id(std::string_view(name).substr(kPrefix.size()));
    if (id.empty() || zones.count(id)) continue;
    zones.emplace(id, it->path());
    collect_zones(it->path(), zones);
  }
}
}  // namespace

ProbeStatus SysRaplProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  files_.clear();
  const auto base = root / "sys/class/powercap";
  std::map<std::vector<std::uint64_t>, std::filesystem::path> zones;
  collect_zones(base, zones);
  if (zones.empty()) return {false, "no RAPL zones (" + (base / "intel-rapl:0").string() + " missing)"};

  std::map<std::vector<std::uint64_t>, std::string> names;  // id -> sanitized zone name
  std::vector<std::string> indices;
  std::vector<double> ranges;
  std::string first_error;
  for (const auto& [id, dir] : zones) {
    const std::string own = sanitize_index(read_text(dir / "name").value_or("zone"));
    names[id] = own;
    std::string index = own;
    if (id.size() > 1) {  // subzone: prefix the chain of parent names
      std::string prefix;
      for (std::size_t depth = 1; depth < id.size(); ++depth) {
        auto it = names.find(std::vector<std::uint64_t>(id.begin(), id.begin() + depth));
        prefix += (it != names.end() ? it->second : std::string("zone")) + ".";
      }
      index = prefix + own;
    }
    SysfsAttr a;
    if (int err = a.open(dir / "energy_uj")) {
      if (first_error.empty()) {
        first_error = (dir / "energy_uj").string() + ": " + errno_message(err);
        if (err == EACCES) first_error += " (root-only since Linux 5.10)";
      }
      continue;
    }
    double range = 0;  // unknown: the counter's 64 bits apply
    if (auto text = read_text(dir / "max_energy_range_uj"))
      if (auto r = parse_integer(*text); r && *r > 0) range = *r;
    files_.push_back(std::move(a));
    indices.push_back(std::move(index));
    ranges.push_back(range);
  }
  make_unique_names(indices);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    ChannelInfo c{channel_name(kSource, "energy_uj", indices[i]), "uJ", Kind::counter,
                  Subsystem::power_thermal, 64,
                  ranges[i] > 0 ? "energy consumed by the RAPL zone; wraps at max_energy_range_uj"
                                : "energy consumed by the RAPL zone; max_energy_range_uj unreadable, so a wrap is a "
                                  "gap (read as a reset), not corrected"};
    c.wrap_range = ranges[i];
    channels_.push_back(std::move(c));
  }
  if (channels_.empty()) return {false, first_error};
  return {true, {}};
}

void SysRaplProbe::sample(std::span<double> out) {
  for (std::size_t i = 0; i < files_.size(); ++i) out[i] = files_[i].read_number();
}

}  // namespace reveal::telemetry
