// Events counted over a sliding window of time from a rate channel (issue #17): how many
// happened in the last window_s seconds, e.g. derived:drop_caches_per_min, the writes to
// /proc/sys/vm/drop_caches over the last 20 s, per minute.
//
// Why not the rate itself: a write every 2 s sampled at 1 Hz reads 1, 0, 1, 0 per second, so a
// 3-sample window's minimum — what the symptom gate asks to rise (pipeline/workload_change.h) —
// stays 0, and a single write is one sample. Counted over the last 20 s the same writes read
// 1 for 20 s after one write and 10 while they come every 2 s: a level that holds. The window
// is short so that the level falls soon after the writes stop (an incident outlasts them by
// about the window).
//
// Input per row: the row's time (s) and the event rate over the interval that ended there
// (count/s, as the rate stage gives it; NaN, the first row or a gap, counts as none). The row
// contributes rate × Δt events, Δt from the previous row's time. Output: the sum over the rows
// of the last window_s seconds, ≥ 0. Rows must come in time order; a row whose time is not after
// the previous one's adds nothing. Memory: a fixed ring of kCapacity rows (≥ window_s/1024 apart they
// all fit in the window; at faster sampling the oldest leave early and the count is a lower
// bound). Nothing is allocated per row.
#pragma once

#include <array>
#include <cstddef>

namespace reveal::features {

class RecentCount {
 public:
  static constexpr std::size_t kCapacity = 1024;

  // window_s > 0 (s).
  explicit RecentCount(double window_s) : window_s_(window_s) {}
  double window_s() const { return window_s_; }
  double push(double t_s, double rate_per_s);

 private:
  struct Entry {
    double t = 0, n = 0;
  };
  double window_s_;
  std::array<Entry, kCapacity> ring_{};
  std::size_t head_ = 0, size_ = 0;  // head_: the oldest entry
  double last_t_ = 0;
  bool have_last_ = false;
  double sum_ = 0;
};

}  // namespace reveal::features
