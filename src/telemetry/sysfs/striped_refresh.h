// StripedRefresh: which of N per-CPU groups of files a probe re-reads at this tick, so that a
// host with hundreds of CPUs pays for a stripe of them per tick instead of all (issue #21:
// 224 CPUs × 4 idle states × 2 files cost 6.1 ms per tick, read every second).
//
// Rule: the first tick reads every group. After that, a host with at most kSmallHost groups
// still reads every group at every tick (a laptop or a VM loses nothing). A bigger one reads
// ceil(N × elapsed / period) groups per tick (at least 1, at most N), round robin from where
// the last tick stopped, so each group is re-read about once per `period` seconds whatever
// the sampling rate: at 1 Hz with N = 224 and a 10 s period, 23 groups per tick; at 10 Hz,
// 3. Values of groups not due keep their last reading: the probes publish host-wide
// aggregates of them (sums, mean, min, max), which move smoothly as stripes come in, never
// per-group channels, whose held counters would give saw-tooth rates.
// Elapsed time is read from a monotonic clock (injectable for tests); a clock that stands
// still or steps back counts as no time. Never allocates after construction.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace reveal::telemetry {

class StripedRefresh {
 public:
  using Clock = std::int64_t (*)();  // monotonic nanoseconds
  static constexpr std::size_t kSmallHost = 16;
  static std::int64_t steady_now_ns();

  StripedRefresh() = default;
  StripedRefresh(std::size_t groups, double period_s, Clock clock = &steady_now_ns)
      : n_(groups), period_ns_(period_s * 1e9), clock_(clock) {}

  std::size_t groups() const { return n_; }
  // Whether tick() has run: the next tick is the first, which reads every group.
  bool started() const { return started_; }

  // Calls read(g) for every group g due at this tick.
  template <class F>
  void tick(F&& read) {
    if (n_ == 0) return;
    const std::int64_t now = clock_();
    std::size_t k = n_;
    if (started_ && n_ > kSmallHost && period_ns_ > 0) {
      const double elapsed = now > last_ns_ ? double(now - last_ns_) : 0.0;
      const double want = std::ceil(double(n_) * elapsed / period_ns_);
      k = want < 1 ? 1 : want >= double(n_) ? n_ : std::size_t(want);
    }
    for (std::size_t i = 0; i < k; ++i) {
      read(cursor_);
      cursor_ = cursor_ + 1 == n_ ? 0 : cursor_ + 1;
    }
    started_ = true;
    last_ns_ = now;
  }

 private:
  std::size_t n_ = 0, cursor_ = 0;
  double period_ns_ = 0;
  Clock clock_ = &steady_now_ns;
  bool started_ = false;
  std::int64_t last_ns_ = 0;
};

}  // namespace reveal::telemetry
