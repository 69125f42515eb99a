#include "telemetry/sysfs/hwmon.h"

#include <cmath>

#include <algorithm>
#include <array>
#include <set>
#include <system_error>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "sys.hwmon";

struct SensorType {
  std::string_view type;   // file prefix and channel field
  std::string_view unit;
  double divisor;
  std::string_view help;
};
constexpr std::array<SensorType, 5> kTypes{{
    {"temp", "celsius", 1000, "temperature"},
    {"power", "W", 1e6, "power"},
    {"fan", "rpm", 1, "fan speed"},
    {"in", "V", 1000, "voltage"},
    {"curr", "A", 1000, "current"},
}};

struct Sensor {
  std::uint64_t number;
  std::string stem;  // "temp1"
  std::string file;  // "temp1_input"
};

// Sensors of one type in `dir`, by number: <type><n>_input (power also <n>_average).
std::vector<Sensor> sensors_of(const std::filesystem::path& dir, std::string_view type) {
  std::vector<Sensor> out;
  std::set<std::uint64_t> seen;
  for (std::string_view suffix : {std::string_view("_input"), std::string_view("_average")}) {
    if (suffix == "_average" && type != "power") break;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end;
         it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::string_view v = name;
      if (!v.starts_with(type) || !v.ends_with(suffix)) continue;
      v.remove_prefix(type.size());
      v.remove_suffix(suffix.size());
      auto n = parse_u64(v);
      if (!n || !seen.insert(*n).second) continue;  // _input wins over _average
      out.push_back({*n, std::string(type) + std::string(v), name});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Sensor& a, const Sensor& b) { return a.number < b.number; });
  return out;
}
}  // namespace

ProbeStatus SysHwmonProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  files_.clear();
  divisor_.clear();
  const auto base = root / "sys/class/hwmon";
  const auto chips = numbered_entries(base, "hwmon");
  if (chips.empty()) return {false, "no hwmon chips (" + (base / "hwmon0").string() + " missing)"};

  std::vector<std::filesystem::path> dirs;
  std::vector<std::string> chip_names;
  for (const auto& c : chips) {
    auto dir = base / c.name;
    std::error_code ec;
    if (!std::filesystem::exists(dir / "name", ec) &&
        std::filesystem::exists(dir / "device/name", ec))
      dir /= "device";
    dirs.push_back(dir);
    chip_names.push_back(sanitize_index(read_text(dir / "name").value_or(c.name)));
  }
  make_unique_names(chip_names);

  std::string first_error;
  for (std::size_t c = 0; c < dirs.size(); ++c) {
    std::set<std::string> used;  // indices within this chip, per type
    for (const SensorType& t : kTypes) {
      used.clear();
      for (const Sensor& s : sensors_of(dirs[c], t.type)) {
        SysfsAttr a;
        if (int err = a.open(dirs[c] / s.file)) {
          if (first_error.empty())
            first_error = (dirs[c] / s.file).string() + ": " + errno_message(err);
          continue;
        }
        auto label = read_text(dirs[c] / (s.stem + "_label"));
        std::string l = label && !label->empty() ? sanitize_index(*label) : s.stem;
        if (!used.insert(l).second) {
          l = s.stem;
          used.insert(l);
        }
        files_.push_back(std::move(a));
        divisor_.push_back(t.divisor);
        channels_.push_back({channel_name(kSource, t.type, chip_names[c] + "." + l),
                             std::string(t.unit), Kind::gauge, Subsystem::power_thermal, 64,
                             std::string(t.help) + " (" + s.file + " of hwmon chip " +
                                 chip_names[c] + ")"});
      }
    }
  }
  if (channels_.empty())
    return {false, first_error.empty() ? base.string() + ": no sensors" : first_error};
  return {true, {}};
}

namespace {
// Raw values that drivers report instead of an error when a sensor has no reading: all ones of
// an unsigned 32-bit field, also scaled by 1000 (acpi power_meter shows 4294967295000 uW, "4.29
// MW", when the firmware's meter is invalid), or the largest signed 32-bit value.
bool sentinel(double raw) {
  return raw == 4294967295.0 || raw == 4294967295000.0 || raw == 2147483647.0 || raw == 2147483647000.0;
}
}  // namespace

void SysHwmonProbe::sample(std::span<double> out) {
  for (std::size_t i = 0; i < files_.size(); ++i) {
    const double raw = files_[i].read_number();
    const double v = raw / divisor_[i];
    // A temperature below absolute zero is no reading either (firmware garbage), not an outlier.
    out[i] = sentinel(raw) || (v < kAbsoluteZeroCelsius && channels_[i].unit == "celsius") ? std::nan("") : v;
  }
}

}  // namespace reveal::telemetry
