#include "telemetry/perf/uncore.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace reveal::telemetry {
namespace {
namespace fs = std::filesystem;

std::optional<std::string> read_trimmed(const fs::path& p) {
  FileReader f;
  if (!f.open(p)) return std::nullopt;
  auto t = f.read();
  if (!t) return std::nullopt;
  return std::string(trim(*t));
}

std::optional<std::uint64_t> parse_number(std::string_view s) {
  if (s.starts_with("0x") || s.starts_with("0X")) {
    s.remove_prefix(2);
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
  }
  return parse_u64(s);
}

// Bytes per unit of a sysfs event .unit file.
std::optional<double> unit_bytes(std::string_view unit) {
  if (unit == "MiB") return 1048576.0;
  if (unit == "KiB") return 1024.0;
  if (unit == "GiB") return 1073741824.0;
  if (unit == "B" || unit == "Bytes" || unit == "bytes") return 1.0;
  if (unit == "MB") return 1e6;
  return std::nullopt;
}

// One PMU instance to open events on.
struct UncorePmu {
  std::string name;
  std::uint32_t type = 0;
  std::vector<int> cpus;
};

// type and cpumask of <dir>; reason on failure.
std::string read_pmu(const fs::path& dir, UncorePmu& pmu) {
  pmu.name = dir.filename().string();
  const auto type = read_trimmed(dir / "type");
  auto t = type ? parse_u64(*type) : std::nullopt;
  if (!t) return pmu.name + ": no type file";
  pmu.type = static_cast<std::uint32_t>(*t);
  const auto mask = read_trimmed(dir / "cpumask");
  auto cpus = mask ? parse_cpu_list(*mask) : std::nullopt;
  if (!cpus || cpus->empty()) return pmu.name + ": no cpumask";
  pmu.cpus = *cpus;
  return {};
}

bool numbered(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}
}  // namespace

std::string encode_sysfs_event(const fs::path& pmu_dir, std::string_view terms, PerfEvent& ev) {
  ev.config = ev.config1 = ev.config2 = 0;
  while (!terms.empty()) {
    const auto comma = terms.find(',');
    std::string_view term = trim(terms.substr(0, comma));
    terms.remove_prefix(comma == std::string_view::npos ? terms.size() : comma + 1);
    if (term.empty()) continue;
    const auto eq = term.find('=');
    const std::string key(trim(term.substr(0, eq)));
    std::uint64_t value = 1;
    if (eq != std::string_view::npos) {
      auto v = parse_number(trim(term.substr(eq + 1)));
      if (!v) return "bad value in term '" + std::string(term) + "'";
      value = *v;
    }
    const auto fmt = read_trimmed(pmu_dir / "format" / key);
    if (!fmt) return "no format/" + key;
    std::string_view f = *fmt;
    const auto colon = f.find(':');
    if (colon == std::string_view::npos) return "bad format/" + key + ": " + std::string(f);
    const std::string_view field = f.substr(0, colon);
    std::uint64_t* target = field == "config"    ? &ev.config
                            : field == "config1" ? &ev.config1
                            : field == "config2" ? &ev.config2
                                                 : nullptr;
    if (!target) return "bad format/" + key + ": " + std::string(f);
    std::string_view ranges = f.substr(colon + 1);
    std::uint64_t rest = value;
    while (!ranges.empty()) {
      const auto c = ranges.find(',');
      const std::string_view r = ranges.substr(0, c);
      ranges.remove_prefix(c == std::string_view::npos ? ranges.size() : c + 1);
      const auto dash = r.find('-');
      auto lo = parse_u64(r.substr(0, dash));
      auto hi = dash == std::string_view::npos ? lo : parse_u64(r.substr(dash + 1));
      if (!lo || !hi || *hi < *lo || *hi > 63) return "bad format/" + key + ": " + std::string(f);
      const unsigned width = static_cast<unsigned>(*hi - *lo + 1);
      const std::uint64_t mask = width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
      *target |= (rest & mask) << *lo;
      rest = width >= 64 ? 0 : rest >> width;
    }
    if (rest != 0) return "value of " + key + " does not fit format/" + key;
  }
  return {};
}

PerfUncoreProbe::PerfUncoreProbe(PerfEnv env) : env_(std::move(env)), groups_(env_.sys) {}

ProbeStatus PerfUncoreProbe::open(const fs::path& root) {
  groups_.clear();
  channels_.clear();
  const fs::path devices = root / "sys/bus/event_source/devices";
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(devices, ec)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());

  // (pmu, event, channel slot, bytes per count) to open, one group each.
  struct Planned {
    UncorePmu pmu;
    PerfEvent ev;
    std::size_t slot;
    double bytes;
  };
  std::vector<Planned> plan;
  std::vector<std::string> problems;
  const CpuId id = read_cpu_id(root);

  // Intel integrated memory controllers.
  for (const auto& dir : dirs) {
    const std::string name = dir.filename().string();
    if (!numbered(name, "uncore_imc_")) continue;
    // Every IMC must be usable, or the totals would silently leave channels out.
    UncorePmu pmu;
    if (auto why = read_pmu(dir, pmu); !why.empty()) return {false, "no usable uncore memory PMU: " + why};
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string ev_name = k == 0 ? "cas_count_read" : "cas_count_write";
      const auto terms = read_trimmed(dir / "events" / ev_name);
      PerfEvent ev;
      ev.name = name + "/" + ev_name;
      ev.type = pmu.type;
      std::string why = terms ? encode_sysfs_event(dir, *terms, ev) : "no events/" + ev_name;
      const double scale = [&] {
        const auto s = read_trimmed(dir / "events" / (ev_name + ".scale"));
        auto v = s ? parse_double(*s) : std::optional<double>(1.0);
        return v ? *v : std::nan("");
      }();
      const auto unit = read_trimmed(dir / "events" / (ev_name + ".unit"));
      const auto per_unit = unit ? unit_bytes(*unit) : std::optional<double>(1.0);
      if (why.empty() && (!std::isfinite(scale) || !per_unit))
        why = "unusable " + ev_name + ".scale/.unit";
      if (!why.empty()) return {false, "no usable uncore memory PMU: " + name + ": " + why};
      plan.push_back({pmu, ev, k, scale * *per_unit});
    }
  }
  const bool intel = !plan.empty();
  if (intel) {
    channels_.push_back({channel_name("perf", "uncore_imc_read_bytes"), "bytes", Kind::counter, Subsystem::memory,
                         64, "DRAM bytes read, all memory controllers (uncore IMC CAS reads × 64 B)"});
    channels_.push_back({channel_name("perf", "uncore_imc_write_bytes"), "bytes", Kind::counter, Subsystem::memory,
                         64, "DRAM bytes written, all memory controllers (uncore IMC CAS writes × 64 B)"});
  }

  // AMD data fabric, family 17h.
  const fs::path df = devices / "amd_df";
  if (!intel && fs::is_directory(df, ec)) {
    UncorePmu pmu;
    if (id.vendor != CpuVendor::amd || id.family != 0x17) {
      problems.push_back("amd_df: DRAM channel events known for AMD family 17h only (cpu family " +
                         std::to_string(id.family) + ")");
    } else if (auto why = read_pmu(df, pmu); !why.empty()) {
      problems.push_back(why);
    } else {
      for (int n = 0; n < 8; ++n) {
        PerfEvent ev;
        ev.name = "amd_df/dram_channel_data_controller_" + std::to_string(n);
        ev.type = pmu.type;
        char terms[64];
        std::snprintf(terms, sizeof terms, "event=0x%x,umask=0x38", 0x07 + 0x40 * n);
        if (auto why = encode_sysfs_event(df, terms, ev); !why.empty()) {
          problems.push_back("amd_df: " + why);
          plan.clear();
          break;
        }
        plan.push_back({pmu, ev, 0, 64.0});
      }
      if (!plan.empty())
        channels_.push_back({channel_name("perf", "amd_df_dram_bytes"), "bytes", Kind::counter, Subsystem::memory,
                             64, "DRAM bytes read and written, all channels (data fabric requests with data × 64 B)"});
    }
  }

  if (plan.empty()) {
    channels_.clear();
    if (!problems.empty()) return {false, "no usable uncore memory PMU: " + problems.front()};
    return {false, "no uncore memory-controller PMU (uncore_imc_<N>, amd_df) under " + devices.string()};
  }
  for (const auto& p : plan)
    for (int cpu : p.pmu.cpus) {
      PerfSlot slot;
      slot.host = p.slot;
      slot.scale = p.bytes;
      if (auto e = groups_.add(cpu, std::span<const PerfEvent>(&p.ev, 1), std::span<const PerfSlot>(&slot, 1))) {
        groups_.clear();
        channels_.clear();
        return {false, perf_open_error(p.ev.name, e->err, true)};
      }
    }
  groups_.finish(channels_.size());
  return {true, {}};
}

}  // namespace reveal::telemetry
