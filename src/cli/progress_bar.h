// The CLI's Progress renderer (reveal/progress.h): one line on stderr,
//   "reveal detect: score  [##########..............]  42 %"
// redrawn in place (\r) at most every 100 ms and at each new stage, cleared when the work is
// done. It draws only on a terminal: when stderr is a file or a pipe (tests, CI, logs) it writes
// nothing at all, so output there never changes.
#pragma once

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "reveal/progress.h"

namespace reveal::cli {

class ProgressBar final : public Progress {
 public:
  // Draws on `out` only when `terminal` is true (the caller's isatty() of it); `label` starts the
  // line ("reveal detect"). Redraws within a stage are at least `min_interval` apart.
  ProgressBar(std::FILE* out, bool terminal, std::string label,
              std::chrono::milliseconds min_interval = std::chrono::milliseconds(100));
  ~ProgressBar() override;  // finish()
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::string_view stage, std::size_t done, std::size_t total) noexcept override;
  // Clears the line if anything was drawn ("\r", spaces, "\r"); later updates draw again.
  void finish() noexcept override;

 private:
  std::FILE* out_;
  bool terminal_;
  std::string label_;
  std::chrono::steady_clock::duration min_interval_;
  std::chrono::steady_clock::time_point last_draw_{};
  char stage_[32] = {};     // the stage last drawn (copied: no allocation per update)
  std::size_t drawn_len_ = 0;  // characters on the line now; 0 = nothing drawn
};

// Formats one progress line into `buf` (at most `cap` - 1 characters and a NUL; allocates
// nothing): "<label>: <stage>  [####······]  42 %", or "<label>: <stage>  <done>" when `total`
// is 0 (unknown). Returns the length written.
std::size_t format_progress_line(char* buf, std::size_t cap, std::string_view label, std::string_view stage,
                                 std::size_t done, std::size_t total);

// The bar a subcommand uses: on stderr, drawn when stderr is a terminal (isatty) and `enabled`
// (no --no-progress); a bar that never draws otherwise.
std::unique_ptr<ProgressBar> stderr_progress(std::string label, bool enabled);

}  // namespace reveal::cli
