// Exports the matrix `reveal detect` (self mode, default options) hands to its Isolation
// Forest for a recording: every window's robust-standardised mean and std of the
// Pearson-pruned channels, as WindowModel computes them after the self-reference fit
// (pipeline::fit_self). Input of bench/pipeline/iforest_vs_sklearn.sh.
//   usage: reveal_window_features STORE OUT.csv
// OUT.csv: one row per window, 2·(model channels) comma-separated values (%.17g, "nan" for
// a gap). Prints "STORE: W windows x F features (C channels scored, M after pruning, R
// reference windows)" to stdout. Exit 1 on an unreadable store or a detection error.
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "pipeline/reference.h"
#include "pipeline/window_model.h"
#include "reveal/offline.h"
#include "reveal/features.h"
#include "reveal/store.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s STORE OUT.csv\n", argv[0]);
    return 2;
  }
  try {
    const reveal::Recording rec = reveal::load_recording(argv[1]);
    reveal::Series s = reveal::to_rates(rec);
    reveal::add_derived(s);
    const reveal::DetectOptions opts;
    const std::vector<int> cols = reveal::pipeline::varying_columns(s);
    const reveal::Windows w = reveal::make_windows(s, opts.window);
    std::vector<reveal::Subsystem> subsystems;
    for (int c : cols) subsystems.push_back(s.channels[c].subsystem);
    reveal::pipeline::WindowModel model(reveal::pipeline::channel_floors(s, cols), subsystems, opts,
                                        rec.meta.interval_s * double(opts.window.stride));
    const std::vector<char> keep = reveal::pipeline::fit_self(model, w, cols, 0);
    std::size_t n_ref = 0;
    for (char k : keep) n_ref += k ? 1 : 0;

    std::vector<double> f(2 * model.n_model_channels());
    std::FILE* out = std::fopen(argv[2], "w");
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[2]);
    for (std::size_t k = 0; k < w.first_row.size(); ++k) {
      model.features(w, k, cols, f);
      for (std::size_t j = 0; j < f.size(); ++j) std::fprintf(out, j ? ",%.17g" : "%.17g", f[j]);
      std::fputc('\n', out);
    }
    if (std::fclose(out) != 0) throw std::runtime_error(std::string("cannot write ") + argv[2]);
    std::printf("%s: %zu windows x %zu features (%zu channels scored, %zu after pruning, %zu reference windows)\n",
                argv[1], w.first_row.size(), f.size(), cols.size(), model.n_model_channels(), n_ref);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reveal_window_features: %s\n", e.what());
    return 1;
  }
  return 0;
}
