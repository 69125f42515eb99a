// read_config(), the config source registry and change helpers; see reveal/host_config.h.
#include <mutex>
#include <utility>

#include "reveal/host_config.h"
#include "reveal/registry.h"
#include "telemetry/host_config/config_files.h"

namespace reveal {
namespace {

struct Sources {
  std::mutex mu;
  std::vector<std::pair<std::string, ConfigSource>> list;
};

Sources& sources() {
  static Sources s;
  return s;
}

}  // namespace

void register_config_source(const std::string& name, ConfigSource source) {
  auto& s = sources();
  std::lock_guard lock(s.mu);
  for (auto& [n, fn] : s.list)
    if (n == name) {
      fn = std::move(source);
      return;
    }
  s.list.emplace_back(name, std::move(source));
}

ConfigSnapshot read_config(const std::filesystem::path& root) {
  using namespace telemetry::config;
  (void)probe_registry();  // runs every folder's add_*_probes(), where sources register
  ConfigSnapshot out;
  read_kernel_config(root, out);
  read_cpu_config(root, out);
  read_net_config(root, out);
  read_driver_config(root, out);
  std::vector<ConfigSource> extra;
  {
    auto& s = sources();
    std::lock_guard lock(s.mu);
    for (const auto& [n, fn] : s.list) extra.push_back(fn);
  }
  for (const auto& fn : extra) {
    ConfigSnapshot part;
    try {
      fn(root, part);
    } catch (...) {
      continue;  // a broken source loses its own keys only
    }
    for (auto& [k, v] : part)
      if (!v.empty()) out.insert_or_assign(k, std::move(v));
  }
  return out;
}

std::vector<ConfigChange> diff_config(const ConfigSnapshot& before, const ConfigSnapshot& after,
                                      std::int64_t t_unix_ns) {
  std::vector<ConfigChange> out;
  auto a = before.begin();
  auto b = after.begin();
  while (a != before.end() || b != after.end()) {
    if (b == after.end() || (a != before.end() && a->first < b->first)) {
      out.push_back({t_unix_ns, a->first, a->second, ""});
      ++a;
    } else if (a == before.end() || b->first < a->first) {
      out.push_back({t_unix_ns, b->first, "", b->second});
      ++b;
    } else {
      if (a->second != b->second) out.push_back({t_unix_ns, a->first, a->second, b->second});
      ++a;
      ++b;
    }
  }
  return out;
}

ConfigSnapshot config_at_end(const Recording& rec) {
  ConfigSnapshot s = rec.config;
  for (const auto& c : rec.config_changes) {
    if (c.value.empty())
      s.erase(c.key);
    else
      s[c.key] = c.value;
  }
  return s;
}

Event config_event(const ConfigChange& c) {
  auto shown = [](const std::string& v) { return v.empty() ? std::string("(none)") : v; };
  return {c.t_unix_ns, "config", "config_change", 0,
          c.key + ": " + shown(c.old_value) + " → " + shown(c.value)};
}

}  // namespace reveal
