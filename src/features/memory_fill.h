// The pace at which the host's available memory is being used up (issue #17), the derived
// channel derived:mem_fill_pct_per_min: the share of what is still available
// (proc.meminfo:MemAvailable) that the host consumes per minute, at the pace MemAvailable fell
// *steadily* over the last kSpans × kSpanS seconds.
//
// It is the short-range form of the operators' "memory filling up" alert (Prometheus
// predict_linear(node_memory_MemAvailable_bytes[...], horizon) < 0): 10 %/min means memory runs
// out in about ten minutes if the pace holds. A job filling its share of memory at start-up
// allocates in a burst of a few seconds and stops; a leak keeps allocating. So the pace is the
// smallest fall of MemAvailable per second over kSpans consecutive spans of kSpanS seconds
// ending now (each measured between the latest samples at or before its ends): a burst inside
// one span leaves the others flat and the pace 0; only a fall that lasted all kSpans × kSpanS
// seconds counts. A pace that would take longer than kHorizonMin minutes to exhaust memory is
// reported as 0, so the channel stays flat on a healthy host and moves only when the host
// heads for out of memory within minutes: slower paces (a job start whose allocation ramps for
// 15 s or more reads 3-17 %/min on the recorded host days) would make every such start an
// anomaly, and slow leaks are the drift rule's (pipeline/workload_change.h kDriftRelearns).
//
// Units: MemAvailable in any unit (kB as read), time in seconds; result in % per minute, ≥ 0.
// NaN when MemAvailable is NaN at this row; 0 until kSpans × kSpanS seconds of samples exist,
// or when the samples are too sparse to tell spans apart (an interval over kSpanS / 2).
// Rows must come in time order; a row whose time is not after the previous one's is judged
// but not remembered. Memory: a fixed ring of kCapacity samples, none allocated per row.
#pragma once

#include <array>
#include <cstddef>

namespace reveal::features {

class MemoryFillPace {
 public:
  static constexpr double kSpanS = 5.0;
  static constexpr std::size_t kSpans = 3;
  static constexpr double kHorizonMin = 5.0;  // slower than "empty within 5 minutes" reads 0
  // Samples kept: one per kMinSpacingS at most, enough for kSpans × kSpanS seconds plus a span.
  static constexpr double kMinSpacingS = 0.25;
  static constexpr std::size_t kCapacity = 96;

  // One row: its time and MemAvailable; returns the pace in % of MemAvailable per minute.
  double push(double t_s, double available);

 private:
  struct Point {
    double t = 0, avail = 0;
  };
  // The latest kept sample at or before time t; nullptr when none is old enough.
  const Point* at_or_before(double t) const;

  std::array<Point, kCapacity> ring_{};
  std::size_t head_ = 0, size_ = 0;  // head_: next slot to write
};

}  // namespace reveal::features
