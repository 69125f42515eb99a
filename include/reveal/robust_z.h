// Robust z-score per channel: z = (x − median) / scale, scale = 1.4826·MAD
// (the MAD made consistent with σ for Gaussian data; Rousseeuw & Croux 1993),
// floored so that near-constant reference channels do not turn noise into huge z.
//
// fit(ref): ref is n×d; per column median and scale over finite values.
//   scale = max(1.4826·MAD, rel_floor·|median|, abs_floor), and when MAD = 0 (over half the
//   values tie: quantised or sparse channels) also ≥ (q90 − q10)/2.563.
//   A column with no finite value gets median NaN and yields z = 0 (no evidence).
// z(x, out): out[j] = (x[j] − median[j]) / scale[j]; NaN input gives 0. Allocates nothing.
#pragma once

#include <span>
#include <vector>

#include "reveal/matrix.h"

namespace reveal {

class ByteReader;
class ByteWriter;

struct RobustZOptions {
  double rel_floor = 0.01;   // scale ≥ 1 % of |median|
  double abs_floor = 1e-9;
};

class RobustZ {
 public:
  explicit RobustZ(RobustZOptions opts = {}) : opts_(opts) {}
  void fit(const Matrix& ref);
  void z(std::span<const double> x, std::span<double> out) const;
  std::size_t n_features() const { return median_.size(); }
  // Raises each column's scale to at least floors[j] (e.g. a unit's resolution); call after fit.
  void floor_scale(std::span<const double> floors);
  const std::vector<double>& median() const { return median_; }
  const std::vector<double>& scale() const { return scale_; }
  // Model files (baseline_model.h, encoding binary_io.h): save() writes the fitted state, options
  // included; load() replaces this object's state with it, so scores are bit-identical to the
  // saved object's. load() validates what it reads and throws DecodeError on malformed input.
  void save(ByteWriter& out) const;
  void load(ByteReader& in);

 private:
  RobustZOptions opts_;
  std::vector<double> median_, scale_;
};

// Median of the finite values (NaN if none). Reorders a copy; O(n).
double median_of(std::span<const double> v);
// Median of `finite` (finite values only; reordered in place; NaN if empty): median_of
// without its copy.
double median_in_place(std::span<double> finite);
// Median absolute deviation around `med` of the finite values.
double mad_of(std::span<const double> v, double med);
// q-quantile (0..1, linear interpolation) of the finite values.
double quantile_of(std::span<const double> v, double q);

}  // namespace reveal
