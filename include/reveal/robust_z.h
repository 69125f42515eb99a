// Robust z-score per channel: z = (x − median) / scale, scale = 1.4826·MAD
// (the MAD made consistent with σ for Gaussian data; Rousseeuw & Croux 1993),
// floored so that near-constant reference channels do not turn noise into huge z.
//
// fit(ref): ref is n×d; per column median and scale over finite values.
//   scale = max(1.4826·MAD, rel_floor·|median|, abs_floor), and when MAD = 0 (over half the
//   values tie: quantised or sparse channels) also ≥ (q90 − q10)/2.563 — except, with
//   steps_stand_out, when the other values lie in fewer than 3 separate stretches of
//   consecutive rows: in one recording judged against itself (rows in time order) that is a
//   step of a level that is constant otherwise, a fault or a workload change, which must keep
//   its full z rather than widen the scale it is judged by (122 GiB of GPU memory taken for 25 s
//   of an 80 s run had z 2.6: tests/fixtures/recordings/h200-loader-memory.db). In a reference of
//   several recordings a stretch can be a whole normal run at another level, so the default is
//   off (baseline models, the agent's moving reference).
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
  // Rows are one recording in time order (see above). Used by fit() only; not saved.
  bool steps_stand_out = false;
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
