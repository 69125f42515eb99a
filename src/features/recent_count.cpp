// Events counted over a sliding window: see recent_count.h.
#include "recent_count.h"

#include <cmath>

namespace reveal::features {

double RecentCount::push(double t_s, double rate_per_s) {
  double n = 0;
  if (have_last_ && t_s > last_t_ && std::isfinite(rate_per_s) && rate_per_s > 0) n = rate_per_s * (t_s - last_t_);
  if (!have_last_ || t_s > last_t_) {
    last_t_ = t_s;
    have_last_ = true;
    if (size_ == kCapacity) {  // full: the oldest leaves early
      sum_ -= ring_[head_].n;
      head_ = (head_ + 1) % kCapacity;
      --size_;
    }
    ring_[(head_ + size_) % kCapacity] = {t_s, n};
    ++size_;
    sum_ += n;
  }
  while (size_ > 0 && ring_[head_].t <= t_s - window_s_) {
    sum_ -= ring_[head_].n;
    head_ = (head_ + 1) % kCapacity;
    --size_;
  }
  if (size_ == 0 || sum_ < 0.5e-9) sum_ = 0;  // no drift below zero from rounding
  return sum_;
}

}  // namespace reveal::features
