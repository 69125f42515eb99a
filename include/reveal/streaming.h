// Streaming detection: the offline pipeline (reveal/offline.h) fed one raw sample at a time,
// for `reveal agent`.
//
// Per sample: rates and derived channels of the new sample (rates_row and DerivedRow: the
// formulas of to_rates and add_derived, one row at a time; the first sample's row has its
// gauges and NaN counter rates, as to_rates()'s row 0), appended to a history ring of
// `history_samples` derived rows; every `stride` samples the window of the last `length` rows
// is scored by the current reference model (WindowModel, the same code as detect()) and fed to
// the incident rule (IncidentTracker, as find_incidents()).
// Reference model: fitted in self mode (fit_self: iteratively reweighted, as `reveal detect`)
// on the history of the current regime once `warmup_samples` derived rows exist, then refitted
// every `refit_samples` (sooner while the regime is young: whenever its rows have doubled since
// the last fit); never while an incident or a workload change is open (the fault would join the
// reference). Or a fixed baseline model (StreamingOptions::baseline), as `reveal detect
// --baseline MODEL`.
// Workload changes (StreamingOptions::workload_changes; issue #17): the self fit
// leaves out the kernel's smoothed averages (PSI avg10/60/300, load1/5/15: lagging copies of
// channels it scores; pipeline::smoothed_average), and a run of
// anomalous windows in which no symptom channel rose (src/pipeline/workload_change.h) is a
// workload change, not an incident: an Incident of kind "workload_change" (workload_changes(),
// active_change()). If a remembered regime's model finds the window normal, the detector
// returns to that regime at once — also when the window had a symptom, if the regime was learned
// without one (Regime::clean) and no symptom channel rose above it: a host going back to a state
// it held before, fault-free (a job that ran beside another one leaving, the load after a fault
// was lifted), is known, though its stall levels differ from the regime being left. Otherwise, once the last `relearn_samples` rows of the new
// behaviour past the transition look settled (not drifting), a model of the new regime is
// fitted on them and the change ends; the old model joins the memory of past regimes
// (`regimes_kept`, least recently used dropped). A change turns into an incident when symptoms
// rise during it (the incident starts at the symptomatic windows) or when it keeps drifting for
// 3 × relearn_samples rows (a leak: the incident is the whole episode). An incident whose symptoms are gone for
// pipeline::kSymptomGoneWindows windows (10 s) ends there (dated at its last symptomatic window);
// the load that still differs is a workload change from the row after it, re-learned once it
// settles: a fault that ended during a job change, or left the page cache to refill, does not
// hold an incident open. One that never had a symptom (a drift) ends once `relearn_samples` rows
// past its transition settled, and those rows become the new regime. An incident older than 2 × relearn_samples
// whose last relearn_samples rows settled, symptoms and all, ends too and that state becomes
// the reference (another tenant's job contending for the CPU for good, a fault nobody fixed).
// Both judge settled by the channels the incident moved and, apart, by those it moves only in
// the current window (pipeline::fresh_movers): a leak that began late in another tenant's
// contention keeps the incident open rather than becoming the reference. A symptom rising in
// channels the incident's onset (its windows until it was reported) did not move, once it is
// reported, is a second cause: of another subsystem than the
// one the incident names, the incident ends there and a new one opens, described by what the
// second cause moved (the first one's channels left out; when its own symptoms end, the state
// it began in goes on as a workload change accepting the first one's stall levels); of the
// same subsystem, the incident's state counts as new from there, and must last anew before it
// becomes the reference.
// An incident the caller's tenant scans show to be a new workload starting is withdrawn into a
// workload change (withdraw_incident(), TenantFeed below; reveal/tenants.h).
// An incident's evidence (IncidentEvidence, src/explain/evidence.h) and attribution
// (src/explain/attribution.h) are the ones detect() uses; attribution is recomputed whenever
// the open incident grows. tests/pipeline/parity_test.cpp checks that both paths report the
// same incidents for the same recording and model, and lists where they differ by design.
//
// Cost: a sample that only scores a window allocates nothing; fits and attribution (when an
// incident opens or grows) allocate. Memory: history_samples × derived channels doubles.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/offline.h"
#include "reveal/features.h"
#include "reveal/recording.h"
#include "reveal/recording_feed.h"
#include "reveal/tenants.h"

namespace reveal {

namespace pipeline {
class WindowModel;
class SymptomGate;
class RecentPeaks;
}
namespace explain {
class IncidentEvidence;
}
class BaselineModel;
class Progress;

struct StreamingOptions {
  DetectOptions detect;                // window length/stride, cuts, incident rule, seed, top
  std::size_t warmup_samples = 120;    // derived rows before the first fit (>= 4 windows)
  std::size_t refit_samples = 300;     // rows between fits
  std::size_t history_samples = 3600;  // reference history (ring), rows
  std::size_t settle_samples = 0;      // first samples ignored (the agent's own start-up
                                       // transient: page faults, file reads of loading it)
  // A fixed reference instead of the self fit: every window, from the first, is scored against
  // this model (reveal/baseline_model.h) and it is never refitted (warmup, refit and history
  // lengths then only bound the history kept for attribution). Its options replace `detect`'s
  // as in detect(run, model, detect) (BaselineModel::scoring_options).
  // Every model channel must be among the derived channels of the pushed rows (DetectError; detect()
  // instead scores a channel the run lacks as missing). Its PCA model, when it has one, is
  // scored on every window (the self fit turns PcaUse::report off to save that cost), and the
  // history ring keeps its constructed length (set_history_samples() takes effect at a fit).
  std::shared_ptr<const BaselineModel> baseline;
  // Tell workload changes from incidents (see above); in self mode also re-learn. With a
  // baseline model nothing is re-learned: a change ends when its windows are normal again, and
  // stays a change once it settled, as in detect(). Off: every run of anomalous windows is an
  // incident and the self model is refitted on the whole history.
  bool workload_changes = true;
  std::size_t relearn_samples = 30;  // rows of a new regime, past its transition, to learn it
  std::size_t regimes_kept = 8;      // past regimes' models remembered
};

// What one push() produced.
struct StreamUpdate {
  bool scored = false;          // a window ended at this sample and was scored
  double fused = 0;             // its fused score (anomalous ≥ 1); NaN when not scored
  std::array<double, kNumSubsystems> subsystem{};  // per-subsystem scores (≥ 1 anomalous)
  std::string_view top_channel; // channel with the largest |z| in the window (valid for the
                                // detector's lifetime)
  double top_z = 0;
  std::string_view symptom_led; // the symptom channel that made the window anomalous on its own
                                // (DetectOptions::symptom_windows); empty when none did
  bool opened = false, closed = false;  // an incident opened / closed at this window
  bool change_opened = false, change_closed = false;  // a workload change opened / ended
  bool refitted = false;        // the model was (re)fitted at this sample
};

class StreamingDetector {
 public:
  // `meta` supplies cores (attribution) and nothing else; `channels` are the raw channels of
  // every pushed row. Throws DetectError for options out of range.
  StreamingDetector(const RunMetadata& meta, std::vector<ChannelInfo> channels, StreamingOptions opts);
  ~StreamingDetector();

  // Feeds one raw sample (counters as running totals, NaN = gap; row.size() = channels).
  // Timestamps must increase; a sample not newer than the previous one is ignored.
  const StreamUpdate& push(std::int64_t t_unix_ns, std::span<const double> row);

  // A restart (the agent continuing its store): rows a previous run stored, oldest first, fill
  // the history as push() would (rates, derived channels, the ring) without scoring a window or
  // opening anything; a row not newer than the last is ignored, as in push(). Rows must come
  // before the first push(). finish_priming() then fits the reference at once when the rows
  // hold `warmup_samples` (model_ready() true before the first live sample), and makes the next
  // push() start a new segment: no rate spans the time nobody sampled (its counters read NaN,
  // as a stream's first row) and its first `settle_samples` are ignored, as at any start.
  // Throws DetectError for a row of the wrong width. Cost: a push() per row, then one fit.
  void prime(std::int64_t t_unix_ns, std::span<const double> row);
  // Returns the rows primed (0 when none: then nothing changes).
  std::size_t finish_priming();
  // The next push() starts a new segment, as after a restart of the sampling process: its
  // counters have no previous value (NaN rates; to_rates() does the same after an
  // agent_restart event) and the first `settle_samples` are ignored. Model and history stay.
  void begin_segment();
  // The sampling process stops here: the agent's SIGTERM, or in a replay the point where the
  // store says the agent restarted (an agent_restart event). What is open ends now, the
  // agent's last word on it: an open incident closes at its last anomalous row, "(ended: the
  // agent stopped)" joining its action (one not reported yet is retired as at any close: a
  // transient when its span is under min_duration_s, "; the agent stopped" joining its text);
  // an open workload change ends "ended: the agent stopped". Returns what that produced
  // (StreamUpdate::opened, ::closed, ::change_closed, as push() does). Model and history stay.
  const StreamUpdate& end_segment();
  // Where a restarted agent starts from (a fresh process primed from its store: prime(), then
  // finish_priming()), for a replay at an agent_restart event: nothing open (what still is
  // ends as in end_segment()), no remembered regime, no recent symptom peaks, and in self mode
  // no model: the reference is fitted at once on the kept rows stamped at or after
  // `history_from_unix_ns` (the agent primes the stored samples from its history length before
  // the last one) when they hold warmup_samples rows; with none (INT64_MAX: the agent primes
  // nothing after a gap longer than its history) the detector warms up again on the rows pushed
  // from now on, the first of them start-up as a stream's first. The next push() starts a new
  // segment (begin_segment()). Rows primed or kept across a restart were never judged here: a
  // regime fitted on them is not Regime::clean.
  void restart(std::int64_t history_from_unix_ns);

  // Options that may change at run time (SIGHUP): incident rule, refit period, false-alarm
  // rate and history length (the last two take effect at the next fit; the ring is resized
  // then, keeping the newest rows).
  void set_incident_rule(IncidentRule rule);
  void set_refit_samples(std::size_t n) { opts_.refit_samples = n < 1 ? 1 : n; }
  // Expected false incidents per day (DetectOptions::false_per_day), from the next fit on (at
  // once for a baseline model).
  void set_false_per_day(double f);
  void set_history_samples(std::size_t n);

  bool model_ready() const { return model_ != nullptr; }
  // True when the next push() of a new sample may fit the model: always when it will (the first
  // fit, a refit), and also while a workload change or an incident is open long enough that
  // this push may re-learn a regime (whether it does depends on the window it scores). Those
  // are the pushes that cost milliseconds to seconds instead of microseconds (the agent runs
  // them at normal priority, Sampler::AtNormalPriority). A push whose time is not after the
  // last one's fits nothing even then.
  bool fit_due() const {
    return pushed_ >= opts_.settle_samples && (periodic_fit_due(rows_ + 1) || relearn_possible(rows_ + 1));
  }
  std::size_t reference_windows() const { return reference_windows_; }
  std::int64_t last_fit_unix_ns() const { return last_fit_ns_; }
  std::uint64_t windows_scored() const { return windows_scored_; }
  // Windows a symptom's step made anomalous although their fused score was below 1
  // (DetectOptions::symptom_windows; StreamUpdate::symptom_led).
  std::uint64_t symptom_led_windows() const { return symptom_led_windows_; }
  std::string not_ready_reason() const { return not_ready_; }
  // The open incident, once reported: its span reached IncidentRule::min_duration_s (see
  // opened_incident()); empty while it is shorter (it may still end as a transient).
  const std::optional<Incident>& active() const { return confirmed_ ? active_ : no_incident_; }
  // The open incident not reported yet: opened by the incident rule, its span still shorter
  // than min_duration_s (it becomes active() once it reaches it, or a transient if it ends
  // first). Null when none is open or the open one is reported.
  const Incident* pending() const { return active_ && !confirmed_ ? &*active_ : nullptr; }
  // The incident this push reported as opened (StreamUpdate::opened): the open one, or the one
  // it closed when its span reached min_duration_s only at its close (reported opened and
  // closed at once). Null when the push opened none.
  const Incident* opened_incident() const;
  // Incidents that ended shorter than min_duration_s (kind "transient", among the
  // workload_changes()), never reported as incidents.
  std::uint64_t transients_total() const { return transients_total_; }
  // Incidents closed since the start, oldest first (at most 100 kept).
  const std::vector<Incident>& closed() const { return closed_; }
  // Evidence the detector cannot compute from the samples — the agent's tenant findings
  // (Incident::victims and ::aggressors, reveal/tenants.h) — is attached by the caller after
  // push(): to the open incident, and to the one a push just closed (the newest of closed()).
  // The detector never rewrites those two fields. Null when there is none.
  Incident* active_for_evidence() { return active_ ? &*active_ : nullptr; }
  // The open incident is a new workload starting, by evidence the samples do not hold (the
  // caller's tenant scans: judge_workload_start(), reveal/tenants.h): it becomes a workload
  // change (Incident::withdrawn = `why`, withdrawn_unix_ns = the last sample's time) and is
  // judged as one from here on. The levels its symptom channels held since it opened (each
  // window's minimum, the highest of them) are the new workload's own — its threads waiting
  // for each other, its data loading — and count as symptoms again only when a window's level
  // rises a material step above them; the change ends as any other (a new regime learned once
  // settled, a known regime, symptoms rising further: an incident; drifting on: an incident).
  // False, changing nothing, when no incident is open or it is no longer the one that opened
  // at `start_unix_ns` (it closed meanwhile).
  bool withdraw_incident(std::int64_t start_unix_ns, const std::string& why);
  std::uint64_t incidents_withdrawn_total() const { return withdrawn_total_; }
  Incident* last_closed_for_evidence() { return closed_.empty() ? nullptr : &closed_.back(); }
  // The newest ended workload change (a transient among them), for the same evidence: a push
  // that ended one (StreamUpdate::change_closed) may have moved its end back to its last
  // symptom, and its tenants are judged again over that span. Null when there is none.
  Incident* last_change_for_evidence() { return changes_.empty() ? nullptr : &changes_.back(); }
  // The open workload change (kind "workload_change"; attributed like an incident: the
  // subsystem whose load moved), and the ended ones, oldest first (at most 100 kept). Their
  // `action` says how each ended: a new regime learned, a known regime, a short phase.
  const std::optional<Incident>& active_change() const { return change_; }
  // The open workload change, for the tenant evidence (victims, aggressors, impact) the caller
  // attaches after push() (TenantFeed); the detector never rewrites those fields. Null when none.
  Incident* active_change_for_evidence() { return change_ ? &*change_ : nullptr; }
  const std::vector<Incident>& workload_changes() const { return changes_; }
  std::uint64_t workload_changes_total() const { return changes_total_; }
  std::size_t regimes_remembered() const { return regimes_.size(); }
  // Whether workload changes are told from incidents: the option is on and some model so far had
  // a symptom channel (a stream without any cannot tell them apart; one whose symptom channel
  // was missing while a model was fitted still can).
  bool tells_workload_changes() const;
  std::size_t n_derived_channels() const { return layout_.size(); }

 private:
  // A fitted reference: its model, the layout columns it scores, their channels.
  struct Regime {
    std::unique_ptr<pipeline::WindowModel> model;
    std::vector<int> cols;
    std::vector<const ChannelInfo*> chans;
    std::uint64_t last_used = 0;  // windows_ when it was last current
    // Fitted on rows judged symptom-free: a settled change that was no withdrawn incident, the
    // host after a fault's symptoms ended (not a drift's plateau), no anomalous window with a
    // symptom among the new regime's rows, none of them primed or kept across a restart (never
    // judged); a periodic refit keeps its regime's. False for the state of an incident that
    // lasted, symptoms and all.
    bool clean = true;
  };
  enum class Episode { none, incident, change };

  // The periodic fit's condition once `rows` derived rows exist (push() and fit_due()).
  bool periodic_fit_due(std::uint64_t rows) const;
  // An open episode is old enough for after_window() to re-learn at `rows` rows.
  bool relearn_possible(std::uint64_t rows) const;
  void fit();
  // Rates, derived channels and the history ring for one raw row (push() and prime()).
  void append_row(std::int64_t t_unix_ns, std::span<const double> row);
  // Fits the current regime's model on rows [max(r0, oldest kept), rows_); keeps the old model
  // in the regime memory when `remember`.
  // `clean`: whether the caller knows those rows symptom-free (Regime::clean; the rows' own
  // record is checked too).
  bool fit_rows(std::uint64_t r0, bool remember, bool clean = true);
  void use_baseline();
  void map_ambient();                   // ambient_model_ and seen_ for the current model channels
  void score_window();
  void update_incident();
  void update_change();
  void describe(Incident& inc);
  void open_from_rings(std::size_t first, std::size_t last, bool as_change);
  // Keeps the open incident's evidence as it opened (onset_z_), what fresh_movers() compares to.
  void note_onset();
  // Widens onset_z_ by the current window's z (each channel's larger magnitude): a pending
  // symptomatic incident's windows are all its onset.
  void widen_onset();
  // fresh_accept_ for the open incident: a level never risen above (no symptom) for the channels
  // its onset moved, those it inherited and, when `other_subsystem`, those of the subsystem it
  // names; false when none is left.
  bool fresh_levels(bool other_subsystem);
  // `v` (contribution shares) with the inherited channels zeroed (in `out`), or `v` itself when
  // none are.
  std::span<const double> masked(std::span<const double> v, std::vector<double>& out) const;
  // `z` with the inherited channels' z taken from the first incident's mean z (base_z_), or `z`
  // itself when none are: the second cause's incident counts what it moved beyond that.
  std::span<const double> rebased(std::span<const double> z, std::vector<double>& out) const;
  // Ends the open incident where a second cause's symptoms began and opens one from them
  // (after_window()).
  void begin_successor();
  // accepted_: the highest window minimum each symptom channel (those flagged in `only`; all
  // when null) held over the kept rows from r0 on, NaN for the others.
  void accept_levels(std::uint64_t r0, const std::vector<char>* only);
  // Model channel j as an incident's symptom: its rise (channel unit) over the reference median,
  // and its robust z.
  ChannelEvidence symptom_evidence(std::size_t j, double rise, double z) const;
  // Names the open incident's symptom (Incident::symptom) from ring slot r, once.
  void note_symptom(std::size_t r);
  // Returns to a remembered regime under whose model the current window is normal; when the
  // opening window had a symptom (`symptomatic`), only to a clean regime under which no symptom
  // channel rose either (the level is one the host held in it without a fault).
  bool switch_to_known_regime(bool symptomatic);
  void end_change(const char* how, std::uint64_t end_row);
  void after_window(bool symptomatic);
  // Ends the open incident: `how` joins its action; dated at its last symptom when
  // `at_last_symptom` and it had one.
  void close_incident(const char* how, bool at_last_symptom);
  // The open incident's end, once decided: a closed incident (reported as opened now if it had
  // not been and its span reached min_duration_s) or a transient among the workload changes.
  void retire_incident(Incident inc);
  // Reports the open incident (StreamUpdate::opened) once its span reaches min_duration_s:
  // its last symptomatic row (its current end when it has none, or when workload changes are
  // not told apart) that far past its start.
  void confirm_if_due();
  // After an incident closed: when the current window is still anomalous, the episode goes on
  // as a workload change dated from `from_row` (true); else nothing (false).
  bool change_follows(std::uint64_t from_row);
  void install(Regime r);
  // Clears what a push() (or end_segment()) reports before it reports anything (update_).
  void clear_update();
  // Empties the ambient and symptom-step peaks (RecentPeaks) for this stream's window stride.
  void reset_peaks();
  std::size_t slot(std::uint64_t row) const { return std::size_t(row % capacity_); }

  RunMetadata meta_;
  std::vector<ChannelInfo> raw_channels_;
  StreamingOptions opts_;
  IncidentTracker tracker_;
  // Rates/derived of the newest sample.
  std::vector<double> prev_, rates_;
  std::int64_t prev_t_ns_ = 0;
  bool have_prev_ = false;
  std::unique_ptr<DerivedRow> derived_;
  std::vector<ChannelInfo> layout_;  // derived channel layout (derived_->channels())
  // History ring of derived rows: global row g lives at slot(g).
  std::size_t capacity_ = 0, pending_capacity_ = 0;
  Matrix hist_;
  std::vector<std::int64_t> hist_t_;
  std::uint64_t rows_ = 0;          // derived rows so far
  std::uint64_t pushed_ = 0;        // samples pushed (settle_samples of them ignored)
  std::size_t primed_ = 0;          // rows prime()d since the last finish_priming()
  std::int64_t t0_ns_ = 0;          // first sample
  std::int64_t last_t_ns_ = 0;
  // Window scoring.
  Series recent_;                   // the last max(length, trail) rows (WindowOptions)
  Windows win_;                     // one window over recent_
  std::unique_ptr<pipeline::WindowModel> model_;
  std::vector<int> cols_;           // layout columns the model scores
  std::vector<const ChannelInfo*> chans_;
  std::vector<double> z_;
  std::vector<double> rise_z_;  // the current window's rise per model channel (WindowModel::rise_z)
  std::vector<double> low_;  // the current window's minimum per model channel (the symptom gate)
  // The open incident's onset per model channel: its mean z when it opened (note_onset()),
  // widened by each window's z while it is pending (widen_onset()) and by a fresh symptom's
  // window (after_window()); |z| ≥ pipeline::kMovedZ: a channel its state moved.
  std::vector<double> onset_z_;
  // A second cause (issue #17): inside a reported incident, a symptom of another subsystem than
  // the one it names rises in a channel its onset did not move (another tenant's contention,
  // then a leak). Once it held min_windows windows spanning min_duration_s, the incident ends
  // where it began and a new one, reported at once, opens there (not with a baseline model, nor
  // in a drift; a second cause's incident is never withdrawn as a new workload); the channels the old one's onset moved (inherited_) count in the new one's
  // evidence only by what they moved beyond the old one's levels, so it names what the second
  // cause moved.
  std::ptrdiff_t second_ = -1;       // this window's second-cause symptom (model channel), -1: none
  std::size_t second_run_ = 0;       // consecutive windows with one
  std::uint64_t second_from_row_ = 0;  // the first row of the run's first window
  std::optional<Incident> before_second_;  // the open incident before the run's first window
  // Else a fresh symptom of the subsystem it names (-1: none), and its run: after min_windows
  // the state counts as new from there (state_row0_, what the lasting rule measures from).
  std::ptrdiff_t fresh_ = -1;
  std::size_t fresh_run_ = 0;
  std::uint64_t state_row0_ = 0;
  std::vector<double> fresh_accept_; // SymptomGate `accepted` levels that leave only those
  std::vector<char> inherited_;      // per model channel: out of the open incident's evidence
  std::vector<double> inherit_accept_;  // SymptomGate `accepted`: no level counts, for inherited_
  std::vector<double> base_z_, base_ref_;  // per model channel: its mean z and mean value (inherited_)
  std::vector<double> ref_scratch_;        // the reference medians with base_ref_ in (describe())
  std::vector<double> zm_, ifm_, spem_;  // masked copies of a window's z and shares
  std::vector<double> fresh_z_;  // the channels it moves only now (pipeline::fresh_movers)
  Matrix zring_;                    // z rows of the last min_windows + 1 windows
  Matrix ifring_, spering_;         // their forest / PCA contribution shares (0 when normal)
  Matrix levring_;                  // their robust_z, iforest, pca_spe levels (NaN: not computed)
  std::vector<double> fused_ring_;
  std::vector<double> ifw_, spew_;  // contribution shares of the current window
  std::uint64_t windows_ = 0;       // windows scored (global window index of the next one)
  std::uint64_t rows_at_fit_ = 0;
  std::size_t reference_windows_ = 0;
  std::int64_t last_fit_ns_ = 0;
  std::uint64_t windows_scored_ = 0;
  std::uint64_t symptom_led_windows_ = 0;
  std::string not_ready_ = "warming up";
  // Incident state.
  std::optional<Incident> active_;
  bool confirmed_ = false;               // active_ was reported (StreamUpdate::opened)
  std::optional<Incident> no_incident_;  // active() while active_ is not confirmed
  std::uint64_t transients_total_ = 0;
  std::unique_ptr<explain::IncidentEvidence> evidence_;  // the open incident's
  std::vector<double> mean_;        // its channels' mean values (attribution)
  // Running sums of mean_ over history rows [means_from_, means_to_) (episode_means()).
  static constexpr std::uint64_t kNoMeans = ~std::uint64_t{0};
  std::uint64_t means_from_ = kNoMeans, means_to_ = 0, means_evicted_ = 0;
  std::vector<double> msum_;
  std::vector<std::size_t> mcount_;
  void episode_means(std::uint64_t r0, std::uint64_t r1);
  std::vector<ChannelInfo> baseline_channels_;  // the baseline model's channels (chans_ point here)
  std::vector<Incident> closed_;
  // Workload changes and regimes (self mode).
  Episode episode_ = Episode::none;
  std::optional<Incident> change_;
  std::vector<Incident> changes_;
  std::uint64_t changes_total_ = 0;
  std::uint64_t regime_row0_ = 0;       // first row of the current regime
  std::uint64_t regime_rows_at_fit_ = 0;
  std::uint64_t episode_row0_ = 0;      // first row of the open episode's first window
  std::uint64_t last_symptom_row_ = 0;  // last row of a symptomatic window of the open incident
  bool had_symptom_ = false;
  bool change_settled_ = false;
  bool symptoms_seen_ = false;  // some model so far had a symptom channel (tells_workload_changes)  // with a baseline model: the open change settled (it stays a change)
  static constexpr std::uint64_t kNoRow = ~std::uint64_t(0);
  // The open episode's first row when it starts before its first window (a workload change that
  // follows an incident whose symptoms ended, dated from the row after them), else kNoRow.
  std::uint64_t episode_from_row_ = kNoRow;
  std::size_t symptom_run_ = 0;         // consecutive symptomatic anomalous windows
  std::vector<int> sym_ring_;           // per ring slot: 1 + the model channel of the window's
                                        // strongest symptom rise, 0 when not symptomatic
  std::vector<double> sym_rise_;        // per ring slot: that rise (channel unit), and its z
  std::vector<double> sym_z_;
  std::unique_ptr<pipeline::SymptomGate> gate_;
  // Ambient symptoms (hypervisor steal, pipeline::ambient_symptom()): their layout columns, the
  // current window's level of each, the peaks they reached over the last hour of windows, and
  // per model channel that peak (NaN: not ambient) with the (model channel, peak slot) pairs.
  std::vector<int> ambient_cols_;
  std::vector<double> ambient_level_;
  std::unique_ptr<pipeline::RecentPeaks> peaks_;
  std::vector<double> seen_;
  std::vector<std::pair<std::size_t, std::size_t>> ambient_model_;
  // Symptom-led windows (SymptomGate::stepped): the layout columns of every symptom channel,
  // the current window's level of each, their peaks over the minute before the last 30 s, per
  // model channel that peak (NaN: none), and the (model channel, column index) pairs.
  std::vector<int> step_cols_;
  std::vector<double> step_level_;
  std::unique_ptr<pipeline::RecentPeaks> step_peaks_;
  std::vector<double> recent_peak_;
  std::vector<std::pair<std::size_t, std::size_t>> step_model_;
  // A withdrawn incident's change (withdraw_incident), or the change that goes on when a second
  // cause's incident ended (after_window): per model channel, the level a symptom channel held
  // during it (NaN elsewhere; empty when no such change is open).
  std::vector<double> accepted_;
  std::uint64_t withdrawn_total_ = 0;
  std::vector<Regime> regimes_;         // remembered past regimes (not the current one)
  bool model_clean_ = true;             // the current model's Regime::clean
  std::uint64_t symptom_row_ = ~std::uint64_t(0);  // last row of the latest anomalous window with a
                                                   // symptom (none: all ones)
  std::uint64_t judged_from_ = 0;       // rows before it were primed or kept across a restart
  std::uint64_t start_row_ = 0;         // the stream's first row, or the first after a restart
                                        // without history: gauges only, no rates (start-up)
  std::vector<double> regime_z_, regime_rise_z_, regime_low_;
  StreamUpdate update_;
};

// The tenant scans' part of live detection, shared by the agent and `reveal detect
// --streaming` (so the replay reports what the agent did). After each push, with the scans
// taken so far (the agent's recent ones, Recorder::recent_tenants(); a replay's whole
// timeline, of which only scans stamped at or before `now` count):
//   - names the open incident's tenants (Incident::victims, ::aggressors; judge_tenants()),
//     and the one the push just closed: judged again whenever the end of its after span,
//     min(end, onset + kTenantAfterS), moves (the open incident grows; a closing incident's
//     end goes back to its last anomalous window) and kept once the scans cover that span.
//     The finding depends on the incident's start and end alone — not on when the close was
//     decided — so the agent's and the replay's agree, and equal `reveal detect`'s
//     attach_tenants() for the same start and end; so does their cost (Incident::impact,
//     incident_impact() of that finding), with job_seconds_lost over the incident's duration at
//     each push;
//   - names the open workload change's tenants the same way, and the one the push just ended
//     (so a long change keeps what the scans of its start said: the agent keeps recent scans
//     only);
//   - withdraws the open incident as a workload change (StreamingDetector::withdraw_incident)
//     when judge_workload_start() calls its onset a new workload starting (decided once per
//     incident, 5–10 s after its onset).
// Returns true when this call withdrew the open incident (its change is the detector's
// active_change()). Allocates only while an incident or change is young.
class TenantFeed {
 public:
  bool after_push(StreamingDetector& detector, const StreamUpdate& u, const TenantTimeline& tenants, std::int64_t now);

 private:
  // One episode followed: its finding, judged again while its after span moves or is not all
  // scanned, then kept.
  struct Follow {
    void apply(Incident& inc, const TenantTimeline& tenants, std::int64_t latest_scan);
    std::int64_t onset = 0;       // start_unix_ns of the episode `finding` is for
    std::int64_t judged_end = 0;  // the end of the after span `finding` was judged over
    bool frozen = false;          // the scans covered that span: judged again only if it moves
    bool start_decided = false;   // (incidents) judge_workload_start() has decided
    TenantFinding finding;
    IncidentImpact impact;             // incident_impact(finding, ...) as last computed
    bool impact_valid = false;         // impact is finding's
    bool impact_cpu_measures = true;   // for an episode named other than gpu or power_thermal
  };
  Follow incident_;  // the open incident (and its change once withdrawn)
  Follow change_;    // the open workload change that opened as one
};

// `reveal detect --streaming`: pushes every sample of `run` through a StreamingDetector (and
// the agent's AbsenceTracker) with `opts`, as fast as they go, exactly as the agent would have
// scored them live: the reference moves with the recording (fitted after the warm-up on the
// history, refitted, re-learned at workload changes). Returns what detect() returns, with
// mode "streaming" ("baseline" with opts.baseline): per scored window its fused score and top
// channel (no per-detector traces, no window_z, no channel reference); the incidents (anomaly
// and absence, by start; one still open at the end is reported up to the last sample, with a
// note); the workload changes (DetectResult::workload_changes). Seconds count from the first
// sample. Memory: the detector's history ring and the results, not a copy of the run.
// Throws DetectError for fewer than 2 samples or options out of range.
DetectResult detect_streaming(const Recording& run, const StreamingOptions& opts, Progress* progress = nullptr);
// The same from a recording read in pieces (reveal/recording_feed.h; the overload above is this
// one over a MemoryFeed): memory is the detector's, the feed's current block, the tenant scans
// near the sample pushed (from 300 s before the history ring's span, or before the open
// incident's or workload change's onset, and the 2 scans before that, to 120 s after the
// sample: every scan naming tenants looks at, reveal/tenants.h — an episode starts at a row
// still in the ring) and the results (per scored window: 4 numbers and 2 channel names, some
// 150 bytes: 90 MB a week at 1 Hz). Each episode's tenants are named as it is taken (closed,
// or open at the end), over those scans, where the overload above named them over the whole
// run: the same scans, so the same names. A feed's StoreError passes through; DetectError for
// fewer than 2 samples, found at the end.
DetectResult detect_streaming(RecordingFeed& feed, const StreamingOptions& opts, Progress* progress = nullptr);

}  // namespace reveal
