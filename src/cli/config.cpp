// `reveal config show|diff`: the host configuration a recording was made under (kernel,
// governor, THP, MTU, PCIe link, driver versions...; see reveal/host_config.h), and what differs
// between two recordings or between a recording and a live root.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "reveal/host_config.h"
#include "reveal/store.h"
#include "reveal/store_reader.h"
#include "reveal/units.h"

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
    write_stdout(doc.dump(2) + "\n");
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
    write_stdout(doc.dump(2) + "\n");
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

}  // namespace

Action add_config(CLI::App& app) {
  struct Opts {
    std::string a, b, root = "/";
    bool json = false, at_end = false, root_given = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand("config", "Show or compare the host configuration of recordings");
  sub->require_subcommand(1);
  set_help_footer(sub, {"reveal config show run.db", "reveal config diff a.db b.db", "reveal config show --help"});
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
  return [o, show_cmd, diff_cmd, root_opt]() -> int {
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
