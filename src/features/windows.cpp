#include <cmath>

#include "reveal/features.h"

namespace reveal {

const char* to_string(WindowStat s) {
  static const char* names[] = {"mean", "std", "min", "max", "slope"};
  return s < kNumStats ? names[s] : "?";
}

Windows make_windows(const Series& s, WindowOptions opts) {
  Windows w;
  w.length = opts.length < 1 ? 1 : opts.length;
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
    for (std::size_t c = 0; c < nc; ++c) {
      double sum = 0, mn = INFINITY, mx = -INFINITY, st = 0, stt = 0, sx = 0, stx = 0;
      std::size_t cnt = 0;
      const double t0 = s.t_s[r0];
      for (std::size_t r = r0; r < r0 + w.length; ++r) {
        const double x = s.values(r, c);
        if (!std::isfinite(x)) continue;
        const double t = s.t_s[r] - t0;
        ++cnt;
        sum += x;
        mn = std::min(mn, x);
        mx = std::max(mx, x);
        st += t; stt += t * t; sx += x; stx += t * x;
      }
      if (cnt == 0) continue;
      const double mean = sum / cnt;
      double var = 0;
      for (std::size_t r = r0; r < r0 + w.length; ++r) {
        const double x = s.values(r, c);
        if (std::isfinite(x)) var += (x - mean) * (x - mean);
      }
      auto out = w.stats.row(k).subspan(c * kNumStats, kNumStats);
      out[kMean] = mean;
      out[kStd] = std::sqrt(var / cnt);
      out[kMin] = mn;
      out[kMax] = mx;
      const double den = cnt * stt - st * st;
      out[kSlope] = (cnt >= 2 && den > 0) ? (cnt * stx - st * sx) / den : 0.0;
    }
  }
  return w;
}

}  // namespace reveal
