// Choosing the reference a WindowModel is fitted on: which channels are scored, the floor of
// each channel's robust scale, how a recording's start-up enters the reference, and the
// self-reference fit (the run's own windows, iteratively reweighted). Used by the offline
// pipeline (offline.cpp), baseline training (baseline_model.cpp) and the streaming detector.
#pragma once

#include <cstddef>
#include <vector>

#include "reveal/features.h"
#include "reveal/progress.h"
#include "window_model.h"

namespace reveal::pipeline {

// Column `c` of `m` restricted to its finite values.
std::vector<double> finite_column(const Matrix& m, std::size_t c);

// Columns of `s` worth scoring: at least half the samples finite, and not constant. Used by self
// mode; baseline mode adds its own checks.
std::vector<int> varying_columns(const Series& s);

// The streaming detector's columns: varying_columns(), plus the channels flat when healthy
// (reveal::flat_when_healthy: failure counters, the memory fill pace, drop_caches writes) that
// stayed constant in `s` with at least half the samples finite: their reference spread is their
// floor, so a link that starts dropping, or memory that starts running out, scores at once.
std::vector<int> scored_columns(const Series& s);

// Per scored column, the smallest deviation worth a robust SD (unit resolution; memory-sized
// levels at least 0.5 % of the host's RAM when proc.meminfo:MemTotal is in `s`; the sampler's
// lateness in units of the sampling interval Δ, the median spacing of `s`, instead of its
// unit's: reveal.sampler:delay_seconds 0.1·Δ, the rate of reveal.sampler:ticks_missed 0.1/Δ;
// drops through drop_caches per minute, reveal::page_cache_dropped(), 0.1: one drop is news).
std::vector<double> channel_floors(const Series& s, const std::vector<int>& cols);

// A recording's first `settle_windows` windows (its start-up) in a reference of `windows`:
// when they are at most a quarter of it they stay out of the reference (`drop` = them) and of
// the EVT tails; in a shorter recording, where they may be most of its clean data, they stay in
// the reference but out of the tails (`tail_from`), unless that leaves less than half for them.
struct StartupUse {
  std::size_t drop = 0, tail_from = 0;
};
StartupUse startup_reference(std::size_t windows, std::size_t settle_windows);

// Self-reference fit with iterative reweighting (offline.h): fit on every window but the start-up
// (startup_reference()), drop windows whose robust-SD level (WindowScore::robust) is ≥ 0.5
// (± one window length) and refit, up to 3 passes; at least half always remain (the most
// suspicious windows are dropped first, the rest stay once the next would cross half). Returns the final
// keep mask; `model` is fitted on it. Each pass's scoring is reported to `progress` (if any) as
// stage "fit". The trailing-mean stream has its own mask (ReferenceWindows::keep_trail): the
// windows kept minus those its own level makes suspect, chosen the same way. Its level does not
// remove windows from the other detectors' reference: it flags long stretches of a busy host's
// ordinary load, and the narrower reference they left behind made memory load counters weigh
// in the attribution of CPU faults (the benchmark's host days, 2026-12-03).
// `steps_stand_out`: the windows are one whole recording judged against itself (offline
// `reveal detect`), so a sustained step of a level that is otherwise constant keeps its full z
// (RobustZOptions::steps_stand_out); the streaming detector's history leaves it off (not yet
// measured on host days).
std::vector<char> fit_self(WindowModel& model, const Windows& w, const std::vector<int>& cols,
                           std::size_t settle_windows, Progress* progress = nullptr,
                           bool steps_stand_out = false);

}  // namespace reveal::pipeline
