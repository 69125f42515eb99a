// `reveal detect`: score a recording and report incidents.
#include <cstdio>

#include "commands.h"
#include "reveal/detect.h"
#include "reveal/report.h"
#include "reveal/store.h"

namespace reveal::cli {

Action add_detect(CLI::App& app) {
  struct Opts {
    std::string run;
    std::vector<std::string> baselines;
    bool json = false;
    DetectOptions d;
    std::size_t window = 3, stride = 1;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand("detect", "Find anomalous intervals in a recording and attribute them");
  sub->add_option("run", o->run, "Store written by `reveal record`")->required();
  sub->add_option("--baseline", o->baselines, "Known-good recording(s) to use as the reference (repeatable)");
  sub->add_flag("--json", o->json, "Emit JSON (schema reveal.detect/1, docs/DETECT_JSON.md)");
  sub->add_option("--window", o->window, "Window length in samples")->capture_default_str()->check(CLI::Range(2, 3600));
  sub->add_option("--stride", o->stride, "Samples between window starts")->capture_default_str()->check(CLI::Range(1, 3600));
  sub->add_option("--seed", o->d.seed, "Random seed (Isolation Forest)")->capture_default_str();
  sub->add_option("--min-windows", o->d.incident.min_windows, "Anomalous windows in a row that open an incident")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--end-after", o->d.incident.end_after, "Normal windows in a row that close an incident")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--top", o->d.top_channels, "Channels listed per incident")->capture_default_str()->check(CLI::Range(1, 100));
  return [o]() -> int {
    o->d.window = {o->window, o->stride};
    Recording run = load_recording(o->run);
    std::vector<Recording> refs;
    for (const auto& b : o->baselines) refs.push_back(load_recording(b));
    DetectResult r = detect(run, refs, o->d);
    const std::string out = o->json ? render_json(r, o->run) : render_text(r, o->run);
    write_stdout(out);
    return kExitOk;
  };
}

}  // namespace reveal::cli
