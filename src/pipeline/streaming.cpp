// Streaming detector; contract in include/reveal/streaming.h.
#include "reveal/streaming.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "explain/attribution.h"
#include "explain/evidence.h"
#include "reference.h"
#include "reveal/baseline_model.h"
#include "window_model.h"
#include "workload_change.h"

namespace reveal {
namespace {
constexpr double kNaN = __builtin_nan("");
// An accepted symptom level (SymptomGate) no window rises a material step above.
constexpr double kNever = std::numeric_limits<double>::max();
constexpr std::size_t kMaxClosed = 100;
// An incident lasting this many relearn_samples ends once its state settled (after_window).
// 2 (60 s at the defaults), down from 3: chosen while looking at the recorded host days
// (bench/hostday; docs/BENCHMARKS.md says so), where contention at a job start held incidents
// for 90 s and swallowed the faults that followed.
constexpr std::uint64_t kPersistRelearns = 2;
}  // namespace

StreamingDetector::StreamingDetector(const RunMetadata& meta, std::vector<ChannelInfo> channels,
                                     StreamingOptions opts)
    : meta_(meta), raw_channels_(std::move(channels)), opts_(opts), tracker_(opts.detect.incident),
      evidence_(std::make_unique<explain::IncidentEvidence>()),
      gate_(std::make_unique<pipeline::SymptomGate>()), peaks_(std::make_unique<pipeline::RecentPeaks>()),
      step_peaks_(std::make_unique<pipeline::RecentPeaks>()) {
  // The model's options, with the caller's incident rule and reporting choices (as detect()).
  if (opts_.baseline) opts_.detect = opts_.baseline->scoring_options(opts_.detect);
  // Nobody reads the PCA traces of a stream: fit and score the PCA model only when it is fused.
  if (opts_.detect.pca == PcaUse::report && !opts_.baseline) opts_.detect.pca = PcaUse::off;
  const std::size_t L = opts_.detect.window.length, stride = opts_.detect.window.stride;
  if (L < 2) throw DetectError("window length must be at least 2 samples");
  if (L > 86400 || stride > 86400) throw DetectError("window length and stride must be at most 86400 samples");
  if (stride < 1) throw DetectError("stride must be at least 1 sample");
  if (opts_.warmup_samples < L + 3 * stride)
    throw DetectError("warm-up must hold at least 4 windows (" + std::to_string(L + 3 * stride) + " samples)");
  if (opts_.history_samples < opts_.warmup_samples)
    throw DetectError("history must be at least as long as the warm-up");
  if (opts_.workload_changes && opts_.relearn_samples < L + 3 * stride)
    throw DetectError("re-learning a regime needs at least 4 windows (" + std::to_string(L + 3 * stride) + " samples)");
  opts_.refit_samples = std::max<std::size_t>(opts_.refit_samples, 1);
  capacity_ = pending_capacity_ = opts_.history_samples;
  prev_.assign(raw_channels_.size(), kNaN);
  rates_.assign(raw_channels_.size(), kNaN);
  derived_ = std::make_unique<DerivedRow>(rate_channels(raw_channels_));
  layout_ = derived_->channels();
  const std::size_t nd = layout_.size();
  hist_ = Matrix(capacity_, nd, kNaN);
  hist_t_.assign(capacity_, 0);
  // The window's rows and, before them, the rest of its trailing mean's (WindowStat kTrail).
  const std::size_t T = std::max(L, opts_.detect.window.trail);
  recent_.channels = layout_;
  recent_.t_s.assign(T, 0.0);
  recent_.values = Matrix(T, nd, kNaN);
  win_.length = L;
  win_.trail = T;
  win_.n_channels = nd;
  win_.first_row = {0};
  win_.t_start_s = {0.0};
  win_.t_end_s = {0.0};
  win_.stats = Matrix(1, nd * kNumStats, kNaN);
  for (std::size_t c = 0; c < nd; ++c)
    if (pipeline::ambient_symptom(layout_[c].name)) ambient_cols_.push_back(int(c));
  ambient_level_.assign(ambient_cols_.size(), kNaN);
  // Symptom-led windows: every symptom column's recent peak, kept across refits.
  for (std::size_t c = 0; c < nd; ++c)
    if (channel_role(layout_[c].name) != ChannelRole::load) step_cols_.push_back(int(c));
  step_level_.assign(step_cols_.size(), kNaN);
  reset_peaks();
  if (opts_.baseline) use_baseline();
}

void StreamingDetector::reset_peaks() {
  const std::size_t stride = opts_.detect.window.stride;
  const double stride_s = (meta_.interval_s > 0 ? meta_.interval_s : 1.0) * double(stride);
  peaks_->reset(ambient_cols_.size(), std::size_t(std::ceil(pipeline::kAmbientMemoryS / stride_s)),
                (opts_.relearn_samples + stride - 1) / stride);
  const auto [step_span, step_lag] = pipeline::step_peaks_span(stride_s);
  step_peaks_->reset(step_cols_.size(), step_span, step_lag);
}

void StreamingDetector::use_baseline() {
  const BaselineModel& b = *opts_.baseline;
  baseline_channels_ = b.channels();
  const std::size_t nc = baseline_channels_.size();
  std::vector<int> cols(nc);
  std::vector<const ChannelInfo*> chans(nc);
  for (std::size_t j = 0; j < nc; ++j) {
    const std::string& name = baseline_channels_[j].name;
    const auto it = std::find_if(layout_.begin(), layout_.end(), [&](const ChannelInfo& c) { return c.name == name; });
    if (it == layout_.end()) throw DetectError("the baseline model's channel " + name + " is not among the streamed channels");
    cols[j] = int(it - layout_.begin());
    chans[j] = &baseline_channels_[j];
  }
  auto model = std::make_unique<pipeline::WindowModel>(b.window_model());
  model->set_false_per_day(opts_.detect.false_per_day);
  reference_windows_ = model->reference_windows();
  model_ = std::move(model);
  cols_ = std::move(cols);
  means_from_ = kNoMeans;
  chans_ = std::move(chans);
  z_.assign(cols_.size(), 0.0);
  low_.assign(cols_.size(), 0.0);
  rise_z_.assign(cols_.size(), 0.0);
  gate_->reset(chans_, meta_.cores);
  symptoms_seen_ = symptoms_seen_ || gate_->symptom_channels() > 0;
  map_ambient();
  not_ready_.clear();
}

void StreamingDetector::map_ambient() {
  seen_.assign(cols_.size(), kNaN);
  ambient_model_.clear();
  for (std::size_t j = 0; j < cols_.size(); ++j) {
    const auto it = std::find(ambient_cols_.begin(), ambient_cols_.end(), cols_[j]);
    if (it != ambient_cols_.end()) ambient_model_.emplace_back(j, std::size_t(it - ambient_cols_.begin()));
  }
  recent_peak_.assign(cols_.size(), kNaN);
  step_model_.clear();
  for (std::size_t j = 0; j < cols_.size(); ++j) {
    const auto it = std::lower_bound(step_cols_.begin(), step_cols_.end(), cols_[j]);
    if (it != step_cols_.end() && *it == cols_[j]) step_model_.emplace_back(j, std::size_t(it - step_cols_.begin()));
  }
}

void StreamingDetector::set_false_per_day(double f) {
  opts_.detect.false_per_day = f;
  if (opts_.baseline && model_) model_->set_false_per_day(f);
}

StreamingDetector::~StreamingDetector() = default;

void StreamingDetector::set_incident_rule(IncidentRule rule) {
  // The opening rings hold min_windows + 1 windows: resized (cleared) at the next window only
  // when that changes, so a reload between an opening's windows keeps their evidence.
  if (rule.min_windows != opts_.detect.incident.min_windows) zring_ = Matrix();
  opts_.detect.incident = rule;
  tracker_.set_rule(rule);
}

void StreamingDetector::set_history_samples(std::size_t n) {
  pending_capacity_ = std::max(n, opts_.warmup_samples);
}

void StreamingDetector::clear_update() {
  update_.scored = update_.opened = update_.closed = update_.refitted = false;
  update_.change_opened = update_.change_closed = false;
  update_.fused = kNaN;
  update_.symptom_led = {};
}

const StreamUpdate& StreamingDetector::push(std::int64_t t_unix_ns, std::span<const double> row) {
  clear_update();
  if (row.size() != raw_channels_.size())
    throw DetectError("sample has " + std::to_string(row.size()) + " values for " +
                      std::to_string(raw_channels_.size()) + " channels");
  if (have_prev_ && t_unix_ns <= last_t_ns_) return update_;
  if (pushed_++ < opts_.settle_samples) return update_;
  append_row(t_unix_ns, row);
  if (periodic_fit_due(rows_)) fit();
  const std::size_t L = opts_.detect.window.length, stride = opts_.detect.window.stride;
  const std::uint64_t g = rows_ - 1;
  if (model_ && g + 1 >= L && (g + 1 - L) % stride == 0) score_window();
  return update_;
}

void StreamingDetector::prime(std::int64_t t_unix_ns, std::span<const double> row) {
  if (row.size() != raw_channels_.size())
    throw DetectError("primed row has " + std::to_string(row.size()) + " values for " +
                      std::to_string(raw_channels_.size()) + " channels");
  if (have_prev_ && t_unix_ns <= last_t_ns_) return;
  append_row(t_unix_ns, row);
  ++primed_;
}

std::size_t StreamingDetector::finish_priming() {
  if (primed_ == 0) return 0;
  judged_from_ = rows_;  // the primed rows were judged by another process, not here
  if (!model_ && !opts_.baseline && rows_ >= opts_.warmup_samples) fit();
  begin_segment();
  const std::size_t n = primed_;
  primed_ = 0;
  return n;
}

void StreamingDetector::begin_segment() {
  std::fill(prev_.begin(), prev_.end(), kNaN);  // no rate across the time nobody sampled
  pushed_ = 0;                                  // the new process's start-up settles again
}

const StreamUpdate& StreamingDetector::end_segment() {
  clear_update();
  if (episode_ == Episode::incident && active_) {
    close_incident("(ended: the agent stopped)", false);
    if (update_.change_closed && !changes_.empty()) changes_.back().withdrawn += "; the agent stopped";
  } else if (episode_ == Episode::change && change_ && rows_ > 0) {
    // At its last anomalous window's last row, as a change that closes (normal windows after
    // it are not part of it).
    const std::uint64_t last = tracker_.open() ? std::uint64_t(tracker_.last()) * opts_.detect.window.stride +
                                                     opts_.detect.window.length - 1
                                               : rows_ - 1;
    end_change("ended: the agent stopped", std::min<std::uint64_t>(last, rows_ - 1));
  }
  tracker_.reset();
  return update_;
}

void StreamingDetector::restart(std::int64_t history_from_unix_ns) {
  if (episode_ != Episode::none) end_segment();
  tracker_.reset();
  if (!opts_.baseline) {
    symptoms_seen_ = false;  // as a fresh detector's: the next model's symptom channels say
    model_.reset();
    cols_.clear();
    chans_.clear();
    z_.clear();
    low_.clear();
    rise_z_.clear();
    zring_ = Matrix();
    regimes_.clear();
    model_clean_ = true;
    not_ready_ = "warming up";
  }
  accepted_.clear();
  reset_peaks();
  // The kept rows the restarted agent would have primed: those stamped from history_from on.
  std::uint64_t from = rows_ > capacity_ ? rows_ - capacity_ : 0;
  while (from < rows_ && hist_t_[slot(from)] < history_from_unix_ns) ++from;
  regime_row0_ = from;
  judged_from_ = rows_;
  // The restarted agent's first primed row (or, without history, its first live one) has no
  // rates: the window over it is start-up, out of the reference.
  start_row_ = from;
  regime_rows_at_fit_ = 0;
  rows_at_fit_ = rows_;
  if (!opts_.baseline && rows_ - from >= opts_.warmup_samples) fit();
  begin_segment();
}

void StreamingDetector::append_row(std::int64_t t_unix_ns, std::span<const double> row) {
  // Rates and derived channels of this sample: the offline formulas, one row.
  last_t_ns_ = t_unix_ns;
  if (!have_prev_) {
    // The first sample is a row too, as to_rates()'s row 0: gauges as read, counters NaN (no
    // previous value; prev_ is all NaN). Windows therefore start where detect()'s do.
    have_prev_ = true;
    t0_ns_ = prev_t_ns_ = t_unix_ns;
  }
  rates_row(raw_channels_, prev_, row, double(t_unix_ns - prev_t_ns_) * 1e-9, rates_);
  std::copy(row.begin(), row.end(), prev_.begin());
  prev_t_ns_ = t_unix_ns;
  const std::uint64_t g = rows_++;
  // The row this one overwrites leaves the episode's running means first (episode_means()).
  if (g >= capacity_ && means_from_ == g - capacity_ && means_from_ < means_to_) {
    const auto old = hist_.row(slot(means_from_));
    for (std::size_t j = 0; j < cols_.size() && j < msum_.size(); ++j)
      if (const double x = old[std::size_t(cols_[j])]; std::isfinite(x)) {
        msum_[j] -= x;
        --mcount_[j];
      }
    ++means_from_;
    // Subtracting loses precision against a large value that left (a spike): count afresh once
    // a whole ring has been taken out.
    if (++means_evicted_ >= capacity_) means_from_ = kNoMeans;
  }
  derived_->compute(double(t_unix_ns - t0_ns_) * 1e-9, rates_, hist_.row(slot(g)));
  hist_t_[slot(g)] = t_unix_ns;
}

bool StreamingDetector::periodic_fit_due(std::uint64_t rows) const {
  if (opts_.baseline || episode_ != Episode::none) return false;
  // The first fit, or the first after a restart() without history: warmup_samples rows of the regime.
  if (!model_) return rows - std::min(regime_row0_, rows) >= opts_.warmup_samples;
  if (rows < opts_.warmup_samples) return false;
  if (rows - rows_at_fit_ >= opts_.refit_samples) return true;
  // A young regime is refitted whenever its rows have doubled, then every refit_samples.
  const std::uint64_t in_regime = rows - std::min(regime_row0_, rows);
  return opts_.workload_changes && in_regime >= 2 * regime_rows_at_fit_ && in_regime < opts_.refit_samples;
}

bool StreamingDetector::relearn_possible(std::uint64_t rows) const {
  return opts_.workload_changes && !opts_.baseline && episode_ != Episode::none &&
         rows >= episode_row0_ + opts_.detect.window.length + opts_.relearn_samples;
}

// A periodic refit of the current regime keeps its Regime::clean.
void StreamingDetector::fit() { fit_rows(regime_row0_, false, model_clean_); }

bool StreamingDetector::fit_rows(std::uint64_t r0, bool remember, bool clean) {
  rows_at_fit_ = rows_;
  // Counted from the current regime's first row, also for a re-learn (whose caller moves
  // regime_row0_ only after): a re-learned regime is not refitted again as soon as its rows
  // double, which would take a slow drift that follows it (a leak in a job that just started)
  // into its reference (WorkloadChange.ALeakAfterAWithdrawnStartIsReported).
  regime_rows_at_fit_ = rows_ - std::min(regime_row0_, rows_);
  if (pending_capacity_ != capacity_) {  // history length changed: keep the newest rows
    const std::size_t keep = std::min<std::uint64_t>({rows_, capacity_, pending_capacity_});
    Matrix h(pending_capacity_, layout_.size(), kNaN);
    std::vector<std::int64_t> ht(pending_capacity_, 0);
    for (std::uint64_t g = rows_ - keep; g < rows_; ++g) {
      auto s = hist_.row(slot(g));
      std::copy(s.begin(), s.end(), h.row(std::size_t(g % pending_capacity_)).begin());
      ht[std::size_t(g % pending_capacity_)] = hist_t_[slot(g)];
    }
    hist_ = std::move(h);
    hist_t_ = std::move(ht);
    capacity_ = pending_capacity_;
  }
  {
    const std::uint64_t first = std::max<std::uint64_t>(r0, rows_ > capacity_ ? rows_ - capacity_ : 0);
    // Rows primed or kept across a restart were judged by another process (or not at all): a
    // regime fitted on them is not known clean. A fresh start's warm-up rows are trusted, as
    // self mode trusts its first reference.
    clean = clean && first >= judged_from_;
    // A new regime with an anomalous symptomatic window among its rows is no clean state.
    if (remember && symptom_row_ != kNoRow && symptom_row_ >= first) clean = false;
  }
  // The rows from r0 (or the oldest kept), oldest first, as a Series.
  const std::uint64_t n = std::min<std::uint64_t>({rows_, capacity_, rows_ - std::min(r0, rows_)});
  Series s;
  s.channels = layout_;
  s.t_s.resize(n);
  s.values = Matrix(n, layout_.size(), kNaN);
  const std::uint64_t g0 = rows_ - n;
  for (std::uint64_t g = g0; g < rows_; ++g) {
    auto src = hist_.row(slot(g));
    std::copy(src.begin(), src.end(), s.values.row(std::size_t(g - g0)).begin());
    s.t_s[std::size_t(g - g0)] = double(hist_t_[slot(g)] - t0_ns_) * 1e-9;
  }
  std::vector<int> cols = pipeline::scored_columns(s);
  if (opts_.workload_changes && !opts_.baseline)
    std::erase_if(cols, [&](int c) { return pipeline::smoothed_average(layout_[std::size_t(c)].name); });
  if (cols.empty()) {
    if (!model_) not_ready_ = "no channel varies in the history";
    return false;
  }
  const Windows w = make_windows(s, opts_.detect.window);
  if (w.first_row.size() < 4) {
    if (!model_) not_ready_ = "history shorter than 4 windows";
    return false;
  }
  std::vector<Subsystem> subs(cols.size());
  std::vector<const ChannelInfo*> chans(cols.size());
  for (std::size_t j = 0; j < cols.size(); ++j) {
    chans[j] = &layout_[cols[j]];
    subs[j] = chans[j]->subsystem;
  }
  auto model = std::make_unique<pipeline::WindowModel>(pipeline::channel_floors(s, cols), subs, opts_.detect,
                                                       meta_.interval_s * double(opts_.detect.window.stride),
                                                       pipeline::ambient_mask(chans));
  // While the history still holds the stream's first row (gauges only, no rates yet), the
  // window over it is start-up: out of the reference, as detect()'s settle keeps it.
  const std::vector<char> keep = pipeline::fit_self(*model, w, cols, g0 == start_row_ ? 1 : 0);
  reference_windows_ = std::count(keep.begin(), keep.end(), 1);
  if (!remember) model_.reset();
  install(Regime{std::move(model), std::move(cols), std::move(chans), windows_scored_, clean});
  last_fit_ns_ = last_t_ns_;
  not_ready_.clear();
  update_.refitted = true;
  return true;
}

void StreamingDetector::install(Regime r) {
  if (model_) {  // the current model joins the memory of past regimes
    regimes_.push_back(Regime{std::move(model_), std::move(cols_), std::move(chans_), windows_scored_, model_clean_});
    if (regimes_.size() > opts_.regimes_kept) {
      auto lru = std::min_element(regimes_.begin(), regimes_.end(),
                                  [](const Regime& a, const Regime& b) { return a.last_used < b.last_used; });
      regimes_.erase(lru);
    }
  }
  model_ = std::move(r.model);
  model_clean_ = r.clean;
  cols_ = std::move(r.cols);
  means_from_ = kNoMeans;
  chans_ = std::move(r.chans);
  z_.assign(cols_.size(), 0.0);
  low_.assign(cols_.size(), 0.0);
  rise_z_.assign(cols_.size(), 0.0);
  zring_ = Matrix();  // resized at the next window
  gate_->reset(chans_, meta_.cores);
  symptoms_seen_ = symptoms_seen_ || gate_->symptom_channels() > 0;
  map_ambient();
}

bool StreamingDetector::switch_to_known_regime(bool symptomatic) {
  for (std::size_t i = 0; i < regimes_.size(); ++i) {
    Regime& r = regimes_[i];
    if (symptomatic && !r.clean) continue;
    regime_z_.resize(r.cols.size());
    const pipeline::WindowScore sc = r.model->score(win_, 0, r.cols, regime_z_);
    if (pipeline::is_anomalous(sc.fused)) continue;
    if (symptomatic) {  // the symptom judged as score_window() does, against this regime
      regime_low_.resize(r.cols.size());
      regime_rise_z_.resize(r.cols.size());
      for (std::size_t j = 0; j < r.cols.size(); ++j) regime_low_[j] = win_.at(0, std::size_t(r.cols[j]), kMin);
      r.model->rise_z(win_, 0, r.cols, regime_z_, regime_rise_z_);
      pipeline::SymptomGate gate;
      gate.reset(r.chans, meta_.cores);
      if (gate.strongest(regime_rise_z_, r.model->robust_z().median(), regime_low_) >= 0) continue;
    }
    // What moved, under the model being left: the change's one-line evidence.
    Incident ch;
    ch.kind = "workload_change";
    const std::size_t best = pipeline::strongest_channel(z_);
    if (!chans_.empty()) {
      ch.subsystem = chans_[best]->subsystem;
      ch.confidence = 1;
      ch.subsystem_shares = {{ch.subsystem, 1.0}};
      ChannelEvidence ev;
      ev.name = chans_[best]->name;
      ev.unit = chans_[best]->unit;
      ev.subsystem = chans_[best]->subsystem;
      ev.z = z_[best];
      ev.reference = model_->robust_z().median()[best];
      ev.value = win_.at(0, std::size_t(cols_[best]), kMean);
      ch.top.push_back(std::move(ev));
    }
    ch.start_unix_ns = ch.end_unix_ns = last_t_ns_;
    ch.start_s = ch.end_s = double(last_t_ns_ - t0_ns_) * 1e-9;
    ch.peak_score = update_.fused;
    ch.action = "returned to a known regime";
    Regime back = std::move(r);
    regimes_.erase(regimes_.begin() + std::ptrdiff_t(i));
    back.last_used = windows_scored_;
    install(std::move(back));
    // Its rows start now; the remembered model stands until the next periodic refit.
    regime_row0_ = rows_ - 1;
    rows_at_fit_ = rows_;
    regime_rows_at_fit_ = opts_.refit_samples;
    ++changes_total_;
    update_.change_opened = update_.change_closed = true;
    changes_.push_back(std::move(ch));
    if (changes_.size() > kMaxClosed) changes_.erase(changes_.begin());
    return true;
  }
  return false;
}

void StreamingDetector::score_window() {
  const std::size_t L = opts_.detect.window.length, stride = opts_.detect.window.stride;
  // The last n rows (the window's L and the trail's rest, as many as the stream and the ring
  // hold): with fewer than the trail's T rows, window_stats leaves the trail NaN, as
  // make_windows does before a recording has T rows.
  const std::uint64_t g_last = rows_ - 1;
  const std::size_t n = std::size_t(std::min<std::uint64_t>({recent_.t_s.size(), rows_, capacity_}));
  const std::uint64_t g_from = g_last + 1 - n, g_first = g_last + 1 - L;
  for (std::size_t i = 0; i < n; ++i) {
    auto src = hist_.row(slot(g_from + i));
    std::copy(src.begin(), src.end(), recent_.values.row(i).begin());
    recent_.t_s[i] = double(hist_t_[slot(g_from + i)] - t0_ns_) * 1e-9;
  }
  window_stats(recent_, n - L, L, recent_.t_s.size(), win_.stats.row(0));
  const pipeline::WindowScore sc = model_->score(win_, 0, cols_, z_);
  const std::uint64_t gw = g_first / stride;
  ++windows_scored_;
  update_.scored = true;
  update_.fused = sc.fused;
  update_.subsystem = sc.subsystem;
  const std::size_t best = pipeline::strongest_channel(z_);
  update_.top_channel = chans_.empty() ? std::string_view() : std::string_view(chans_[best]->name);
  update_.top_z = z_.empty() ? 0.0 : z_[best];

  // The windows an opening incident can span: k, or k + 1 when the k-th is not sustained.
  const std::size_t K = std::size_t(std::max(opts_.detect.incident.min_windows, 1)) + 1;
  if (zring_.rows() != K || zring_.cols() != z_.size()) {
    zring_ = Matrix(K, z_.size(), 0.0);
    ifring_ = Matrix(K, z_.size(), 0.0);
    spering_ = Matrix(K, z_.size(), 0.0);
    levring_ = Matrix(K, 3, 0.0);
    fused_ring_.assign(K, 0.0);
    sym_ring_.assign(K, 0);
    sym_rise_.assign(K, 0.0);
    sym_z_.assign(K, 0.0);
    ifw_.assign(z_.size(), 0.0);
    spew_.assign(z_.size(), 0.0);
  }
  bool anomalous = pipeline::is_anomalous(sc.fused), sustained = sc.sustained;
  if (anomalous || opts_.detect.symptom_windows) {  // the window's minimum per model channel: what a rise is measured by
    for (std::size_t j = 0; j < cols_.size(); ++j) low_[j] = win_.at(0, std::size_t(cols_[j]), kMin);
    model_->rise_z(win_, 0, cols_, z_, rise_z_);
  }
  if (!anomalous && opts_.detect.symptom_windows) {  // a symptom's step leads the window (as detect())
    for (const auto& [j, i] : step_model_) recent_peak_[j] = step_peaks_->peak(i);
    const std::ptrdiff_t led = gate_->stepped(rise_z_, model_->robust_z().median(), low_, recent_peak_);
    if (led >= 0) {
      anomalous = sustained = true;
      update_.symptom_led = chans_[std::size_t(led)]->name;
      ++symptom_led_windows_;
    }
  }
  // What the forest and the PCA residual blame, for the attribution of anomalous windows only
  // (as detect()).
  if (anomalous) {
    model_->contributions(win_, 0, cols_, ifw_, spew_);
  } else {
    std::fill(ifw_.begin(), ifw_.end(), 0.0);
    std::fill(spew_.begin(), spew_.end(), 0.0);
  }
  std::ptrdiff_t symptom = -1;
  second_ = fresh_ = -1;
  if (anomalous) {
    for (const auto& [j, a] : ambient_model_) seen_[j] = peaks_->peak(a);
    // A successor's symptoms are its own: what it inherited is accepted at any level.
    symptom = gate_->strongest(rise_z_, model_->robust_z().median(), low_, seen_,
                               inherited_.empty() ? std::span<const double>(accepted_) : inherit_accept_);
    // A second cause inside a reported incident: the strongest symptom among the channels its
    // onset did not move, of another subsystem than the one it names; else a fresh symptom of
    // the same subsystem (fresh_levels()).
    // Not with a baseline model (as `reveal detect --baseline`, pipeline::episodes(), keeps one
    // incident per episode), nor in a drift (a leak whose later swap stalls are the same cause).
    if (symptom >= 0 && episode_ == Episode::incident && confirmed_ && active_ && !active_->drifted &&
        !opts_.baseline && tells_workload_changes()) {
      const auto median = model_->robust_z().median();
      if (fresh_levels(true)) second_ = gate_->strongest(rise_z_, median, low_, seen_, fresh_accept_);
      if (second_ < 0 && fresh_levels(false)) fresh_ = gate_->strongest(rise_z_, median, low_, seen_, fresh_accept_);
      // The incident as it was before a second cause's first window joins its evidence: what
      // closes if the second cause lasts (while it is judged, its windows would make the first
      // incident's subsystem their own).
      if (second_ >= 0 && second_run_ == 0) before_second_ = *active_;
    }
  }
  if (second_ < 0) before_second_.reset();  // no second cause being judged (its run ends too)
  // Every window's level of the ambient and the other symptoms joins their recent peaks once judged.
  for (std::size_t a = 0; a < ambient_cols_.size(); ++a)
    ambient_level_[a] = win_.at(0, std::size_t(ambient_cols_[a]), kMin);
  peaks_->push(ambient_level_);
  for (std::size_t i = 0; i < step_cols_.size(); ++i) step_level_[i] = win_.at(0, std::size_t(step_cols_[i]), kMin);
  step_peaks_->push(step_level_);
  const bool symptomatic = symptom >= 0;
  if (symptomatic) symptom_row_ = rows_ - 1;
  const std::size_t slot_w = std::size_t(gw % K);
  std::copy(z_.begin(), z_.end(), zring_.row(slot_w).begin());
  std::copy(ifw_.begin(), ifw_.end(), ifring_.row(slot_w).begin());
  std::copy(spew_.begin(), spew_.end(), spering_.row(slot_w).begin());
  const std::array<double, 3> level = sc.detector_levels();
  for (std::size_t d = 0; d < 3; ++d) levring_(slot_w, d) = level[d];
  fused_ring_[slot_w] = sc.fused;
  sym_ring_[slot_w] = int(symptom + 1);
  sym_z_[slot_w] = symptomatic ? rise_z_[std::size_t(symptom)] : 0.0;
  sym_rise_[slot_w] = symptomatic ? gate_->rise(std::size_t(symptom), model_->robust_z().median(), low_) : 0.0;
  const bool changes = tells_workload_changes();  // as detect()

  // The episode's evidence gets its windows as detect() feeds them: on opening the windows
  // from its first (still in the rings), then each window while it is open.
  switch (tracker_.push(std::size_t(gw), anomalous, sustained)) {
    case IncidentTracker::Change::opened: {
      bool any_symptom = false;
      for (std::size_t w = tracker_.first(); w <= tracker_.last(); ++w) any_symptom |= sym_ring_[w % K] != 0;
      // A symptom is judged against a remembered regime on the window that has it: the last
      // opening window (one that had a symptom earlier in the opening and none now is no return).
      const bool last_symptomatic = sym_ring_[tracker_.last() % K] != 0;
      if (changes && !opts_.baseline && (!any_symptom || last_symptomatic) && switch_to_known_regime(any_symptom)) {
        tracker_.reset();
        return;
      }
      open_from_rings(tracker_.first(), tracker_.last(), changes && !any_symptom);
      break;
    }
    case IncidentTracker::Change::extended:
      evidence_->add(true, sc.fused, level, rebased(z_, zm_), masked(ifw_, ifm_), masked(spew_, spem_));
      // Until it is reported, what a symptomatic incident moves is its onset: a fault whose
      // symptoms spread over its first seconds (dropped caches, then the re-reads' I/O stalls)
      // is one cause.
      if (episode_ == Episode::incident && !confirmed_ && !opts_.baseline && (had_symptom_ || symptomatic))
        widen_onset();
      if (episode_ == Episode::incident && symptomatic) note_symptom(slot_w);
      if (episode_ == Episode::change) update_change(); else update_incident();
      break;
    case IncidentTracker::Change::closed: {
      if (episode_ == Episode::change) {
        end_change("ended: a short phase, back to the reference",
                   std::min<std::uint64_t>(std::uint64_t(tracker_.last()) * stride + L, rows_) - 1);
        break;
      }
      Incident inc = std::move(*active_);
      active_.reset();
      episode_ = Episode::none;
      episode_from_row_ = kNoRow;
      retire_incident(std::move(inc));
      break;
    }
    case IncidentTracker::Change::none:
      // A normal window inside an open episode: part of it if a later window extends it.
      if (tracker_.open()) evidence_->add(false, sc.fused, level, rebased(z_, zm_), masked(ifw_, ifm_), masked(spew_, spem_));
      break;
  }
  if (changes) after_window(symptomatic);
  if (episode_ == Episode::incident) confirm_if_due();
}

void StreamingDetector::open_from_rings(std::size_t first, std::size_t last, bool as_change) {
  const std::size_t K = fused_ring_.size(), L = opts_.detect.window.length, stride = opts_.detect.window.stride;
  evidence_->start(z_.size(), model_->pca_components() > 0);
  had_symptom_ = false;
  for (std::size_t w = first; w <= last; ++w) {
    const std::size_t r = w % K;
    evidence_->add(pipeline::is_anomalous(fused_ring_[r]), fused_ring_[r], {levring_(r, 0), levring_(r, 1), levring_(r, 2)},
                   rebased(zring_.row(r), zm_), masked(ifring_.row(r), ifm_), masked(spering_.row(r), spem_));
    if (sym_ring_[r]) {
      had_symptom_ = true;
      last_symptom_row_ = std::uint64_t(w) * stride + L - 1;
    }
  }
  episode_row0_ = std::uint64_t(first) * stride;
  symptom_run_ = 0;
  second_run_ = 0;
  before_second_.reset();
  if (as_change) {
    inherited_.clear();
    change_settled_ = false;
    change_ = Incident{};
    change_->kind = "workload_change";
    episode_ = Episode::change;
    ++changes_total_;
    update_change();
    update_.change_opened = true;
  } else {
    episode_from_row_ = kNoRow;
    active_ = Incident{};
    confirmed_ = false;  // reported once its span reaches min_duration_s (confirm_if_due)
    episode_ = Episode::incident;
    for (std::size_t w = first; w <= last && active_->symptom.name.empty(); ++w)
      if (sym_ring_[w % K]) note_symptom(w % K);
    note_onset();
    update_incident();
    if (had_symptom_ && tells_workload_changes())
      active_->symptom_end_unix_ns = hist_t_[slot(std::min<std::uint64_t>(last_symptom_row_, rows_ - 1))];
  }
}

bool StreamingDetector::fresh_levels(bool other_subsystem) {
  const std::size_t n = cols_.size();
  if (onset_z_.size() != n || chans_.size() != n) return false;
  fresh_accept_.resize(n);
  // The subsystem the incident names: as it was before a second cause being judged began.
  const Subsystem named = before_second_ ? before_second_->subsystem : active_->subsystem;
  bool any = false;
  for (std::size_t j = 0; j < n; ++j) {
    const bool out = std::fabs(onset_z_[j]) >= pipeline::kMovedZ || (!inherited_.empty() && inherited_[j]) ||
                     (other_subsystem && chans_[j]->subsystem == named);
    fresh_accept_[j] = out ? kNever : kNaN;  // an accepted level no window rises above
    any |= !out;
  }
  return any;
}

std::span<const double> StreamingDetector::masked(std::span<const double> v, std::vector<double>& out) const {
  if (inherited_.empty() || inherited_.size() != v.size()) return v;
  out.assign(v.begin(), v.end());
  for (std::size_t j = 0; j < v.size(); ++j)
    if (inherited_[j]) out[j] = 0.0;
  return out;
}

std::span<const double> StreamingDetector::rebased(std::span<const double> z, std::vector<double>& out) const {
  if (inherited_.empty() || inherited_.size() != z.size() || base_z_.size() != z.size()) return z;
  out.assign(z.begin(), z.end());
  for (std::size_t j = 0; j < z.size(); ++j)
    if (inherited_[j]) {
      // What moved beyond the first incident's level, in its direction (0 when it went back).
      const double d = std::isfinite(z[j]) && std::isfinite(base_z_[j]) ? z[j] - base_z_[j] : 0.0;
      out[j] = base_z_[j] >= 0 ? std::max(0.0, d) : std::min(0.0, d);
    }
  return out;
}

void StreamingDetector::begin_successor() {
  const std::size_t K = fused_ring_.size();
  const std::size_t last = tracker_.last(), first = last + 1 - std::min(second_run_, K);
  const std::uint64_t from_row = second_from_row_;  // where the second cause's windows began
  const std::size_t j = std::size_t(second_);
  // What the old incident's onset moved (and what it had inherited) stays out of the new one's
  // evidence: it is described by what the second cause moved.
  std::vector<char> mask(cols_.size(), 0);
  for (std::size_t c = 0; c < mask.size(); ++c)
    mask[c] = (c < onset_z_.size() && std::fabs(onset_z_[c]) >= pipeline::kMovedZ) ||
              (!inherited_.empty() && inherited_[c]);
  const ChannelEvidence sym = symptom_evidence(j, gate_->rise(j, model_->robust_z().median(), low_), rise_z_[j]);
  // The levels the first incident held, which the new one's evidence is measured from on those
  // channels: its mean z (over its own base when it was a second cause itself) and mean values.
  // Their symptoms are the first incident's: the new one lasts as long as its own.
  {
    const std::span<const double> zbar = evidence_->zbar();
    std::vector<double> base(mask.size(), 0.0), ref(mask.size(), kNaN);
    for (std::size_t c = 0; c < mask.size(); ++c) {
      if (!mask[c]) continue;
      const bool had = !inherited_.empty() && inherited_[c] && c < base_z_.size();
      base[c] = (c < zbar.size() && std::isfinite(zbar[c]) ? zbar[c] : 0.0) + (had ? base_z_[c] : 0.0);
      ref[c] = c < mean_.size() ? mean_[c] : kNaN;
    }
    base_z_ = std::move(base);
    base_ref_ = std::move(ref);
    inherit_accept_.assign(mask.size(), kNaN);
    for (std::size_t c = 0; c < mask.size(); ++c)
      if (mask[c]) inherit_accept_[c] = kNever;
  }
  Incident inc = before_second_ ? std::move(*before_second_) : std::move(*active_);
  active_.reset();
  before_second_.reset();
  // The first incident ends at the row before the second cause began (its evidence keeps the
  // windows it had when the split was decided).
  if (from_row > 0 && from_row - 1 >= (rows_ > capacity_ ? rows_ - capacity_ : 0)) {
    inc.end_unix_ns = std::max(inc.start_unix_ns, std::min(inc.end_unix_ns, hist_t_[slot(from_row - 1)]));
    inc.end_s = double(inc.end_unix_ns - t0_ns_) * 1e-9;
    if (inc.symptom_end_unix_ns > inc.end_unix_ns) inc.symptom_end_unix_ns = inc.end_unix_ns;
  }
  inc.action += inc.action.empty() ? "" : " ";
  inc.action += "(ended: a second cause began, a new incident follows: " + std::string(to_string(sym.subsystem)) +
                " symptom " + sym.name + " rose where this incident's onset moved nothing)";
  episode_ = Episode::none;
  episode_from_row_ = kNoRow;
  retire_incident(std::move(inc));
  inherited_ = std::move(mask);
  tracker_.restart(first, last);
  open_from_rings(first, last, false);
  episode_from_row_ = from_row;  // dated from the second cause's first window
  episode_row0_ = state_row0_ = from_row;
  active_->symptom = sym;        // the second cause's, not the first one's that still goes on
  update_incident();
}

void StreamingDetector::widen_onset() {
  for (std::size_t j = 0; j < onset_z_.size() && j < z_.size(); ++j)
    if (std::fabs(z_[j]) > std::fabs(onset_z_[j])) onset_z_[j] = z_[j];
}

void StreamingDetector::note_onset() {
  const std::span<const double> m = evidence_->zbar();
  onset_z_.assign(m.begin(), m.end());
  state_row0_ = episode_row0_;
  fresh_run_ = 0;
}

void StreamingDetector::note_symptom(std::size_t r) {
  if (!active_ || !active_->symptom.name.empty() || sym_ring_[r] <= 0) return;
  const std::size_t j = std::size_t(sym_ring_[r] - 1);
  if (j >= chans_.size()) return;
  active_->symptom = symptom_evidence(j, sym_rise_[r], sym_z_[r]);
}

ChannelEvidence StreamingDetector::symptom_evidence(std::size_t j, double rise, double z) const {
  ChannelEvidence s;
  s.name = chans_[j]->name;
  s.unit = chans_[j]->unit;
  s.subsystem = chans_[j]->subsystem;
  s.value = rise;
  s.reference = j < model_->robust_z().median().size() ? model_->robust_z().median()[j] : 0.0;
  s.z = z;
  return s;
}

void StreamingDetector::accept_levels(std::uint64_t r0, const std::vector<char>* only) {
  // The highest window minimum each symptom channel held since r0.
  const std::size_t L = opts_.detect.window.length;
  const std::uint64_t oldest = rows_ > capacity_ ? rows_ - capacity_ : 0;
  r0 = std::max(r0, oldest);
  accepted_.assign(cols_.size(), kNaN);
  for (const std::size_t j : gate_->channels()) {
    if (only && (j >= only->size() || !(*only)[j])) continue;
    double best = -INFINITY;
    for (std::uint64_t w = r0; w + L <= rows_; ++w) {
      double lo = INFINITY;
      for (std::uint64_t r = w; r < w + L; ++r) {
        const double v = hist_(slot(r), std::size_t(cols_[j]));
        lo = std::isfinite(v) ? std::min(lo, v) : lo;
      }
      if (std::isfinite(lo)) best = std::max(best, lo);
    }
    if (std::isfinite(best)) accepted_[j] = best;
  }
}

bool StreamingDetector::withdraw_incident(std::int64_t start_unix_ns, const std::string& why) {
  // A second cause's incident (begin_successor()) began while the host was already hurting: no
  // new workload starting where it hurt nobody, and its withdrawal would accept the first
  // cause's stalls too.
  if (episode_ != Episode::incident || !active_ || active_->start_unix_ns != start_unix_ns || !model_ ||
      !tells_workload_changes() || !inherited_.empty())
    return false;
  accept_levels(episode_row0_, nullptr);
  change_ = std::move(active_);
  active_.reset();
  confirmed_ = false;
  inherited_.clear();
  second_run_ = 0;
  before_second_.reset();
  had_symptom_ = false;  // a change has none; an incident it becomes starts counting anew
  change_->symptom_end_unix_ns = 0;
  change_->kind = "workload_change";
  change_->withdrawn = why;
  change_->withdrawn_unix_ns = last_t_ns_;
  change_->symptom = ChannelEvidence{};
  episode_ = Episode::change;
  change_settled_ = false;
  symptom_run_ = 0;
  ++changes_total_;
  ++withdrawn_total_;
  update_change();
  return true;
}

void StreamingDetector::end_change(const char* how, std::uint64_t end_row) {
  Incident& ch = *change_;
  ch.action = how;
  accepted_.clear();
  ch.end_unix_ns = std::max(ch.start_unix_ns, hist_t_[slot(end_row)]);
  ch.end_s = double(ch.end_unix_ns - t0_ns_) * 1e-9;
  changes_.push_back(std::move(ch));
  if (changes_.size() > kMaxClosed) changes_.erase(changes_.begin());
  change_.reset();
  episode_from_row_ = kNoRow;
  episode_ = Episode::none;
  symptom_run_ = 0;
  update_.change_closed = true;
}

void StreamingDetector::after_window(bool symptomatic) {
  const std::size_t L = opts_.detect.window.length, stride = opts_.detect.window.stride;
  const std::uint64_t relearn = opts_.relearn_samples;
  const auto row_at = [this](std::uint64_t r) { return std::span<const double>(hist_.row(slot(r))); };
  const std::uint64_t oldest = rows_ > capacity_ ? rows_ - capacity_ : 0;
  if (episode_ == Episode::change) {
    symptom_run_ = symptomatic ? symptom_run_ + 1 : 0;
    const std::size_t K = fused_ring_.size();
    if (symptom_run_ >= K - 1) {
      // Symptoms rose during the change: an incident from its first symptomatic window.
      const std::size_t last = tracker_.last(), first = last + 1 - std::min(symptom_run_, K);
      end_change("ended: symptoms rose, an incident opened", std::max<std::uint64_t>(std::uint64_t(first) * stride, episode_row0_));
      tracker_.restart(first, last);
      open_from_rings(first, last, false);
      return;
    }
    const std::uint64_t r0 = std::max<std::uint64_t>(episode_row0_ + L, oldest);
    if (rows_ < r0 + relearn || change_settled_) return;
    // The last relearn_samples rows settled (a ramp into the new state before them is fine):
    // they are the new regime. A fixed baseline model learns nothing: the change stays open
    // until the windows are normal again (as detect(): pipeline::episodes()).
    const std::uint64_t rs = rows_ - relearn;
    if (pipeline::settled(rs, rows_, row_at, cols_, model_->floors(), evidence_->zbar())) {
      if (opts_.baseline) {
        change_settled_ = true;
      } else if (fit_rows(rs, true, change_->withdrawn.empty() && accepted_.empty())) {  // accepted stalls: not clean
        regime_row0_ = rs;
        end_change("ended: a new regime learned", rows_ - 1);
        tracker_.reset();
      }
      return;
    }
    if (rows_ < r0 + pipeline::kDriftRelearns * relearn) return;
    // Still drifting after kDriftRelearns × relearn_samples rows: a leak or a runaway ramp, not
    // a new steady workload.
    active_ = std::move(change_);
    change_.reset();
    accepted_.clear();
    active_->kind = "anomaly";
    active_->drifted = true;
    active_->withdrawn.clear();
    active_->withdrawn_unix_ns = 0;
    active_->symptom_end_unix_ns = 0;
    confirmed_ = false;
    had_symptom_ = false;  // a drift: no symptom so far (a withdrawn incident's are not its own)
    episode_ = Episode::incident;
    note_onset();
    update_incident();
    return;
  }
  if (episode_ != Episode::incident) return;
  if (symptomatic) {
    had_symptom_ = true;
    last_symptom_row_ = rows_ - 1;
    active_->symptom_end_unix_ns = hist_t_[slot(last_symptom_row_)];
  }
  // A second cause (score_window): once its symptom held as many windows as open an incident
  // from a change, the incident it began in ends and a new one opens from them.
  const bool second = second_ >= 0 && tracker_.open() && tracker_.last() == (rows_ - L) / stride;
  if (second && second_run_ == 0) second_from_row_ = rows_ - L;  // its first window's first row
  second_run_ = second ? second_run_ + 1 : 0;
  // Its span (first window's first row to the current one's last, as an incident's) must reach
  // min_duration_s: the first incident ends only for a second cause that is an incident itself,
  // not for a few seconds of another stall.
  const double interval_s = meta_.interval_s > 0 ? meta_.interval_s : 0.0;
  if (second_run_ + 1 >= fused_ring_.size() &&
      double(hist_t_[slot(rows_ - 1)] - hist_t_[slot(second_from_row_)]) * 1e-9 + interval_s >=
          opts_.detect.incident.min_duration_s) {
    begin_successor();
    return;
  }
  // A fresh symptom of the subsystem it names (a fork storm in a job's start-up contention):
  // the incident's state is new from there; what it moves joins the onset's channels, and the
  // state must last anew before it becomes the reference.
  fresh_run_ = fresh_ >= 0 && tracker_.open() && tracker_.last() == (rows_ - L) / stride ? fresh_run_ + 1 : 0;
  if (fresh_run_ + 1 >= fused_ring_.size()) {
    for (std::size_t j = 0; j < onset_z_.size() && j < z_.size(); ++j)
      if (!(std::fabs(onset_z_[j]) >= pipeline::kMovedZ) && std::fabs(z_[j]) >= pipeline::kMovedZ) onset_z_[j] = z_[j];
    if (std::size_t(fresh_) < onset_z_.size() && !(std::fabs(onset_z_[std::size_t(fresh_)]) >= pipeline::kMovedZ))
      onset_z_[std::size_t(fresh_)] = pipeline::kMovedZ;
    state_row0_ = std::uint64_t(tracker_.last() + 1 - fresh_run_) * stride;
    fresh_run_ = 0;
  }
  // Its symptoms gone for kSymptomGoneWindows windows: the fault is over, at its last symptom,
  // whether or not the load settled; what still differs is a workload change from the row after
  // it (as detect(): pipeline::episodes()).
  if (had_symptom_ && rows_ >= last_symptom_row_ + 1 + pipeline::kSymptomGoneWindows * stride) {
    // A second cause's incident (begin_successor()) ends with its own symptoms; the state it
    // began in (another tenant's contention) goes on as a workload change that accepts the
    // stalls the first incident was about, as a withdrawn incident's does.
    const std::vector<char> inherited = std::move(inherited_);
    const std::uint64_t r0 = episode_row0_;
    close_incident(pipeline::kEndedQuietFixed, true);
    if (!change_follows(last_symptom_row_ + 1)) tracker_.reset();
    else if (!inherited.empty()) accept_levels(r0, &inherited);
    return;
  }
  // Symptoms gone (or never there) for relearn_samples rows while the load stays different and
  // settled: the fault is over and the host runs something else now. Or the incident has lasted
  // kPersistRelearns × relearn_samples rows and its last relearn_samples rows are settled,
  // symptoms included: a lasting state (another tenant's job contending for the CPU, a fault
  // nobody fixed) becomes the reference; leaving it is then a return to a known regime.
  const std::uint64_t quiet_from = had_symptom_ ? last_symptom_row_ + 1 : episode_row0_ + L;
  const bool quiet = rows_ >= std::max(quiet_from, oldest) + relearn;
  // A fixed baseline model has no reference to move: only the symptoms' end closes an incident.
  const bool lasting = !opts_.baseline && rows_ >= state_row0_ + kPersistRelearns * relearn;
  if (!quiet && !lasting) return;
  const std::uint64_t r0 = quiet ? std::max(quiet_from, oldest) : rows_ - relearn;
  pipeline::fresh_movers(onset_z_, z_, fresh_z_);
  if (!pipeline::settled(r0, rows_, row_at, cols_, model_->floors(), evidence_->zbar()) ||
      !pipeline::settled(r0, rows_, row_at, cols_, model_->floors(), fresh_z_))
    return;
  const bool drifted = active_->drifted;  // a leak's plateau is no clean state
  close_incident(opts_.baseline ? pipeline::kEndedQuietFixed
                 : quiet        ? "(ended: the host settled into a new regime, now the reference)"
                                : "(ended: the state lasted and settled; it is the reference now)",
                 quiet);
  // A baseline model re-learns nothing: the load that stays is a workload change from now on,
  // dated from the row after the last symptom (as detect(): pipeline::episodes()).
  if (opts_.baseline && change_follows(had_symptom_ ? last_symptom_row_ + 1 : rows_ - L)) return;
  tracker_.reset();
  if (!opts_.baseline && fit_rows(r0, true, quiet && !drifted)) regime_row0_ = r0;
}

void StreamingDetector::close_incident(const char* how, bool at_last_symptom) {
  Incident inc = std::move(*active_);
  active_.reset();
  if (at_last_symptom && had_symptom_ && last_symptom_row_ < rows_) {
    inc.end_unix_ns = std::max(inc.start_unix_ns, hist_t_[slot(last_symptom_row_)]);
    inc.end_s = double(inc.end_unix_ns - t0_ns_) * 1e-9;
  }
  inc.action += inc.action.empty() ? "" : " ";
  inc.action += how;
  episode_ = Episode::none;
  episode_from_row_ = kNoRow;
  retire_incident(std::move(inc));
}

void StreamingDetector::retire_incident(Incident inc) {
  const IncidentRule& rule = opts_.detect.incident;
  inherited_.clear();
  second_run_ = 0;
  before_second_.reset();
  if (!confirmed_) {
    if (tells_workload_changes() && is_transient(rule, inc, meta_.interval_s)) {
      pipeline::make_transient(inc, rule, last_t_ns_, meta_.interval_s);
      changes_.push_back(std::move(inc));
      if (changes_.size() > kMaxClosed) changes_.erase(changes_.begin());
      ++transients_total_;
      update_.change_closed = true;
      return;
    }
    update_.opened = true;  // its span reached min_duration_s at its close: opened and closed at once
  }
  confirmed_ = false;
  closed_.push_back(std::move(inc));
  if (closed_.size() > kMaxClosed) closed_.erase(closed_.begin());
  update_.closed = true;
}

void StreamingDetector::confirm_if_due() {
  if (!active_ || confirmed_) return;
  // The span so far: to its last symptom (an incident ending at its last symptom is dated
  // there) or, without one, to its last anomalous window (describe()).
  if (tells_workload_changes() && is_transient(opts_.detect.incident, *active_, meta_.interval_s)) return;
  confirmed_ = true;
  update_.opened = true;
}

const Incident* StreamingDetector::opened_incident() const {
  if (!update_.opened) return nullptr;
  if (active_) return confirmed_ ? &*active_ : nullptr;
  return update_.closed && !closed_.empty() ? &closed_.back() : nullptr;
}

bool StreamingDetector::change_follows(std::uint64_t from_row) {
  const std::size_t gw = std::size_t((rows_ - opts_.detect.window.length) / opts_.detect.window.stride);
  if (!tracker_.open() || tracker_.last() != gw) return false;
  tracker_.restart(gw, gw);
  episode_from_row_ = from_row;
  open_from_rings(gw, gw, true);
  return true;
}

bool StreamingDetector::tells_workload_changes() const {
  return opts_.workload_changes && symptoms_seen_;
}

void StreamingDetector::update_incident() { describe(*active_); }
void StreamingDetector::update_change() { describe(*change_); }

// The model channels' means over history rows [r0, r1) into mean_ (explain::channel_means'
// values), kept as running sums while an episode grows: each call adds only the rows pushed
// since the last one, a row at a time (the history is row-major), in the same order as a
// recount, so the means are the same bits. A row the ring overwrites leaves the sums as it is
// overwritten (push()): an episode older than the history keeps the mean of the rows still in
// it, as a recount would, to rounding (recounted once a whole ring has left, so the rounding
// of a large value that left does not stay). Anything else — another episode, new model columns, a
// history resized — counts again from r0.
void StreamingDetector::episode_means(std::uint64_t r0, std::uint64_t r1) {
  const std::size_t nc = cols_.size();
  if (means_from_ == kNoMeans || r0 != means_from_ || r1 < means_to_ || msum_.size() != nc) {
    msum_.assign(nc, 0.0);
    mcount_.assign(nc, 0);
    means_from_ = means_to_ = r0;
    means_evicted_ = 0;
  }
  for (; means_to_ < r1; ++means_to_) {
    const auto row = hist_.row(slot(means_to_));
    for (std::size_t j = 0; j < nc; ++j)
      if (const double x = row[std::size_t(cols_[j])]; std::isfinite(x)) {
        msum_[j] += x;
        ++mcount_[j];
      }
  }
  mean_.resize(nc);
  for (std::size_t j = 0; j < nc; ++j) mean_[j] = mcount_[j] ? msum_[j] / double(mcount_[j]) : __builtin_nan("");
}

void StreamingDetector::describe(Incident& inc) {
  const std::size_t L = opts_.detect.window.length, stride = opts_.detect.window.stride;
  inc.first_window = tracker_.first();
  inc.last_window = tracker_.last();
  // Rows of the episode still in the history ring.
  const std::uint64_t oldest = rows_ > capacity_ ? rows_ - capacity_ : 0;
  const std::uint64_t first_row = std::min<std::uint64_t>(std::uint64_t(inc.first_window) * stride, episode_from_row_);
  const std::uint64_t r0 = std::max<std::uint64_t>(first_row, oldest);
  const std::uint64_t r1 = std::min<std::uint64_t>(std::uint64_t(inc.last_window) * stride + L, rows_);
  // The start stays where it was once the episode's first rows have left the ring (an episode
  // longer than the history): it moved with the ring's oldest row every sample, so the tenant
  // and GPU-pod followers took each sample for a new episode (judged again, over a start the
  // scans no longer held) and /incidents showed a start that kept moving.
  if (first_row >= oldest || inc.start_unix_ns == 0) inc.start_unix_ns = hist_t_[slot(r0)];
  inc.end_unix_ns = hist_t_[slot(r1 - 1)];
  inc.start_s = double(inc.start_unix_ns - t0_ns_) * 1e-9;
  inc.end_s = double(inc.end_unix_ns - t0_ns_) * 1e-9;
  episode_means(r0, r1);
  inc.peak_score = evidence_->peak_score();
  // A second cause's incident: its inherited channels are judged from the levels the first one
  // held (rebased()), and it is about its second-cause symptom's subsystem (begin_successor()).
  std::span<const double> median = model_->robust_z().median();
  if (!inherited_.empty() && base_ref_.size() == median.size()) {
    ref_scratch_.assign(median.begin(), median.end());
    for (std::size_t j = 0; j < ref_scratch_.size(); ++j)
      if (inherited_[j] && std::isfinite(base_ref_[j])) ref_scratch_[j] = base_ref_[j];
    median = ref_scratch_;
  }
  const std::optional<Subsystem> named =
      inherited_.empty() || inc.symptom.name.empty() ? std::nullopt : std::optional<Subsystem>(inc.symptom.subsystem);
  explain::attribute(inc, evidence_->zbar(), mean_, {median, model_->floors()}, chans_, meta_.cores,
                     opts_.detect.top_channels, evidence_->detectors(), named);
  // A workload change is news, not a fault: it suggests no action.
  if (inc.kind == "workload_change") inc.action = pipeline::kWorkloadChangeAction;
}

}  // namespace reveal
