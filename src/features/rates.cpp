#include <cmath>
#include <limits>

#include "reveal/features.h"

namespace reveal {

int Series::find(const std::string& name) const {
  for (std::size_t i = 0; i < channels.size(); ++i)
    if (channels[i].name == name) return static_cast<int>(i);
  return -1;
}

namespace {
double counter_delta(double prev, double cur, int bits, double wrap_range) {
  if (!std::isfinite(prev) || !std::isfinite(cur)) return std::nan("");
  double d = cur - prev;
  if (d >= 0) return d;
  if (wrap_range > 0 || (bits > 0 && bits < 64)) {
    const double span = wrap_range > 0 ? wrap_range : std::ldexp(1.0, bits);
    const double wrapped = d + span;
    if (wrapped >= 0 && wrapped < span / 2) return wrapped;
  }
  return std::nan("");  // a reset: the sample is missing, never a negative rate
}
}  // namespace

Series to_rates(const Recording& rec) {
  Series s;
  const std::size_t n = rec.t_unix_ns.size(), nc = rec.channels.size();
  s.channels = rec.channels;
  s.t_s.resize(n);
  for (std::size_t i = 0; i < n; ++i) s.t_s[i] = double(rec.t_unix_ns[i] - rec.t_unix_ns[0]) * 1e-9;
  s.values = Matrix(n, nc, std::nan(""));
  for (std::size_t c = 0; c < nc; ++c) {
    auto& ch = s.channels[c];
    if (ch.kind != Kind::counter) {
      for (std::size_t i = 0; i < n; ++i) s.values(i, c) = rec.values(i, c);
      continue;
    }
    for (std::size_t i = 1; i < n; ++i) {
      const double dt = s.t_s[i] - s.t_s[i - 1];
      if (!(dt > 0)) continue;
      s.values(i, c) = counter_delta(rec.values(i - 1, c), rec.values(i, c), ch.counter_bits, ch.wrap_range) / dt;
    }
    ch.kind = Kind::gauge;
    ch.unit += "/s";
  }
  return s;
}

}  // namespace reveal
