// `reveal docs man` and `reveal docs completion bash`: the man page and the bash completion
// script, generated from the CLI11 tree (docs_gen.h; docs/reveal.1 and docs/reveal.bash).
// `reveal docs metrics`: docs/METRICS.md, generated from the probe registry. Every registered
// probe is opened on each --root (fixture trees) and its channels are merged into one table,
// with per-instance indices collapsed into patterns ("proc.stat:user.cpu<N>",
// "proc.net.dev:rx_bytes.<iface>"; rules at collapse()). Probes that read the running host
// rather than the root (they open even on an empty root: perf, vendor libraries) or that no
// root has, go after a "<!-- host-dependent -->" marker: only the part above it is
// reproducible anywhere, and tests/cli/metrics_doc_test.sh compares that part
// (scripts/gen_metrics_doc.sh regenerates the file).
#include <algorithm>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "commands.h"
#include "docs_gen.h"
#include "file_args.h"
#include "output_file.h"
#include "reveal/registry.h"

namespace reveal::cli {
namespace {

namespace fs = std::filesystem;

// Index collapsing, per probe (an index is everything after the first '.' of the field, and
// may itself have dot-separated parts: "cpu0.C1", "package-0.dram", "mlx5_0.1"):
//  * a part "<letters><digits>" becomes "<letters><N>", a number "<N>"; other parts stay;
//  * if the first parts of all of a probe's indices collapse to one numbered shape, the
//    instances are numbered: each index is collapsed part by part ("cpu<N>", "cpu<N>.POLL",
//    "package-<N>.dram");
//  * otherwise they are names chosen by the host (interfaces, disks, HCAs, chips, cgroups) and
//    the whole index becomes one placeholder from the probe's main subsystem (its most common;
//    a tie goes to the first channel's): "<iface>",
//    "<disk>", "<device>" (interconnect), "<gpu>", else "<instance>". Network and storage
//    instances are always names ("eth0" and "lo" alike). An instance whose channel has another
//    subsystem than the same field of the other instances (the most common one; a tie goes to
//    the first seen) keeps its collapsed index, so that the exception shows: proc.diskstats'
//    "zram<N>" rows are memory, "<disk>" ones storage.
std::string collapse_part(std::string_view part) {
  std::size_t digits = part.size();
  while (digits > 0 && part[digits - 1] >= '0' && part[digits - 1] <= '9') --digits;
  if (digits == part.size()) return std::string(part);
  return std::string(part.substr(0, digits)) + "<N>";
}

std::string collapse_parts(std::string_view index) {
  std::string out;
  while (true) {
    const auto dot = index.find('.');
    out += collapse_part(index.substr(0, dot));
    if (dot == std::string_view::npos) return out;
    out += '.';
    index.remove_prefix(dot + 1);
  }
}

struct Row {
  std::string pattern, unit, kind, subsystem, help;
};

struct ProbeDoc {
  std::string name, description, reason;
  bool enabled = true, live = false;
  std::vector<std::string> available_on;  // root labels
  std::vector<ChannelInfo> channels;      // from every root, in order
  std::vector<Row> rows;                  // channels collapsed into patterns
};

std::size_t index_start(const std::string& name) {
  const auto colon = name.find(':');
  return colon == std::string::npos ? std::string::npos : name.find('.', colon);
}

void collapse(ProbeDoc& d) {
  std::set<std::string> first_shapes;
  std::map<Subsystem, std::size_t> subsystems;
  bool numbered = true;
  for (const auto& c : d.channels) {
    const auto dot = index_start(c.name);
    if (dot == std::string::npos) continue;
    const std::string_view index = std::string_view(c.name).substr(dot + 1);
    const std::string shape = collapse_part(index.substr(0, index.find('.')));
    numbered = numbered && shape.ends_with("<N>") && shape != "<N>";
    first_shapes.insert(shape);
    ++subsystems[c.subsystem];
  }
  Subsystem main = d.channels.empty() ? Subsystem::system : d.channels.front().subsystem;  // a tie: the first's
  std::size_t best = subsystems[main];
  for (const auto& [s, n] : subsystems)
    if (n > best) best = n, main = s;
  numbered = numbered && first_shapes.size() == 1 && main != Subsystem::network && main != Subsystem::storage;
  const std::string placeholder = main == Subsystem::network       ? "<iface>"
                                  : main == Subsystem::storage      ? "<disk>"
                                  : main == Subsystem::interconnect ? "<device>"
                                  : main == Subsystem::gpu          ? "<gpu>"
                                                                    : "<instance>";
  // Per field ("<source>:<field>"), its most common subsystem over the instances.
  std::map<std::string, std::vector<std::pair<Subsystem, std::size_t>>> field_subsystems;
  for (const auto& c : d.channels) {
    auto& counts = field_subsystems[c.name.substr(0, index_start(c.name))];
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == c.subsystem; });
    if (it == counts.end()) counts.emplace_back(c.subsystem, 1);
    else ++it->second;
  }
  const auto field_subsystem = [&](const std::string& field) {
    const auto& counts = field_subsystems[field];
    return std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  };
  std::set<std::string> seen;
  for (const auto& c : d.channels) {
    Row r{c.name, c.unit, std::string(to_string(c.kind)), std::string(to_string(c.subsystem)), c.help};
    if (const auto dot = index_start(c.name); dot != std::string::npos) {
      const std::string index = c.name.substr(dot + 1);
      const bool exception = c.subsystem != field_subsystem(c.name.substr(0, dot));
      const std::string pat = numbered || exception ? collapse_parts(index) : placeholder;
      r.pattern = c.name.substr(0, dot + 1) + pat;
      if (index.size() >= 2)
        for (auto p = r.help.find(index); p != std::string::npos; p = r.help.find(index, p + pat.size()))
          r.help.replace(p, index.size(), pat);
    }
    if (seen.insert(r.pattern).second) d.rows.push_back(std::move(r));
  }
}

std::string cell(std::string s) {
  for (std::size_t p = s.find('|'); p != std::string::npos; p = s.find('|', p + 2)) s.replace(p, 1, "\\|");
  return s;
}

std::string render(const std::vector<ProbeDoc>& docs, const std::vector<std::string>& labels) {
  std::string roots;
  for (const auto& l : labels) roots += (roots.empty() ? "`" : ", `") + l + "`";
  std::string out = fmt::format(
      "# Reveal metrics\n\n"
      "<!-- Generated by scripts/gen_metrics_doc.sh (`reveal docs metrics`); do not edit by hand. -->\n\n"
      "Every channel Reveal records, per probe, as found on the fixture roots {}. "
      "Channel names follow `<source>:<field>[.<index>]`; in the tables an index stands for every "
      "instance: `<N>` a number (`cpu<N>` any CPU, `package-<N>` any RAPL package), `<iface>` a "
      "network interface, `<disk>` a block device, `<device>` an interconnect device and port, "
      "`<gpu>` a GPU, `<instance>` any other named instance (hwmon chip, thermal zone, cgroup). "
      "Kinds: **counter** a monotonically increasing total (its rate per second is the signal), "
      "**gauge** a level, **state** an enumerated setting. "
      "`reveal probes [--json]` lists the channels of the host at hand.\n\n",
      roots);
  auto summary = [&](bool host_dependent) {
    std::string s = "| Probe | Default | Channels | Description |\n|---|---|---|---|\n";
    for (const auto& d : docs)
      if ((d.live || d.available_on.empty()) == host_dependent)
        s += fmt::format("| `{}` | {} | {} | {} |\n", d.name, d.enabled ? "yes" : "no", d.rows.size(),
                         cell(d.description));
    return s + "\n";
  };
  auto table = [&](const ProbeDoc& d) {
    std::string s = "| Channel | Unit | Kind | Subsystem | Meaning |\n|---|---|---|---|---|\n";
    for (const auto& r : d.rows)
      s += fmt::format("| `{}` | {} | {} | {} | {} |\n", r.pattern, cell(r.unit), r.kind, r.subsystem, cell(r.help));
    return s + "\n";
  };
  out += summary(false);
  for (const auto& d : docs) {
    if (d.live || d.available_on.empty()) continue;
    std::string on;
    for (const auto& l : d.available_on) on += (on.empty() ? "`" : ", `") + l + "`";
    out += fmt::format("## {}\n\n{}. Found on {}.\n\n", d.name, d.description, on);
    out += table(d);
  }
  out += "<!-- host-dependent -->\n## Host-dependent probes\n\n"
         "These probes read the running kernel or a vendor library rather than the root, or exist on "
         "no fixture root: what follows depends on the host that generated this file.\n\n";
  out += summary(true);
  for (const auto& d : docs) {
    if (!(d.live || d.available_on.empty())) continue;
    out += fmt::format("### {}\n\n{}.", d.name, d.description);
    if (d.live) out += " Reads the running host, not the root.";
    if (d.rows.empty()) out += fmt::format(" Not available here: {}.", d.reason);
    out += "\n\n";
    if (!d.rows.empty()) out += table(d);
  }
  while (out.size() >= 2 && out.ends_with("\n\n")) out.pop_back();
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

int metrics(std::vector<std::string> roots, const std::string& out_path) {
  check_distinct(roots);
  if (roots.empty()) roots.push_back("/");
  std::vector<std::string> labels;
  for (const auto& r : roots) {
    check_root(r);
    std::string l = fs::path(r).lexically_normal().filename().string();
    if (l.empty()) l = fs::path(r).lexically_normal().parent_path().filename().string();
    labels.push_back(l.empty() ? "/" : l);
  }
  char tmpl[] = "/tmp/reveal-docs-empty-XXXXXX";
  const char* empty = mkdtemp(tmpl);
  if (!empty) throw std::runtime_error("cannot create a temporary directory");
  std::vector<ProbeDoc> docs;
  for (const auto& f : probe_registry()) {
    ProbeDoc d;
    d.name = f.name;
    d.enabled = f.enabled_by_default;
    d.live = f.make()->open(empty).available;
    for (std::size_t i = 0; i < roots.size(); ++i) {
      auto p = f.make();
      ProbeStatus st = p->open(roots[i]);
      if (d.description.empty()) d.description = std::string(p->description());
      while (!d.description.empty() && d.description.back() == '.') d.description.pop_back();
      if (!st.available) {
        if (d.reason.empty()) d.reason = replace_all(st.reason, fs::path(roots[i]).string(), "<root>");
        continue;
      }
      d.available_on.push_back(labels[i]);
      d.channels.insert(d.channels.end(), p->channels().begin(), p->channels().end());
    }
    collapse(d);
    docs.push_back(std::move(d));
  }
  std::error_code ec;
  fs::remove_all(empty, ec);
  const std::string text = render(docs, labels);
  write_file(out_path, text, {}, "-o");
  return kExitOk;
}

}  // namespace

Action add_docs(CLI::App& app) {
  struct Opts {
    std::vector<std::string> roots;
    std::string out = "-", shell = "bash";
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand("docs", "Generate documentation (docs/METRICS.md, the man page, shell completion)");
  sub->require_subcommand(1);
  set_help_footer(sub, {"reveal docs metrics --root tests/fixtures/vm-2cpu -o METRICS.md", "reveal docs man > reveal.1",
                        "reveal docs completion bash > reveal.bash"});
  auto* m = sub->add_subcommand("metrics", "Markdown table of every probe's channels, merged over the roots");
  m->add_option("--root", o->roots, "Fixture root to open the probes on (repeatable; default /)");
  m->add_option("-o,--output", o->out, "File to write, or - for standard output")->capture_default_str();
  set_help_footer(m, {"reveal docs metrics --root tests/fixtures/vm-2cpu -o METRICS.md", "reveal docs metrics --root /"});
  auto* man = sub->add_subcommand("man", "The man page, reveal(1), in troff, from the same definitions as --help");
  set_help_footer(man, {"reveal docs man > reveal.1", "reveal docs man | man -l -"});
  auto* comp = sub->add_subcommand("completion", "A shell completion script, from the same definitions as --help");
  set_help_footer(comp, {"reveal docs completion bash > /etc/bash_completion.d/reveal",
                         "source <(reveal docs completion bash)"});
  comp->add_option("shell", o->shell, "The shell")->check(CLI::IsMember({"bash"}))->capture_default_str();
  const CLI::App* root = &app;
  return [o, m, man, comp, root]() -> int {
    if (m->parsed()) return metrics(o->roots, o->out);
    if (man->parsed()) write_stdout(man_page(*root, kVersion));
    if (comp->parsed()) write_stdout(bash_completion(*root));
    return kExitOk;
  };
}

}  // namespace reveal::cli
