// Progress of long offline work (detection over a store, training a baseline model, import,
// export), reported as (stage, done, total) to whoever wants to show it. The pipeline takes a
// `Progress*` (DetectOptions::progress); null means nobody listens, the default everywhere.
// The CLI's renderer (src/cli/progress_bar.h) draws a bar on stderr only when it is a terminal.
#pragma once

#include <cstddef>
#include <string_view>

namespace reveal {

class Progress {
 public:
  virtual ~Progress() = default;
  // `done` of `total` units of `stage` ("load", "rates", "fit", "score", ...; a string literal,
  // stable while the stage lasts); total 0 when unknown. Called on the working thread, often
  // (see report_progress()): must be cheap, must not allocate per call, must not throw.
  virtual void update(std::string_view stage, std::size_t done, std::size_t total) noexcept = 0;
  // The work is over, or failed: a renderer clears what it drew. Idempotent.
  virtual void finish() noexcept {}
};

// What per-unit loops call: forwards to `p` when there is one and `done` is a multiple of
// `every` or the last unit, so a loop over millions of windows costs a branch per unit.
inline void report_progress(Progress* p, std::string_view stage, std::size_t done, std::size_t total,
                            std::size_t every = 256) noexcept {
  if (p && (done % every == 0 || done == total)) p->update(stage, done, total);
}

}  // namespace reveal
