// Feature pipeline stages between the store and the detectors:
//   Recording --to_rates--> Series --add_derived--> Series --make_windows--> Windows
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "reveal/channel.h"
#include "reveal/matrix.h"
#include "reveal/recording.h"

namespace reveal {

// Time series of channels on a common time base. Kind of every channel here is gauge:
// counters have been turned into rates.
struct Series {
  std::vector<ChannelInfo> channels;
  std::vector<double> t_s;  // seconds since the first sample of the run
  Matrix values;            // rows = samples (same as t_s), cols = channels; NaN = gap
  int find(const std::string& name) const;  // column index or -1
};

// Counters become per-second rates: rate[i] = Δvalue / Δt with Δt from the stored timestamps.
// Row 0 and any row whose Δt ≤ 0, whose value or previous value is NaN, or whose Δ is
// negative (a reset) is NaN. A counter narrower than 64 bits (counter_bits) or with a
// wrap_range W that decreased is a wrap when Δ + W < W/2 (W = 2^bits by default), and then
// contributes Δ + W. Unit becomes "<unit>/s".
// Gauges and states are copied unchanged.
// A sample after a restart of its recorder (an "agent_restart" event, source "agent", stamped
// after the previous sample and no later than this one: reveal agent continuing its store) has
// NaN counter rates, as a run's first sample: nobody sampled in between, and a reboot meanwhile
// would have reset the counters (a reset a narrow counter could pass for a wrap).
Series to_rates(const Recording& rec);
// The event that marks such a restart.
bool is_recorder_restart(const Event& e);

// Appends derived channels (source "derived", unit shown per channel) computed per sample:
//   cpu_<state>_pct and cpu_busy_pct (host and per CPU, from proc.stat rates; the raw tick rates
//   are then dropped), mem_used_pct, mem_fill_pct_per_min (the share of MemAvailable used up per
//   minute at the pace it fell steadily over the last 15 s, 0 when slower than empty within 5
//   minutes: src/features/memory_fill.h), drop_caches_per_min (drops of the caches through
//   /proc/sys/vm/drop_caches per minute, counted over the last 20 s, from vmstat drop_pagecache + drop_slab:
//   src/features/recent_count.h; these two are stateful, so rows go in time order),
//   swap_used_pct, net_{rx,tx}_bytes_per_s (all interfaces),
//   tcp_loss_retrans_per_s (RetransSegs − TCPDSACKRecvSegs, ≥ 0: retransmissions the receiver
//   did not report spurious by D-SACK, RFC 2883/3708; TCPDSACKRecv where Segs is missing, all
//   of them without either), tcp_retrans_pct (those / OutSegs), disk_{read,write}_bytes_per_s, disk_iops and
//   disk_util_pct (per device), psi_<res>_<some|full>_pct (stall time share from PSI totals),
//   from perf.hardware (when the events are present): ipc (host, and ipc.cpu<N> per core),
//   branch_miss_pct, cache_miss_pct, l1d_load_miss_pct, llc_load_miss_pct, dtlb_load_miss_pct,
//   l3_stall_pct (cycle_activity.stalls_l3_miss / cycles), frontend_stall_pct and
//   backend_stall_pct (stalled-cycles-* / cycles); from perf.uncore: mem_bandwidth_bytes_per_s.
// Missing inputs give NaN, never a division by zero. A derived channel with no finite value
// is left out, unless `keep_empty`: then the channel set depends only on the input channel
// names, which the streaming detector needs (it derives two rows at a time).
void add_derived(Series& s, bool keep_empty = false);

// add_derived() for one row at a time (the streaming detector): the formulas are planned once
// for the rate channels' names, then compute() fills a row without allocating. channels() are
// those of add_derived(s, keep_empty = true) on a Series of `rate_channels`, in the same order,
// and compute() gives the same values as that call's row.
class DerivedRow {
 public:
  explicit DerivedRow(const std::vector<ChannelInfo>& rate_channels);
  ~DerivedRow();
  DerivedRow(const DerivedRow&) = delete;
  DerivedRow& operator=(const DerivedRow&) = delete;
  const std::vector<ChannelInfo>& channels() const { return channels_; }
  // One row at time t_s (seconds, any origin; rows in time order, as the offline Series' t_s —
  // derived:mem_fill_pct_per_min remembers the last seconds of rows). rates.size() = rate
  // channels, out.size() = channels(). Allocates nothing.
  void compute(double t_s, std::span<const double> rates, std::span<double> out);

 private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
  std::vector<ChannelInfo> channels_;
};

// The channels of to_rates(): counters become gauges with unit "<unit>/s".
std::vector<ChannelInfo> rate_channels(const std::vector<ChannelInfo>& raw);
// One row of to_rates(): counters' Δ/dt from `prev` to `cur` (NaN for a reset, a gap or
// dt ≤ 0; wraps as to_rates), other channels copied from `cur`. Allocates nothing.
void rates_row(const std::vector<ChannelInfo>& raw, std::span<const double> prev, std::span<const double> cur,
               double dt, std::span<double> out);

// The Series every detector scores, offline and in training: to_rates() then add_derived()
// (src/features/prepare.cpp). The streaming detector computes the same rows one at a time
// (rates_row, DerivedRow).
Series prepare_series(const Recording& r);

struct WindowOptions {
  std::size_t length = 3;  // samples per window
  std::size_t stride = 1;  // samples between window starts
  // Samples of the trailing mean (WindowStat kTrail) that ends with each window's last sample:
  // the longer time scale at which the robust-z detector also looks (window_model.h).
  std::size_t trail = 10;
};
inline constexpr std::size_t kMaxTrail = 600;  // the longest trail (each window's trail costs O(trail) per channel)

enum WindowStat : std::size_t { kMean = 0, kStd, kMin, kMax, kSlope, kTrail, kTrailMin, kTrailMax, kNumStats };
const char* to_string(WindowStat s);

// Sliding windows over a Series. Window w covers rows [first_row[w], first_row[w] + length).
// stats(w, c·kNumStats + stat) over the finite values of channel c in the window (NaN if none):
// mean, population std, min, max, least-squares slope in units per second; and kTrail,
// kTrailMin, kTrailMax, the mean, min and max over the `trail` rows that end with the window's
// last row (the window's own rows when trail ≤ length), NaN when the series holds fewer rows
// before that end or when fewer than half of them are finite.
struct Windows {
  std::size_t length = 0, n_channels = 0, trail = 0;
  std::vector<std::size_t> first_row;
  std::vector<double> t_start_s, t_end_s;  // time of the window's first and last sample
  Matrix stats;
  double at(std::size_t w, std::size_t channel, WindowStat st) const {
    return stats(w, channel * kNumStats + st);
  }
};
Windows make_windows(const Series& s, WindowOptions opts);
// Seconds between the starts of `w`'s windows as recorded (the recording's interval when it
// has one window; 1 when neither is positive); positive.
double window_period_s(const Windows& w, const Recording& r);
// The statistics of one window, rows [r0, r0 + length) of `s`, into `out`
// (size channels × kNumStats, layout as Windows::stats); kTrail over rows
// [r0 + length − trail, r0 + length) of `s`. Allocates nothing.
void window_stats(const Series& s, std::size_t r0, std::size_t length, std::size_t trail, std::span<double> out);

}  // namespace reveal
