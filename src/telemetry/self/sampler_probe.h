// reveal.sampler — the sampler's own timeliness, so that a sampling gap is evidence rather than
// a blind spot (issue #17: on a saturated host a sampler thread at normal priority woke seconds
// past its tick, gaps of up to 8 s between samples; the host's trouble then hid its own record).
//
// Channels (Subsystem::cpu; channel_role() classifies source "reveal.sampler" as symptom):
//   reveal.sampler:delay_seconds  gauge   "s"      how late this sample's reading began against
//                                                  its tick (Sampler::run: wake-up time − the
//                                                  tick's due time on CLOCK_MONOTONIC; ≥ 0)
//   reveal.sampler:ticks_missed   counter "count"  ticks skipped since run() started because the
//                                                  sampler was still busy or not yet scheduled
//                                                  (Sampler::skipped_ticks; its rate: missed
//                                                  ticks per second)
// The values come from the Sampler that owns the probe (Sampler attaches its timing at
// construction). Outside Sampler::run() (sample_once() alone) there is no tick to be late
// against: delay_seconds is NaN; ticks_missed is the sampler's running total. A probe no
// Sampler attached reads NaN for both. Always available: it reads no file, so --root does not
// matter; exclude it with --exclude reveal.sampler.
#pragma once

#include <cstdint>

#include "reveal/probe.h"

namespace reveal::telemetry {

// Written by the Sampler before each sample_once(), read by SamplerProbe::sample().
struct SampleTiming {
  double delay_s = __builtin_nan("");  // NaN: not sampled on a schedule
  std::uint64_t ticks_missed = 0;
};

class SamplerProbe final : public Probe {
 public:
  std::string_view name() const override { return "reveal.sampler"; }
  std::string_view description() const override {
    return "The sampler's own lateness: delay of each sample against its tick, ticks missed";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

  // The timing the Sampler keeps; must outlive the probe's sampling. nullptr: NaN values.
  void attach(const SampleTiming* timing) { timing_ = timing; }

 private:
  std::vector<ChannelInfo> channels_;
  const SampleTiming* timing_ = nullptr;
};

}  // namespace reveal::telemetry
