// Cost of the streaming detector (`reveal agent`) per sample: a recording is pushed through
// StreamingDetector as fast as possible; reports the median and p99 CPU time of push() for
// samples that score a window without refitting, the refit times, and the derived layout; and
// the same for the AbsenceTracker the agent feeds the same rows (every sample).
//   usage: reveal_streaming_cost STORE [WARMUP_SAMPLES] [REFIT_SAMPLES]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "reveal/absence_tracker.h"
#include "reveal/store.h"
#include "reveal/streaming.h"

namespace {
std::int64_t cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, std::size_t(q * double(v.size())))];
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s STORE [WARMUP_SAMPLES] [REFIT_SAMPLES]\n", argv[0]);
    return 2;
  }
  const reveal::Recording rec = reveal::load_recording(argv[1]);
  reveal::StreamingOptions o;
  o.warmup_samples = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 120;
  o.refit_samples = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 300;
  o.history_samples = 3600;
  reveal::StreamingDetector d(rec.meta, rec.channels, o);
  reveal::AbsenceTracker absences(rec.channels, o.detect.window.length, rec.meta.interval_s, o.detect.top_channels);
  std::vector<double> score_us, fit_ms, absence_us;
  std::size_t absence_opened = 0;
  for (std::size_t i = 0; i < rec.t_unix_ns.size(); ++i) {
    const std::int64_t t0 = cpu_ns();
    const reveal::StreamUpdate& u = d.push(rec.t_unix_ns[i], rec.values.row(i));
    const double dt = double(cpu_ns() - t0);
    if (u.refitted) fit_ms.push_back(dt * 1e-6);
    else if (u.scored) score_us.push_back(dt * 1e-3);
    const std::int64_t t1 = cpu_ns();
    absence_opened += absences.push(rec.t_unix_ns[i], rec.values.row(i)).opened;
    absence_us.push_back(double(cpu_ns() - t1) * 1e-3);
  }
  std::printf("store %s: %zu samples, %zu raw channels, %zu derived channels\n", argv[1], rec.t_unix_ns.size(),
              rec.channels.size(), d.n_derived_channels());
  std::printf("push() scoring a window: %zu samples, median %.1f us, p99 %.1f us CPU\n", score_us.size(),
              pct(score_us, 0.5), pct(score_us, 0.99));
  std::printf("push() with a (re)fit:   %zu fits, median %.1f ms, max %.1f ms CPU (reference %zu windows)\n",
              fit_ms.size(), pct(fit_ms, 0.5), pct(fit_ms, 1.0), d.reference_windows());
  std::printf("incidents: %zu closed, %s\n", d.closed().size(), d.active() ? "one open" : "none open");
  std::printf("AbsenceTracker::push(): median %.1f us, p99 %.1f us CPU; %zu absence incidents opened\n",
              pct(absence_us, 0.5), pct(absence_us, 0.99), absence_opened);
  return 0;
}
