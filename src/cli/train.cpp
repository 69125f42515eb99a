// `reveal train GOOD.db [GOOD.db ...] -o MODEL`: fit the baseline-mode reference on known-good
// recordings and save it as a model file (include/reveal/baseline_model.h), for
// `reveal detect RUN --baseline MODEL`. The model is exactly the one `reveal detect RUN
// --baseline GOOD.db ...` fits in memory with the same --window/--stride/--seed/--pca.
// Stores that together hold more than 4 Mi samples × channels are read as evenly spread slices
// (reveal/baseline_model.h load_training_stores), so memory does not grow with their length.
// -o replaces an earlier model file but nothing else (a store, someone's file). Exit 3 on a
// missing, corrupt or too-short store.
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "commands.h"
#include "reveal/baseline_model.h"
#include "reveal/store.h"
#include "reveal/units.h"
#include "file_args.h"
#include "output_file.h"
#include "progress_bar.h"

namespace reveal::cli {
namespace {

// -o: a new file, or an earlier model file (through a link too); never a directory, a device or
// a file of another kind. OutputFile has refused the rest (empty, an input, a store).
void check_model_output(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) return;
  if (!std::filesystem::is_regular_file(st))
    throw std::runtime_error(path + ": exists and is not a regular file; refusing to overwrite it");
  if (std::filesystem::file_size(path, ec) > 0 && !is_model_file(path))
    throw std::runtime_error(path + ": exists and is not a Reveal model file; refusing to overwrite it (remove it first)");
}

std::string summary(const BaselineModel& m, std::size_t stores, const std::string& out) {
  std::string o = fmt::format("Reveal train — {} known-good store{} → {}\n", stores, stores == 1 ? "" : "s", out);
  std::set<std::string> hosts;
  std::size_t samples = 0;
  for (const auto& t : m.training()) {
    hosts.insert(t.hostname);
    samples += t.samples;
  }
  std::string host_list;
  for (const auto& h : hosts) host_list += (host_list.empty() ? "" : ", ") + h;
  const DetectOptions& d = m.options();
  o += fmt::format("stores      {} used, from {} host{} ({}); {} samples, {} reference windows ({}-sample windows, stride {})\n",
                   m.training().size(), hosts.size(), hosts.size() == 1 ? "" : "s", host_list, samples,
                   m.reference_windows(), d.window.length, d.window.stride);
  for (const auto& t : m.training())
    o += fmt::format("  {}  host {}, {} samples, {} → {}, {} windows\n", t.path, t.hostname, t.samples,
                     format_utc(t.start_unix_ns), format_utc(t.end_unix_ns), t.windows);
  std::map<std::string, std::size_t> by_sub;
  for (const auto& c : m.channels()) ++by_sub[std::string(to_string(c.subsystem))];
  std::string subs;
  for (const auto& [s, n] : by_sub) subs += fmt::format("{}{} {}", subs.empty() ? "" : ", ", s, n);
  o += fmt::format("channels    {} used (in every store, with data in at least half of the samples): {}\n",
                   m.channels().size(), subs);
  o += fmt::format("model       {} channels in the Isolation Forest after Pearson pruning (|r| ≥ {:g}); ",
                   m.model_channels(), d.prune_r);
  const char* pca = d.pca == PcaUse::off ? "off" : d.pca == PcaUse::fuse ? "fused" : "reported, not fused";
  if (d.pca == PcaUse::off)
    o += "PCA residual off\n";
  else
    o += fmt::format("PCA residual {} component{} ({:g} of the variance; {})\n", m.pca_components(),
                     m.pca_components() == 1 ? "" : "s", d.pca_variance, pca);
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(out, ec);
  o += fmt::format("file        {} bytes, model format version {}\n", ec ? 0 : bytes, m.format_version());
  for (const auto& n : m.notes()) o += "note: " + n + "\n";
  return o;
}

}  // namespace

Action add_train(CLI::App& app) {
  struct Opts {
    std::vector<std::string> stores;
    std::string output, pca = "report";
    std::size_t window = 3, stride = 1, trail = WindowOptions{}.trail;
    DetectOptions d;
    bool no_progress = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = app.add_subcommand("train", "Fit a baseline model on known-good recordings, for detect --baseline MODEL");
  set_help_footer(sub, {"reveal train good1.db good2.db -o good.model", "reveal train good-*.db -o good.model --pca fuse",
                        "reveal detect run.db --baseline good.model"});
  sub->add_option("stores", o->stores, "Known-good stores written by `reveal record` (any workloads)")->required();
  sub->add_option("-o,--output", o->output, "Model file to write (an earlier model file is replaced)")->required();
  sub->add_option("--window", o->window, "Window length in samples")->capture_default_str()->check(CLI::Range(2, 3600));
  sub->add_option("--stride", o->stride, "Samples between window starts")->capture_default_str()->check(CLI::Range(1, 3600));
  sub->add_option("--trail", o->trail,
                  "Samples of the trailing mean the robust-z detector also scores (at most the window length: not scored)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t(0), kMaxTrail));
  sub->add_option("--seed", o->d.seed, "Random seed (Isolation Forest)")->capture_default_str()->check(whole_u64());
  sub->add_option("--pca", o->pca,
                  "PCA residual detector: report (its streams in detect's JSON, not fused), fuse (SPE joins the "
                  "fused score), off")
      ->check(CLI::IsMember({"report", "fuse", "off"}))
      ->capture_default_str();
  sub->add_flag("--no-progress", o->no_progress, "No progress bar on stderr (drawn only when stderr is a terminal)");
  return [o]() -> int {
    o->d.window = {o->window, o->stride, o->trail};
    o->d.pca = o->pca == "fuse" ? PcaUse::fuse : o->pca == "off" ? PcaUse::off : PcaUse::report;
    for (const auto& s : o->stores) check_input_path("store", s);
    check_distinct(o->stores);
    if (o->output == "-") throw UsageError("-o -: a model is a file: give its path (standard output cannot hold one)");
    OutputFile out(o->output, o->stores, "-o", /*model_ok=*/true);  // an input, a store: refused
    check_model_output(o->output);
    const auto bar = stderr_progress("reveal train", !o->no_progress);
    o->d.progress = bar.get();
    // Long stores are read as evenly spread slices, so memory does not grow with their length.
    const TrainingInput in = load_training_stores(o->stores, o->d.window.length, bar.get());
    const BaselineModel model = BaselineModel::train(in.recordings, o->d, in.paths);
    bar->update("save", 0, 1);
    out.write(model.encode());
    out.commit();
    bar->finish();
    write_stdout(summary(model, o->stores.size(), o->output));
    return kExitOk;
  };
}

}  // namespace reveal::cli
