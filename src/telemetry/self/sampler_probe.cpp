// reveal.sampler probe; contract in sampler_probe.h.
#include "telemetry/self/sampler_probe.h"

#include <cmath>

namespace reveal::telemetry {

ProbeStatus SamplerProbe::open(const std::filesystem::path&) {
  channels_ = {
      {"reveal.sampler:delay_seconds", "s", Kind::gauge, Subsystem::cpu, 64,
       "how late the sampler began reading this sample against its tick (the host kept it from running)"},
      {"reveal.sampler:ticks_missed", "count", Kind::counter, Subsystem::cpu, 64,
       "sampling ticks skipped because the sampler was late (no sample for them)"},
  };
  return {true, {}};
}

void SamplerProbe::sample(std::span<double> out) {
  if (!timing_) {
    out[0] = out[1] = std::nan("");
    return;
  }
  out[0] = timing_->delay_s;
  out[1] = double(timing_->ticks_missed);
}

}  // namespace reveal::telemetry
