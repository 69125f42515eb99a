#include <algorithm>
#include <cmath>

#include "reveal/features.h"

namespace reveal {

const char* to_string(WindowStat s) {
  static const char* names[] = {"mean", "std", "min", "max", "slope", "trail", "trail_min", "trail_max"};
  return s < kNumStats ? names[s] : "?";
}

void window_stats(const Series& s, std::size_t r0, std::size_t length, std::size_t trail, std::span<double> out) {
  const std::size_t nc = s.channels.size(), end = r0 + length;
  trail = std::max(trail, length);
  const bool has_trail = end >= trail;
  for (std::size_t c = 0; c < nc; ++c) {
    auto st = out.subspan(c * kNumStats, kNumStats);
    double sum = 0, mn = INFINITY, mx = -INFINITY, ts = 0, tt = 0, sx = 0, tx = 0;
    std::size_t cnt = 0;
    const double t0 = s.t_s[r0];
    for (std::size_t r = r0; r < r0 + length; ++r) {
      const double x = s.values(r, c);
      if (!std::isfinite(x)) continue;
      const double t = s.t_s[r] - t0;
      ++cnt;
      sum += x;
      mn = std::min(mn, x);
      mx = std::max(mx, x);
      ts += t; tt += t * t; sx += x; tx += t * x;
    }
    st[kTrail] = st[kTrailMin] = st[kTrailMax] = std::nan("");
    if (has_trail) {
      double tsum = 0, tmin = INFINITY, tmax = -INFINITY;
      std::size_t tcnt = 0;
      for (std::size_t r = end - trail; r < end; ++r) {
        const double x = s.values(r, c);
        if (!std::isfinite(x)) continue;
        tsum += x;
        tmin = std::min(tmin, x);
        tmax = std::max(tmax, x);
        ++tcnt;
      }
      if (2 * tcnt >= trail) {
        st[kTrail] = tsum / double(tcnt);
        st[kTrailMin] = tmin;
        st[kTrailMax] = tmax;
      }
    }
    if (cnt == 0) {
      for (std::size_t i = 0; i < kTrail; ++i) st[i] = std::nan("");  // the trail's are set
      continue;
    }
    const double mean = sum / cnt;
    double var = 0;
    for (std::size_t r = r0; r < r0 + length; ++r) {
      const double x = s.values(r, c);
      if (std::isfinite(x)) var += (x - mean) * (x - mean);
    }
    st[kMean] = mean;
    st[kStd] = std::sqrt(var / cnt);
    st[kMin] = mn;
    st[kMax] = mx;
    const double den = cnt * tt - ts * ts;
    st[kSlope] = (cnt >= 2 && den > 0) ? (cnt * tx - ts * sx) / den : 0.0;
  }
}

Windows make_windows(const Series& s, WindowOptions opts) {
  Windows w;
  w.length = opts.length < 1 ? 1 : opts.length;
  w.trail = std::max(opts.trail, w.length);
  const std::size_t stride = opts.stride < 1 ? 1 : opts.stride;
  const std::size_t n = s.t_s.size(), nc = s.channels.size();
  w.n_channels = nc;
  if (n < w.length) {
    w.stats = Matrix(0, nc * kNumStats);
    return w;
  }
  const std::size_t nw = (n - w.length) / stride + 1;
  w.stats = Matrix(nw, nc * kNumStats, std::nan(""));
  for (std::size_t k = 0; k < nw; ++k) {
    const std::size_t r0 = k * stride;
    w.first_row.push_back(r0);
    w.t_start_s.push_back(s.t_s[r0]);
    w.t_end_s.push_back(s.t_s[r0 + w.length - 1]);
    window_stats(s, r0, w.length, opts.trail, w.stats.row(k));
  }
  return w;
}

double window_period_s(const Windows& w, const Recording& r) {
  const std::size_t nw = w.first_row.size();
  const double p = nw > 1 ? (w.t_start_s.back() - w.t_start_s.front()) / double(nw - 1)
                          : r.meta.interval_s;
  return p > 0 && std::isfinite(p) ? p : 1.0;
}

}  // namespace reveal
