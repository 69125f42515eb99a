// Workload change vs fault tests; contract in workload_change.h.
#include "workload_change.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "reveal/robust_z.h"

namespace reveal::pipeline {
namespace {

// The smallest rise of a symptom channel that is operationally material, by unit.
double material_rise(const std::string& name, const std::string& unit) {
  if (name == "proc.stat:processes") return 200.0;  // processes created per second
  if (unit == "%") return 10.0;
  if (unit == "us/s" || unit == "us") return 1e5;
  if (unit == "ms/s" || unit == "ms") return 100.0;
  if (unit == "ms/op") return 5.0;  // I/O latency per request
  if (unit == "seconds" || unit == "s") return 0.5;
  return 0.0;  // counts of errors, drops, retransmits, stalls: any significant rise
}

}  // namespace

void SymptomGate::reset(const std::vector<const ChannelInfo*>& chans) {
  idx_.clear();
  material_.clear();
  for (std::size_t j = 0; j < chans.size(); ++j)
    if (channel_role(chans[j]->name) == ChannelRole::symptom) {
      idx_.push_back(j);
      material_.push_back(material_rise(chans[j]->name, chans[j]->unit));
    }
}

std::ptrdiff_t SymptomGate::strongest(std::span<const double> z, std::span<const double> scale) const {
  std::ptrdiff_t best = -1;
  double best_ratio = 0;
  for (std::size_t k = 0; k < idx_.size(); ++k) {
    const std::size_t j = idx_[k];
    if (j >= z.size() || !(z[j] >= kSymptomZ)) continue;
    const double rise = z[j] * (j < scale.size() ? scale[j] : 0.0);
    if (!(rise >= material_[k])) continue;
    const double ratio = material_[k] > 0 ? rise / material_[k] : z[j] / kSymptomZ;
    if (best < 0 || ratio > best_ratio) {
      best = std::ptrdiff_t(j);
      best_ratio = ratio;
    }
  }
  return best;
}

bool smoothed_average(const std::string& name) {
  const std::size_t colon = name.find(':');
  if (colon == std::string::npos) return false;
  const std::string_view source(name.data(), colon), field(name.data() + colon + 1, name.size() - colon - 1);
  if (source == "proc.loadavg") return field.rfind("load", 0) == 0;
  return source.find("pressure") != std::string_view::npos && field.find("_avg") != std::string_view::npos;
}

bool settled(std::uint64_t r0, std::uint64_t r1, const std::function<std::span<const double>(std::uint64_t)>& row,
             const std::vector<int>& cols, std::span<const double> floor, std::span<const double> zbar) {
  if (r1 < r0 + 8 || zbar.size() != cols.size()) return false;
  std::vector<std::size_t> order(cols.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t n_top = std::min(kDriftChannels, order.size());
  std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(n_top), order.end(),
                    [&](std::size_t a, std::size_t b) { return std::fabs(zbar[a]) > std::fabs(zbar[b]); });
  const std::uint64_t mid = r0 + (r1 - r0) / 2;
  std::vector<double> all, first, second;
  double moved = 0, drifting = 0;  // |zbar| of the channels that moved, and of those drifting
  for (std::size_t i = 0; i < n_top; ++i) {
    const std::size_t j = order[i];
    if (!(std::fabs(zbar[j]) >= 3.0)) break;  // did not move: says nothing about the regime
    all.clear();
    first.clear();
    second.clear();
    for (std::uint64_t r = r0; r < r1; ++r) {
      const double v = row(r)[std::size_t(cols[j])];
      if (!std::isfinite(v)) continue;
      all.push_back(v);
      (r < mid ? first : second).push_back(v);
    }
    if (first.size() < 4 || second.size() < 4) continue;
    const double med = median_of(all);
    const double scale = std::max(1.4826 * mad_of(all, med), j < floor.size() ? floor[j] : 0.0);
    if (!(scale > 0)) continue;
    moved += std::fabs(zbar[j]);
    if (std::fabs(median_of(second) - median_of(first)) / scale > kDriftMax) drifting += std::fabs(zbar[j]);
  }
  return !(drifting >= kDriftingShare * moved && drifting > 0);
}

}  // namespace reveal::pipeline
