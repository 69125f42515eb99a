// `reveal config show|diff`: the host configuration a recording was made under (kernel,
// governor, THP, MTU, PCIe link, driver versions...; see reveal/host_config.h), and what differs
// between two recordings or between a recording and a live root; `reveal config drift`: the
// settings on which a minority of many hosts differs from the rest (reveal/config_drift.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "reveal/config_drift.h"
#include "reveal/host_config.h"
#include "reveal/store.h"
#include "reveal/store_reader.h"
#include "reveal/units.h"
#include "file_args.h"
#include "time_arg.h"
#ifdef REVEAL_WITH_HTTP
#include "reveal/agent.h"
#include "reveal/prometheus_source.h"
#include "fleet/prometheus_source.h"
#endif

namespace reveal::cli {
namespace {

struct Source {
  std::string label;  // the store path, or "<root> (live)"
  ConfigSnapshot config;
  std::vector<ConfigChange> changes;
  std::int64_t start_unix_ns = 0;
  bool live = false;
};

Source load_source(const std::string& store, const std::string& root, bool at_end) {
  Source s;
  if (store.empty()) {
    check_root(root);
    s.label = root + " (live)";
    s.config = read_config(root);
    s.live = true;
    return s;
  }
  // The configuration tables alone (no sample is read: a store of any length).
  Recording rec;
  {
    StoreReader reader(store, [](const ChannelInfo&) { return false; });
    rec.meta = reader.meta();
    reader.config(rec.config, rec.config_changes);
  }
  s.label = store;
  s.config = at_end ? config_at_end(rec) : rec.config;
  s.changes = std::move(rec.config_changes);
  s.start_unix_ns = rec.meta.start_unix_ns;
  return s;
}

std::size_t key_width(const ConfigSnapshot& m, std::size_t w = 0) {
  for (const auto& [k, v] : m) w = std::max(w, k.size());
  return w;
}

int show(const std::string& store, const std::string& root, bool json) {
  Source s = load_source(store, root, false);
  if (json) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : s.changes)
      changes.push_back({{"t_unix_ns", c.t_unix_ns}, {"key", c.key}, {"old", c.old_value}, {"new", c.value}});
    nlohmann::json doc = {{"schema", "reveal.config/1"}, {"source", s.label}, {"config", s.config},
                          {"changes", changes}};
    if (!s.live) doc["start_unix_ns"] = s.start_unix_ns;
    write_stdout(doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return kExitOk;
  }
  std::string out = s.live ? fmt::format("configuration under {}: {} keys\n", s.label, s.config.size())
                           : fmt::format("configuration of {} at start ({}): {} keys\n", s.label,
                                         format_utc(s.start_unix_ns), s.config.size());
  const std::size_t w = key_width(s.config);
  for (const auto& [k, v] : s.config) out += fmt::format("  {:<{}}  {}\n", k, w, v);
  if (!s.live) {
    out += fmt::format("changes during the run: {}\n", s.changes.size());
    std::size_t cw = 0;
    for (const auto& c : s.changes) cw = std::max(cw, c.key.size());
    for (const auto& c : s.changes)
      out += fmt::format("  {}  +{:.1f}s  {:<{}}  {} → {}\n", format_utc(c.t_unix_ns),
                         double(c.t_unix_ns - s.start_unix_ns) * 1e-9, c.key, cw,
                         c.old_value.empty() ? "(none)" : c.old_value, c.value.empty() ? "(none)" : c.value);
  }
  write_stdout(out);
  return kExitOk;
}

int diff(const std::string& a_store, const std::string& b_store, const std::string& root, bool at_end,
         bool json) {
  Source a = load_source(a_store, root, at_end);
  Source b = load_source(b_store, root, at_end);
  ConfigSnapshot only_a, only_b;
  std::vector<ConfigChange> different;
  std::size_t same = 0;
  for (auto& c : diff_config(a.config, b.config, 0)) {
    if (c.value.empty())
      only_a[c.key] = c.old_value;
    else if (c.old_value.empty())
      only_b[c.key] = c.value;
    else
      different.push_back(std::move(c));
  }
  for (const auto& [k, v] : a.config) same += b.config.count(k) && b.config.at(k) == v;
  const char* when = at_end ? "end" : "start";
  if (json) {
    nlohmann::json diffs = nlohmann::json::object();
    for (const auto& c : different) diffs[c.key] = {{"a", c.old_value}, {"b", c.value}};
    nlohmann::json doc = {{"schema", "reveal.config_diff/1"}, {"a", a.label}, {"b", b.label}, {"at", when},
                          {"only_in_a", only_a}, {"only_in_b", only_b}, {"different", diffs}, {"same", same}};
    write_stdout(doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return kExitOk;
  }
  std::size_t w = key_width(only_b, key_width(only_a));
  std::size_t vw = 0;
  for (const auto& c : different) {
    w = std::max(w, c.key.size());
    vw = std::max(vw, c.old_value.size());
  }
  std::string out = fmt::format("config diff at {}: A = {}, B = {}\n", when, a.label, b.label);
  out += fmt::format("only in A: {}\n", only_a.size());
  for (const auto& [k, v] : only_a) out += fmt::format("  {:<{}}  {}\n", k, w, v);
  out += fmt::format("only in B: {}\n", only_b.size());
  for (const auto& [k, v] : only_b) out += fmt::format("  {:<{}}  {}\n", k, w, v);
  out += fmt::format("different: {}\n", different.size());
  for (const auto& c : different) out += fmt::format("  {:<{}}  {:<{}}  {}\n", c.key, w, c.old_value, vw, c.value);
  out += fmt::format("same: {}\n", same);
  write_stdout(out);
  return kExitOk;
}

struct DriftInputs {
  std::vector<std::string> stores, roots;
  std::string prometheus, match, at = "now";
  double timeout_s = 60;
  bool at_end = false, json = false;
};

// Every host's keys, values and name as the agents expose them to Prometheus (printable ASCII, at
// most 1024 bytes; config_text, reveal/config_drift.h): the three sources compare alike, and
// nothing a host or server sends (a newline, an escape sequence, a 20-MB command line) reaches the
// terminal. A host without a snapshot (a store recorded without one, an empty directory) is left
// out, on one line of stderr: every key would be "missing" there.
std::vector<HostConfig> drift_hosts(const DriftInputs& in) {
  std::vector<std::string> files = in.stores;
  files.insert(files.end(), in.roots.begin(), in.roots.end());
  check_distinct(files);
  std::vector<HostConfig> given;
  for (const auto& store : in.stores) given.push_back({store, load_source(store, "", in.at_end).config});
  for (const auto& root : in.roots) given.push_back({root, load_source("", root, false).config});
  if (!in.prometheus.empty()) {
#ifdef REVEAL_WITH_HTTP
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch()).count();
    const std::int64_t at = parse_wall_time("--at", in.at, now);
    for (auto& h : read_prometheus_configs(in.prometheus, in.match, at, in.timeout_s)) given.push_back(std::move(h));
#else
    throw UsageError("--prometheus: this reveal was built without HTTP support (REVEAL_STATIC_DEPS=ON)");
#endif
  }
  std::vector<HostConfig> hosts;
  std::set<std::string> seen;
  for (auto& h : given) {
    if (h.config.empty()) {
      std::fprintf(stderr, "reveal: config drift: %s has no configuration snapshot; left out\n",
                   config_text(h.host).c_str());
      continue;
    }
    HostConfig exposed{config_text(h.host), {}};
    for (const auto& [k, v] : h.config) exposed.config.emplace(config_text(k), config_text(v));
    if (!seen.insert(exposed.host).second)
      throw std::runtime_error("config drift: two hosts are named " + exposed.host + "; each must be named once");
    hosts.push_back(std::move(exposed));
  }
  return hosts;
}

// "a, b and 3 more": at most `shown` names.
std::string names(const std::vector<std::string>& hosts, std::size_t shown = 5) {
  std::string out;
  for (std::size_t i = 0; i < hosts.size() && i < shown; ++i) out += (i ? ", " : "") + hosts[i];
  if (hosts.size() > shown) out += fmt::format(" and {} more", hosts.size() - shown);
  return out;
}

nlohmann::json value_json(const DriftValue& v) {
  return {{"value", v.value.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.value)}, {"hosts", v.hosts}};
}

int drift(const DriftInputs& in) {
  const std::vector<HostConfig> hosts = drift_hosts(in);
  if (hosts.size() < 2)
    throw UsageError(fmt::format("config drift: {} host{} with a configuration; give at least two (stores, --root directories or "
                                 "--prometheus)",
                                 hosts.size(), hosts.size() == 1 ? "" : "s"));
  const DriftReport r = find_config_drift(hosts);
  if (in.json) {
    nlohmann::json drifts = nlohmann::json::array(), split = nlohmann::json::array(), names_j = nlohmann::json::array();
    for (const auto& h : hosts) names_j.push_back(h.host);
    for (const auto& d : r.drifts) {
      nlohmann::json minority = nlohmann::json::array();
      for (const auto& m : d.minority) minority.push_back(value_json(m));
      drifts.push_back({{"key", d.key},
                        {"area", d.area},
                        {"importance", to_string(d.importance)},
                        {"score", d.score},
                        {"majority", {{"value", d.majority.value.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.majority.value)},
                                      {"hosts", d.majority.count}}},
                        {"minority", minority},
                        {"why", d.why},
                        {"action", d.action}});
    }
    for (const auto& k : r.split) {
      nlohmann::json values = nlohmann::json::array();
      for (const auto& v : k.values) values.push_back(value_json(v));
      split.push_back({{"key", k.key}, {"values", values}});
    }
    nlohmann::json doc = {{"schema", "reveal.config_drift/1"}, {"hosts", names_j},
                          {"drifts", drifts}, {"split", split}, {"same", r.same}, {"skipped", r.skipped}};
    if (!in.stores.empty()) doc["stores_at"] = in.at_end ? "end" : "start";
    if (!in.prometheus.empty()) doc["prometheus_at"] = in.at;
    write_stdout(doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return kExitOk;
  }
  std::string out = fmt::format(
      "configuration drift across {} hosts: {} setting{} where a minority differs, {} split, {} alike\n", r.hosts,
      r.drifts.size(), r.drifts.size() == 1 ? "" : "s", r.split.size(), r.same);
  std::size_t rank = 0;
  for (const auto& d : r.drifts) {
    out += fmt::format("{:2}. {}  ({}, {} importance)\n", ++rank, d.key, d.area, to_string(d.importance));
    for (const auto& m : d.minority)
      out += fmt::format("      {} on {}\n", drift_value_text(m.value), names(m.hosts));
    out += fmt::format("      the rest: {} on {} of {} hosts\n", drift_value_text(d.majority.value),
                       d.majority.count, r.hosts);
    out += fmt::format("      why: {}\n      action: {}\n", d.why, d.action);
  }
  if (!r.split.empty()) {
    out += "split (no value on more than half the hosts, or none a fifth of the hosts ahead of the next):\n";
    for (const auto& k : r.split) {
      out += fmt::format("  {}:", k.key);
      for (std::size_t i = 0; i < k.values.size(); ++i)
        out += fmt::format("{} {} on {}", i ? ";" : "", drift_value_text(k.values[i].value), names(k.values[i].hosts, 3));
      out += "\n";
    }
    if (r.hosts == 2) out += "(two hosts: `reveal config diff` shows their differences side by side)\n";
  }
  if (r.skipped) out += fmt::format("left out as different on every host by nature (boot id, GPU UUIDs, pod interfaces): {} keys\n", r.skipped);
  write_stdout(out);
  return kExitOk;
}

}  // namespace

Action add_config(CLI::App& app) {
  struct Opts {
    std::string a, b, root = "/";
    bool json = false, at_end = false, root_given = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand("config", "Show or compare the host configuration of recordings and hosts");
  sub->require_subcommand(1);
  set_help_footer(sub, {"reveal config show run.db", "reveal config diff a.db b.db", "reveal config drift host-*.db",
                        "reveal config show --help"});
  auto* show_cmd = sub->add_subcommand("show", "Print a recording's configuration snapshot and its changes");
  set_help_footer(show_cmd, {"reveal config show run.db", "reveal config show --root /host --json"});
  show_cmd->add_option("store", o->a, "Store written by `reveal record` (omit to read the live --root)");
  show_cmd->add_option("--root", o->root, "Read the live configuration under this directory")->capture_default_str();
  show_cmd->add_flag("--json", o->json, "Emit JSON instead of text");
  auto* diff_cmd = sub->add_subcommand("diff", "Compare the configuration of two recordings (or one and a live --root)");
  set_help_footer(diff_cmd, {"reveal config diff a.db b.db", "reveal config diff a.db b.db --end --json",
                             "reveal config diff run.db --root /"});
  diff_cmd->add_option("a", o->a, "First store")->required();
  diff_cmd->add_option("b", o->b, "Second store (omit with --root to compare against the live host)");
  auto* root_opt = diff_cmd->add_option("--root", o->root, "Compare against the live configuration under this directory");
  diff_cmd->add_flag("--end", o->at_end, "Compare the configuration at the end of each run (start + changes)");
  diff_cmd->add_flag("--json", o->json, "Emit JSON instead of text");
  auto d = std::make_shared<DriftInputs>();
  auto* drift_cmd = sub->add_subcommand(
      "drift", "Name the settings on which a minority of many hosts differs from the rest, ranked, with actions");
  set_help_footer(drift_cmd, {"reveal config drift host-*.db", "reveal config drift --root /mnt/a --root /mnt/b --root /mnt/c",
                              "reveal config drift --prometheus http://prom:9090 --match '{job=\"reveal\"}' --json"});
  drift_cmd->add_option("stores", d->stores, "Stores written by `reveal record` or `reveal agent`, one per host");
  drift_cmd->add_option("--root", d->roots, "Also read the live configuration under this directory (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->take_all();
  drift_cmd->add_option("--prometheus", d->prometheus,
                        "Also read the configuration every agent exposed to this Prometheus server "
                        "(reveal_host_config_info), one host per instance");
  drift_cmd->add_option("--match", d->match, "With --prometheus: label matchers, e.g. {job=\"reveal\"}");
  drift_cmd->add_option("--at", d->at, "With --prometheus: when (now, -1h, Unix seconds, 2026-11-30T21:00:00Z)")
      ->capture_default_str();
  auto* timeout_opt = drift_cmd->add_option("--timeout", d->timeout_s, "With --prometheus: seconds the request may take in all")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  drift_cmd->add_flag("--end", d->at_end, "Compare the stores' configuration at the end of each run (start + changes)");
  drift_cmd->add_flag("--json", d->json, "Emit JSON (schema reveal.config_drift/1) instead of text");
  return [o, d, show_cmd, diff_cmd, drift_cmd, root_opt, timeout_opt]() -> int {
    if (drift_cmd->parsed()) {
      if (d->prometheus.empty() && (!d->match.empty() || d->at != "now" || timeout_opt->count() > 0))
        throw UsageError("config drift: --match, --at and --timeout go with --prometheus");
      if (d->at_end && d->stores.empty()) throw UsageError("config drift: --end goes with stores");
#ifdef REVEAL_WITH_HTTP
      if (!d->prometheus.empty()) {
        try {
          fleet::parse_url(d->prometheus);
        } catch (const PrometheusError& e) {
          throw UsageError(std::string("--prometheus: ") + e.what());
        }
        try {
          check_config_selector(d->match);
        } catch (const PrometheusError& e) {
          throw UsageError(std::string("--match: ") + e.what());
        }
      }
#endif
      return drift(*d);
    }
    if (show_cmd->parsed()) return show(o->a, o->root, o->json);
    if (diff_cmd->parsed()) {
      const bool live = root_opt->count() > 0;
      if (o->b.empty() == !live)
        throw UsageError("config diff: give a second store or --root DIR, exactly one of them");
      return diff(o->a, o->b, o->root, o->at_end, o->json);
    }
    return kExitUsage;
  };
}

}  // namespace reveal::cli
