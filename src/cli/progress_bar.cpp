#include "progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace reveal::cli {
namespace {

constexpr std::size_t kBarWidth = 24;

// Appends `s` to buf[len..cap-1), NUL-terminated; returns the new length.
std::size_t append(char* buf, std::size_t cap, std::size_t len, std::string_view s) {
  const std::size_t n = std::min(s.size(), cap - 1 - len);
  std::memcpy(buf + len, s.data(), n);
  buf[len + n] = '\0';
  return len + n;
}

}  // namespace

std::size_t format_progress_line(char* buf, std::size_t cap, std::string_view label, std::string_view stage,
                                 std::size_t done, std::size_t total) {
  if (cap == 0) return 0;
  buf[0] = '\0';
  std::size_t len = append(buf, cap, 0, label);
  len = append(buf, cap, len, ": ");
  len = append(buf, cap, len, stage);
  char tail[64];
  if (total == 0) {
    std::snprintf(tail, sizeof tail, "  %zu", done);
    return append(buf, cap, len, tail);
  }
  const double frac = std::min(1.0, double(done) / double(total));
  const auto filled = std::size_t(frac * kBarWidth);
  char bar[kBarWidth + 1];
  for (std::size_t i = 0; i < kBarWidth; ++i) bar[i] = i < filled ? '#' : '.';
  bar[kBarWidth] = '\0';
  std::snprintf(tail, sizeof tail, "  [%s] %3d %%", bar, int(frac * 100));
  return append(buf, cap, len, tail);
}

ProgressBar::ProgressBar(std::FILE* out, bool terminal, std::string label, std::chrono::milliseconds min_interval)
    : out_(out), terminal_(terminal), label_(std::move(label)), min_interval_(min_interval) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(std::string_view stage, std::size_t done, std::size_t total) noexcept {
  if (!terminal_ || !out_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool new_stage = stage.substr(0, sizeof stage_ - 1) != std::string_view(stage_);
  if (!new_stage && drawn_len_ > 0 && now - last_draw_ < min_interval_) return;
  last_draw_ = now;
  const std::size_t n = std::min(stage.size(), sizeof stage_ - 1);
  std::memcpy(stage_, stage.data(), n);
  stage_[n] = '\0';
  char line[160];
  const std::size_t len = format_progress_line(line, sizeof line, label_, stage, done, total);
  // Pad over a longer previous line, then return to the line's start.
  const int pad = drawn_len_ > len ? int(drawn_len_ - len) : 0;
  std::fprintf(out_, "\r%s%*s", line, pad, "");
  std::fflush(out_);
  drawn_len_ = len;
}

void ProgressBar::finish() noexcept {
  if (!terminal_ || !out_ || drawn_len_ == 0) return;
  std::fprintf(out_, "\r%*s\r", int(drawn_len_), "");
  std::fflush(out_);
  drawn_len_ = 0;
  stage_[0] = '\0';
}

std::unique_ptr<ProgressBar> stderr_progress(std::string label, bool enabled) {
  return std::make_unique<ProgressBar>(stderr, enabled && ::isatty(::fileno(stderr)) == 1, std::move(label));
}

}  // namespace reveal::cli
