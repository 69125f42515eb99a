// Pace of memory use; contract in memory_fill.h.
#include "memory_fill.h"

#include <algorithm>
#include <cmath>

namespace reveal::features {

namespace {
constexpr double kMaxPace = 6000.0;  // % per minute: all that is left within a second
}

const MemoryFillPace::Point* MemoryFillPace::at_or_before(double t) const {
  for (std::size_t i = 0; i < size_; ++i) {
    const Point& p = ring_[(head_ + kCapacity - 1 - i) % kCapacity];
    if (p.t <= t) return &p;
  }
  return nullptr;
}

double MemoryFillPace::push(double t_s, double available) {
  if (!std::isfinite(available) || !std::isfinite(t_s)) return std::nan("");
  // The steady fall: the smallest fall per second over the kSpans spans ending now.
  double fall = INFINITY;
  Point later{t_s, available};
  for (std::size_t k = 1; k <= kSpans && fall > 0; ++k) {
    const double end = t_s - double(k) * kSpanS;
    const Point* p = at_or_before(end);
    // Missing, or so stale that the samples are too sparse to measure this span.
    if (p == nullptr || p->t < end - kSpanS / 2 || !(p->t < later.t)) {
      fall = 0;
      break;
    }
    fall = std::min(fall, (p->avail - later.avail) / (later.t - p->t));
    later = *p;
  }
  double pace = 0;
  if (fall > 0) pace = available > 0 ? std::min(kMaxPace, 100.0 * 60.0 * fall / available) : kMaxPace;
  if (pace < 100.0 / kHorizonMin) pace = 0;
  // Remember the sample (at most one per kMinSpacingS; time must move forward).
  const bool keep = size_ == 0 || t_s - ring_[(head_ + kCapacity - 1) % kCapacity].t >= kMinSpacingS;
  if (keep) {
    ring_[head_] = {t_s, available};
    head_ = (head_ + 1) % kCapacity;
    size_ = std::min(size_ + 1, kCapacity);
  }
  return pace;
}

}  // namespace reveal::features
