// `reveal probes`: every probe, available or not (with the reason), and its channels.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "reveal/registry.h"
#include "reveal/sampler.h"

namespace reveal::cli {

Action add_probes(CLI::App& app) {
  struct Opts { std::string root = "/"; bool json = false; std::vector<std::string> include, exclude; };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand("probes", "List every probe and its channels on this host");
  set_help_footer(sub, {"reveal probes", "reveal probes --json --root /host",
                        "reveal probes --probes 'proc.*,nvml' --exclude perf"});
  sub->add_option("--root", o->root, "Read /proc and /sys under this directory (e.g. /host)")->capture_default_str();
  sub->add_flag("--json", o->json, "Emit JSON instead of text");
  sub->add_option("--probes", o->include, "Only these probes (names, or prefixes ending in *)")->delimiter(',');
  sub->add_option("--exclude", o->exclude, "Skip these probes")->delimiter(',');
  return [o]() {
    check_root(o->root);
    std::vector<std::unique_ptr<Probe>> probes = select_probes(o->include, o->exclude);
    std::vector<std::string> descriptions;
    for (auto& p : probes) descriptions.emplace_back(p->description());
    Sampler sampler(std::move(probes), o->root);
    std::size_t offset = 0;
    nlohmann::json out = nlohmann::json::array();
    std::string text;
    const auto& recs = sampler.probe_records();
    for (std::size_t i = 0; i < recs.size(); ++i) {
      const auto& r = recs[i];
      nlohmann::json chans = nlohmann::json::array();
      text += fmt::format("{:<16} {:<11} {}\n", r.name, r.available ? "available" : "unavailable",
                          r.available ? fmt::format("{} channels — {}", r.n_channels, descriptions[i])
                                      : fmt::format("{} — {}", r.reason, descriptions[i]));
      for (std::size_t k = 0; k < r.n_channels; ++k) {
        const auto& c = sampler.channels()[offset + k];
        chans.push_back({{"name", c.name}, {"unit", c.unit}, {"kind", to_string(c.kind)},
                         {"subsystem", to_string(c.subsystem)}, {"help", c.help}});
        text += fmt::format("    {:<48} {:<8} {:<8} {}\n", c.name, c.unit, to_string(c.kind), to_string(c.subsystem));
      }
      offset += r.n_channels;
      out.push_back({{"name", r.name}, {"description", descriptions[i]}, {"available", r.available},
                     {"reason", r.reason}, {"channels", chans}});
    }
    if (o->json) {
      nlohmann::json doc = {{"schema", "reveal.probes/1"}, {"root", o->root}, {"probes", out}};
      write_stdout(doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    } else {
      write_stdout(text + fmt::format("{} channels from {} probes\n", sampler.channels().size(), recs.size()));
    }
    return kExitOk;
  };
}

}  // namespace reveal::cli
