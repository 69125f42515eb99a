#include "telemetry/rdma/rdma.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <system_error>

#include "telemetry/rdma/port_files.h"

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "rdma";
namespace fs = std::filesystem;

// "mlx5_2" < "mlx5_10": digit runs compare by value, everything else by character.
bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// A file name as a channel field: characters other than letters, digits, '_' and '-' (spaces,
// commas, dots some drivers put in counter names) become '_', so the name stays one token of
// the channel naming rule and one CSV cell.
std::string field_of(std::string_view file) {
  std::string f(file);
  for (char& c : f)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) c = '_';
  return f;
}

// Entry names under `dir` (directories when `dirs`, else non-directories), sorted naturally.
std::vector<std::string> list(const fs::path& dir, bool dirs) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2) == dirs) out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return natural_less(a, b); });
  return out;
}
}  // namespace

ProbeStatus RdmaProbe::open(const fs::path& root) {
  channels_.clear();
  fields_.clear();
  saturation_.clear();
  std::vector<ChannelInfo> saturation_channels;
  const auto base = root / "sys/class/infiniband";
  const auto devices = list(base, true);
  if (devices.empty()) return {false, "no RDMA devices (/sys/class/infiniband missing or empty)"};

  // Adds a channel read from `path` if the file opens and parses at open.
  auto add = [&](const fs::path& path, Format format, std::string field, std::string_view index,
                 std::string unit, Kind kind, double scale, std::string help) {
    Field f;
    if (!f.file.open(path)) return;
    auto text = f.file.read();
    if (!text) return;
    const bool ok = format == Format::enum_prefix ? rdma::parse_enum_prefix(*text).has_value()
                    : format == Format::rate      ? rdma::parse_rate_gbps(*text).has_value()
                                                  : rdma::parse_counter(*text).has_value();
    if (!ok) return;  // e.g. "N/A" on iWARP devices
    f.format = format;
    f.scale = scale;
    fields_.push_back(std::move(f));
    channels_.push_back({channel_name(kSource, field, index), std::move(unit), kind,
                         Subsystem::interconnect, 64, std::move(help)});
  };

  for (const auto& dev : devices) {
    for (const auto& port : list(base / dev / "ports", true)) {
      if (!parse_u64(port)) continue;
      const auto dir = base / dev / "ports" / port;
      const std::string index = dev + "." + port;
      add(dir / "state", Format::enum_prefix, "state", index, "enum", Kind::state, 1,
          "IB port state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER");
      add(dir / "phys_state", Format::enum_prefix, "phys_state", index, "enum", Kind::state, 1,
          "IB physical port state: 1 Sleep, 2 Polling, 3 Disabled, 4 Training, 5 LinkUp, "
          "6 LinkErrorRecovery");
      add(dir / "rate", Format::rate, "rate", index, "Gb/s", Kind::gauge, 1,
          "active link rate (lanes x lane speed)");
      std::set<std::string> pma;
      Saturation sat;
      for (const auto& name : list(dir / "counters", false)) {
        const auto m = rdma::counter_meta(name, false);
        std::string help = m.help.empty() ? name + " (IB port counter)" : std::string(m.help);
        pma.insert(name);
        const std::size_t before = fields_.size();
        add(dir / "counters" / name, Format::counter, field_of(name), index, std::string(m.unit),
            Kind::counter, m.scale, std::move(help));
        if (const int bits = rdma::pma_counter_bits(name); bits > 0 && fields_.size() > before)
          sat.counters.emplace_back(before, std::ldexp(1.0, bits) - 1);
      }
      if (!sat.counters.empty()) {
        saturation_.push_back(std::move(sat));
        saturation_channels.push_back({channel_name(kSource, "saturated_counters", index), "count", Kind::gauge,
                                       Subsystem::interconnect, 64,
                                       "port counters stuck at their PMA maximum (they no longer count; "
                                       "clear them with perfquery -R)"});
      }
      for (const auto& name : list(dir / "hw_counters", false)) {
        if (name == "lifespan") continue;  // a setting (cache time, ms), not a counter
        const auto m = rdma::counter_meta(name, true);
        std::string help =
            m.help.empty() ? name + " (driver hw counter)" : std::string(m.help);
        add(dir / "hw_counters" / name, Format::counter, field_of(pma.count(name) ? "hw_" + name : name),
            index, std::string(m.unit), Kind::counter, m.scale, std::move(help));
      }
    }
    // Device-level driver counters (<dev>/hw_counters/, not per port: e.g. mlx5's
    // completion-queue and doorbell counters): channels rdma:<field>.<dev>.
    for (const auto& name : list(base / dev / "hw_counters", false)) {
      if (name == "lifespan") continue;
      const auto m = rdma::counter_meta(name, true);
      std::string help = m.help.empty() ? name + " (driver hw counter, whole device)" : std::string(m.help);
      add(base / dev / "hw_counters" / name, Format::counter, field_of(name), dev, std::string(m.unit),
          Kind::counter, m.scale, std::move(help));
    }
  }
  if (channels_.empty())
    return {false, "no readable RDMA port files under " + base.string() + "/*/ports"};
  // The saturation channels follow the file channels (sample() fills them from those).
  for (std::size_t k = 0; k < saturation_.size(); ++k) saturation_[k].channel = channels_.size() + k;
  channels_.insert(channels_.end(), saturation_channels.begin(), saturation_channels.end());
  return {true, {}};
}

void RdmaProbe::sample(std::span<double> out) {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    Field& f = fields_[i];
    auto text = f.file.read();
    std::optional<double> v;
    if (text) {
      switch (f.format) {
        case Format::enum_prefix: v = rdma::parse_enum_prefix(*text); break;
        case Format::rate: v = rdma::parse_rate_gbps(*text); break;
        case Format::counter: v = rdma::parse_counter(*text); break;
      }
    }
    out[i] = v ? *v * f.scale : std::nan("");
  }
  for (const Saturation& s : saturation_) {
    double n = 0;
    bool any = false;
    for (const auto& [c, max] : s.counters) {
      if (std::isnan(out[c])) continue;
      any = true;
      n += out[c] / fields_[c].scale == max;
    }
    out[s.channel] = any ? n : std::nan("");
  }
}

}  // namespace reveal::telemetry
