// Reference selection and the self fit; contract in reference.h.
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "reveal/channel.h"
#include "reveal/robust_z.h"

namespace reveal::pipeline {
namespace {

constexpr double kSuspect = 0.5;  // robust-SD level that removes a window from a self reference
constexpr int kSelfPasses = 3;
constexpr double kNaN = __builtin_nan("");
// Fraction of the host's RAM below which a memory level shift is not scored.
constexpr double kRamFloorFraction = 0.005;
// Drops through /proc/sys/vm/drop_caches per minute over the last 20 s (page_cache_dropped(),
// reveal/channel.h): the kernel never makes one, so a single drop (3/min) is thirty robust SDs.
constexpr double kCacheDropFloor = 0.1;
// The sampler's own lateness (reveal.sampler): a delay under this fraction of the sampling
// interval, or this fraction of the ticks missed, is scheduling noise, less than a robust SD.
constexpr double kSamplerLatenessFraction = 0.1;

// The smallest deviation worth a robust SD, by unit: below it a change is noise however
// quiet the reference was (a channel idle at 0 that moves by 1 page is not an incident).
double unit_floor(const std::string& unit) {
  static const std::map<std::string, double> floors = {
      {"%", 1.0},           {"kB", 4096.0},        {"pages", 1024.0},     {"bytes", 4.0e6},
      {"bytes/s", 65536.0}, {"kB/s", 64.0},        {"pages/s", 16.0},     {"sectors/s", 128.0},
      {"ticks/s", 1.0},     {"us/s", 1000.0},      {"ms/s", 5.0},         {"count", 0.5},
      {"count/s", 1.0},     {"packets/s", 10.0},   {"ops/s", 1.0},        {"kHz", 50000.0},
      // TCP segments retransmitted for loss (derived:tcp_loss_retrans_per_s): a busy host's
      // connections lose a few a second without anything wrong (1-8/s beside a healthy DDP job;
      // 3 % loss on its link: ~470/s), as packets/s.
      {"segments/s", 10.0},
      {"%/min", 2.0},  // memory fill pace (0, or 20 %/min and more)
  };
  auto it = floors.find(unit);
  return it == floors.end() ? 1e-9 : it->second;
}

}  // namespace

std::vector<double> finite_column(const Matrix& m, std::size_t c) {
  std::vector<double> v;
  v.reserve(m.rows());
  for (std::size_t r = 0; r < m.rows(); ++r)
    if (std::isfinite(m(r, c))) v.push_back(m(r, c));
  return v;
}

namespace {
// Columns with at least half the samples finite that vary, or (flat_failures) are flat when healthy
// (failure counters, the memory fill pace).
std::vector<int> columns(const Series& s, bool flat_failures) {
  std::vector<int> cols;
  for (std::size_t c = 0; c < s.channels.size(); ++c) {
    auto v = finite_column(s.values, c);
    if (v.empty() || v.size() * 2 < s.t_s.size()) continue;
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    if (*lo == *hi && !(flat_failures && flat_when_healthy(s.channels[c].name, s.channels[c].unit))) continue;
    cols.push_back(int(c));
  }
  return cols;
}
}  // namespace

std::vector<int> varying_columns(const Series& s) { return columns(s, false); }

std::vector<int> scored_columns(const Series& s) { return columns(s, true); }

std::vector<double> channel_floors(const Series& s, const std::vector<int>& cols) {
  std::vector<double> floors(cols.size());
  for (std::size_t j = 0; j < cols.size(); ++j) floors[j] = unit_floor(s.channels[cols[j]].unit);
  // Memory-sized levels (kB, pages, bytes of the memory subsystem): a shift smaller than
  // kRamFloorFraction of the host's RAM is operationally negligible however flat the channel
  // was (e.g. page cache growing by 300 MB on a 128 GB host), so it cannot score high.
  const int mt = s.find("proc.meminfo:MemTotal");
  const double mem_total_kb = mt < 0 ? kNaN : median_of(finite_column(s.values, std::size_t(mt)));
  if (mem_total_kb > 0) {
    const double kb = kRamFloorFraction * mem_total_kb;
    for (std::size_t j = 0; j < cols.size(); ++j) {
      const ChannelInfo& ch = s.channels[cols[j]];
      const double scale = ch.unit == "kB" ? 1.0 : ch.unit == "pages" ? 0.25
                           : (ch.unit == "bytes" && ch.subsystem == Subsystem::memory) ? 1024.0 : 0.0;
      floors[j] = std::max(floors[j], kb * scale);
    }
  }
  // The sampler's lateness in units of its interval (the median spacing of the samples): a
  // real-time sampler is typically late by well under a millisecond with a MAD of microseconds,
  // so without a floor a 10 ms hiccup would be a hundred robust SDs.
  std::vector<double> gaps;
  for (std::size_t i = 1; i < s.t_s.size(); ++i)
    if (const double d = s.t_s[i] - s.t_s[i - 1]; d > 0) gaps.push_back(d);
  const double interval = gaps.empty() ? kNaN : median_of(gaps);
  if (interval > 0)
    for (std::size_t j = 0; j < cols.size(); ++j) {
      const std::string& name = s.channels[cols[j]].name;
      if (name == "reveal.sampler:delay_seconds") floors[j] = kSamplerLatenessFraction * interval;
      if (name == "reveal.sampler:ticks_missed") floors[j] = kSamplerLatenessFraction / interval;  // not count/s's 1
    }
  for (std::size_t j = 0; j < cols.size(); ++j)
    if (page_cache_dropped(s.channels[cols[j]].name)) floors[j] = kCacheDropFloor;
  return floors;
}

StartupUse startup_reference(std::size_t windows, std::size_t settle_windows) {
  if (settle_windows == 0 || settle_windows >= windows) return {};
  if (settle_windows * 4 <= windows) return {settle_windows, settle_windows};
  return {0, (windows - settle_windows) * 2 >= windows ? settle_windows : 0};
}

std::vector<char> fit_self(WindowModel& model, const Windows& w, const std::vector<int>& cols,
                           std::size_t settle_windows, Progress* progress, bool steps_stand_out) {
  // A self reference is contaminated by the faults it should find (a 30 s fault is a quarter
  // of a 2-minute run, which inflates medians and MADs): after each pass, drop the windows
  // that look suspicious (robust-SD level ≥ kSuspect, widened by one window length either
  // side) from the reference and score again, keeping at least half (the most suspicious go
  // first). The robust-SD level (median and MAD) tolerates that contamination; an EVT tail
  // fitted on it does not (the fault's windows would be its peaks).
  const std::size_t nw = w.first_row.size(), L = std::max<std::size_t>(w.length, 1);
  Matrix z;
  // Start-up windows are not normal behaviour (startup_reference()).
  const StartupUse su = startup_reference(nw, settle_windows);
  std::vector<char> base(nw, 1);
  std::fill_n(base.begin(), su.drop, 0);
  const std::size_t n_base = nw - su.drop, tail_from = su.tail_from;
  std::vector<char> keep = base, keep_trail = base;
  // Per window: the robust-SD level of the detectors but the trail stream, and with it.
  std::vector<double> level(nw), level_trail(nw);
  auto pass = [&] {
    const ReferenceWindows ref{&w, &cols, &keep, tail_from, &keep_trail, steps_stand_out};
    model.fit(std::span(&ref, 1));
    const std::vector<WindowScore> scores = model.score_all(w, cols, z, progress, "fit");
    for (std::size_t k = 0; k < nw; ++k) {
      level[k] = scores[k].robust;
      const double t = scores[k].trail_cal / model.z_cut();
      level_trail[k] = std::isfinite(t) ? std::max(level[k], t) : level[k];
    }
  };
  std::vector<std::size_t> suspects;
  // The start-up mask without the suspect windows of `lv`, most suspicious first: when
  // dropping every suspect would leave less than half of the windows, the strongest ones (a
  // fault's) still go and the marginal ones stay. Giving up instead kept a fault covering a
  // quarter of the run in its own reference whenever a few marginal windows elsewhere tipped
  // the count.
  auto select = [&](const std::vector<double>& lv) {
    suspects.clear();
    for (std::size_t k = 0; k < nw; ++k)
      if (base[k] && lv[k] >= kSuspect) suspects.push_back(k);
    std::stable_sort(suspects.begin(), suspects.end(), [&](std::size_t a, std::size_t b) { return lv[a] > lv[b]; });
    std::vector<char> next = base;
    std::size_t n_keep = n_base;
    for (std::size_t k : suspects) {
      const std::size_t lo = k >= L ? k - L : 0, hi = std::min(nw, k + L + 1);
      std::size_t more = 0;
      for (std::size_t j = lo; j < hi; ++j) more += next[j] ? 1 : 0;
      if ((n_keep - more) * 2 < n_base) break;
      for (std::size_t j = lo; j < hi; ++j) next[j] = 0;
      n_keep -= more;
    }
    return next;
  };
  pass();
  for (int p = 1; p < kSelfPasses; ++p) {
    std::vector<char> next = select(level), next_trail = select(level_trail);
    for (std::size_t k = 0; k < nw; ++k) next_trail[k] = next_trail[k] && next[k];
    if (next == keep && next_trail == keep_trail) break;
    keep = std::move(next);
    keep_trail = std::move(next_trail);
    pass();
  }
  return keep;
}

}  // namespace reveal::pipeline
