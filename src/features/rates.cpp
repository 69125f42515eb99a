#include <algorithm>
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

std::vector<ChannelInfo> rate_channels(const std::vector<ChannelInfo>& raw) {
  std::vector<ChannelInfo> out = raw;
  for (auto& ch : out)
    if (ch.kind == Kind::counter) {
      ch.kind = Kind::gauge;
      ch.unit += "/s";
    }
  return out;
}

void rates_row(const std::vector<ChannelInfo>& raw, std::span<const double> prev, std::span<const double> cur,
               double dt, std::span<double> out) {
  for (std::size_t c = 0; c < raw.size(); ++c) {
    const ChannelInfo& ch = raw[c];
    if (ch.kind != Kind::counter) out[c] = cur[c];
    else out[c] = dt > 0 ? counter_delta(prev[c], cur[c], ch.counter_bits, ch.wrap_range) / dt : std::nan("");
  }
}

bool is_recorder_restart(const Event& e) { return e.source == "agent" && e.kind == "agent_restart"; }

Series to_rates(const Recording& rec) {
  Series s;
  const std::size_t n = rec.t_unix_ns.size(), nc = rec.channels.size();
  s.channels = rate_channels(rec.channels);
  s.t_s.resize(n);
  for (std::size_t i = 0; i < n; ++i) s.t_s[i] = double(rec.t_unix_ns[i] - rec.t_unix_ns[0]) * 1e-9;
  s.values = Matrix(n, nc, std::nan(""));
  for (std::size_t c = 0; n > 0 && c < nc; ++c)  // row 0: gauges as they are, counters have no rate yet
    if (rec.channels[c].kind != Kind::counter) s.values(0, c) = rec.values(0, c);
  // The samples that follow a restart of the recorder (an agent_restart event between two
  // samples) have no counter rates: nobody sampled in between (a reboot may have reset them).
  std::vector<std::int64_t> restarts;
  for (const Event& e : rec.events)
    if (is_recorder_restart(e)) restarts.push_back(e.t_unix_ns);
  std::sort(restarts.begin(), restarts.end());
  const std::vector<double> none(nc, std::nan(""));
  for (std::size_t i = 1; i < n; ++i) {
    const auto r = std::upper_bound(restarts.begin(), restarts.end(), rec.t_unix_ns[i - 1]);
    const bool restarted = r != restarts.end() && *r <= rec.t_unix_ns[i];
    rates_row(rec.channels, restarted ? std::span<const double>(none) : rec.values.row(i - 1), rec.values.row(i),
              double(rec.t_unix_ns[i] - rec.t_unix_ns[i - 1]) * 1e-9,  // exact Δt, as streaming
              s.values.row(i));
  }
  return s;
}

}  // namespace reveal
