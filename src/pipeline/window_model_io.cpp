// WindowModel::save/load: the fitted state in a model file's "WMOD" section (format in
// include/reveal/baseline_model.h, encoding in include/reveal/binary_io.h). Layout, in order:
//   u64 channels n; n × (f64 floor); n × (string subsystem name)
//   f64 z_cut, if_cut, pca_cut, prune_r; u64 seed; u8 PCA use (0 off, 1 report, 2 fuse)
//   f64 window period s, f64 false incidents per day (as trained), f64 highest forest score
//   RobustZ (window means); u8 has-trail, RobustZ (trailing means; no features without)
//   u64[] Pearson-kept channel indices; IsolationForest; PcaResidual
//   5 × (u8 fitted, f64 median, f64 scale): robust_z, robust_z_trail, iforest, pca_spe, pca_t2
//   stream calibrations
//   u64 5; 5 × (u8 has-tail, [SpotTail]) in the same order
//   u64 m; m × (string subsystem, u8 present, f64 median, f64 scale)
//   u64 reference windows
// Subsystems are stored by name, so the file does not depend on the enum's order.
#include <stdexcept>
#include <string>

#include "window_model.h"

namespace reveal::pipeline {
namespace {

[[noreturn]] void corrupt(const std::string& what) { throw DecodeError("corrupt model data: " + what); }

void put(ByteWriter& out, const Calibration& c) {
  out.f64(c.median);
  out.f64(c.scale);
}
Calibration get_calibration(ByteReader& in) {
  Calibration c;
  c.median = in.f64();
  c.scale = in.f64();
  return c;
}

Subsystem get_subsystem(ByteReader& in) {
  const std::string name = in.str();
  const auto s = parse_subsystem(name);
  if (!s) corrupt("unknown subsystem '" + name + "'");
  return *s;
}

}  // namespace

void WindowModel::save(ByteWriter& out) const {
  if (n_ref_ == 0) throw std::logic_error("WindowModel::save: the model is not fitted");
  out.u64(floors_.size());
  for (double f : floors_) out.f64(f);
  for (Subsystem s : subsystems_) out.str(to_string(s));
  out.f64(z_cut());
  out.f64(if_cut());
  out.f64(pca_cut());
  out.f64(prune_r_);
  out.u64(seed_);
  out.u8(std::uint8_t(pca_use_));
  out.f64(fusion_.window_period_s());
  out.f64(fusion_.false_per_day());
  out.f64(if_reach_);
  rz_.save(out);
  out.boolean(trail_);
  rzt_.save(out);
  out.u64s(kept_);
  forest_.save(out);
  pca_.save(out);
  fusion_.save(out);
  out.u64(kNumSubsystems);
  for (std::size_t i = 0; i < kNumSubsystems; ++i) {
    out.str(to_string(Subsystem(i)));
    out.boolean(sub_present_[i]);
    put(out, sub_cal_[i]);
  }
  out.u64(n_ref_);
}

WindowModel WindowModel::load(ByteReader& in) {
  const std::size_t nc = in.count(16);  // per channel a floor and a subsystem name (u64 length + text)
  std::vector<double> floors(nc);
  for (double& f : floors) f = in.f64();
  std::vector<Subsystem> subsystems(nc);
  for (Subsystem& s : subsystems) s = get_subsystem(in);
  DetectOptions o;
  o.z_cut = in.f64();
  o.if_cut = in.f64();
  o.pca_cut = in.f64();
  o.prune_r = in.f64();
  o.seed = in.u64();
  const std::uint8_t pca = in.u8();
  if (pca > std::uint8_t(PcaUse::fuse)) corrupt("unknown PCA use");
  o.pca = PcaUse(pca);
  const double period = in.f64();
  o.false_per_day = in.f64();
  const double if_reach = in.f64();
  if (!(period > 0) || !std::isfinite(period)) corrupt("window period is not a positive number");
  if (!(o.false_per_day > 0) || !std::isfinite(o.false_per_day)) corrupt("false incidents per day is not positive");
  if (!(if_reach > 0 && if_reach <= 1)) corrupt("highest Isolation Forest score out of (0, 1]");
  WindowModel m(std::move(floors), std::move(subsystems), o, period);
  m.if_reach_ = if_reach;
  m.rz_.load(in);
  if (m.rz_.n_features() != nc) corrupt("robust z does not cover every channel");
  m.trail_ = in.boolean();
  m.rzt_.load(in);
  if (m.rzt_.n_features() != (m.trail_ ? nc : 0)) corrupt("the trailing means' robust z does not match the channels");
  m.kept_ = in.u64s();
  for (std::size_t j = 0; j < m.kept_.size(); ++j)
    if (m.kept_[j] >= nc || (j > 0 && m.kept_[j] <= m.kept_[j - 1])) corrupt("kept channel indices out of range");
  m.forest_.load(in);
  if (!m.forest_.fitted() || m.forest_.n_features() != 2 * m.kept_.size())
    corrupt("the Isolation Forest does not match the kept channels");
  m.feat_.assign(m.kept_.size() * 2, __builtin_nan(""));
  m.fcontrib_.assign(m.kept_.size() * 2, 0.0);
  m.pca_.load(in);
  if (m.pca_.fitted() && (m.pca_.n_features() != nc || m.pca_use_ == PcaUse::off))
    corrupt("the PCA model does not match the channels");
  m.fusion_.load(in, m.reach());
  const std::size_t ns = in.count(18);
  std::array<bool, kNumSubsystems> seen{};
  for (std::size_t i = 0; i < ns; ++i) {
    const std::size_t s = std::size_t(get_subsystem(in));
    const bool present = in.boolean();
    const Calibration c = get_calibration(in);
    if (seen[s]) corrupt("a subsystem calibration appears twice");
    seen[s] = true;
    // The constructor derived presence from the channels' subsystems; the file must agree.
    if (present != m.sub_present_[s]) corrupt("subsystem calibrations do not match the channels");
    m.sub_cal_[s] = c;
  }
  for (std::size_t s = 0; s < kNumSubsystems; ++s)
    if (m.sub_present_[s] && !seen[s]) corrupt("a subsystem calibration is missing");
  m.n_ref_ = std::size_t(in.u64());
  if (m.n_ref_ == 0) corrupt("the model holds no reference window");
  m.set_false_per_day(o.false_per_day);  // which tails can reach their q/D quantile
  return m;
}

}  // namespace reveal::pipeline
