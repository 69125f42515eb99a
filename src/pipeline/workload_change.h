// Telling a workload change from a fault (issue #17), for the streaming detector and, through
// episodes() below, for detect().
//
// A job starting, stopping or changing phase moves load channels (utilisation, throughput,
// memory levels) and then settles into a new steady regime; a fault shows symptoms — a shortage
// or a failure (channel_role() in reveal/channel.h: pressure stalls, steal, reclaim, retransmits,
// drops, errors, throttling, I/O queue time) — or keeps drifting (a leak). Two tests decide:
//   SymptomGate::symptomatic: some symptom channel rose materially in a window — its sustained
//     robust z ≥ kSymptomZ and its rise (the window's minimum over the reference median) at
//     least the unit's material step
//     (10 points for shares in %, 100 ms/s of stall or wait time, 0.1 s/s in us/s, 5 ms more
//     per I/O request, 200 processes created per second, 20 %/min of the available memory used
//     up — empty within 5 minutes at that pace): a 0.5 %
//     PSI blip on a quiet reference is not a symptom, a job stalled 10 % of the time is.
//     Saturation channels (ChannelRole::saturation) count when the tasks waiting for a CPU grew
//     by at least one per CPU: run-queue wait per CPU up ≥ 1 s/s, or runnable tasks beyond the
//     CPUs, max(0, procs_running − 1 − CPUs) (the reader itself is one runnable task), up by at
//     least the number of CPUs between the reference median and the window. A new job on an
//     idle host (1 → 3 runnable tasks on 2 CPUs) is not; a CPU hog on a host another job
//     already saturates (5 → 10) is, where PSI cpu "some", already near 100 %, cannot rise.
//     Memory in use (derived:mem_used_pct) counts by its part beyond kMemoryFullPct, up by
//     kMemoryBeyondStep points: the host close to out of memory, which a job filling its own
//     share of memory is not.
//   settled: the rows since a change look like one steady regime. Among the kDriftChannels
//     channels that moved most (largest |mean z| of the episode, at least 3), a channel drifts
//     when the medians of the first and second half of the rows lie more than kDriftMax robust
//     scales apart (a uniform ramp gives 1.35, a noisy plateau of 30 rows exceeds 1 about 3 % of
//     the time); the rows are not settled when the drifting channels carry at least
//     kDriftingShare of the moved channels' |mean z|.
// Heuristics measured on the compressed host day (bench/hostday), not fitted to its labels.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "reveal/channel.h"
#include "reveal/incident.h"

namespace reveal::pipeline {

inline constexpr double kSymptomZ = 6.0;
// Memory in use beyond which the host is close to out of memory: MemAvailable under 10 % of
// MemTotal, the threshold of the common "host out of memory" alert (node_exporter users'
// HostOutOfMemory rule). A window must lie kMemoryBeyondStep points further beyond it than the
// reference, so a host that lives at 91 % does not alert on every wobble.
inline constexpr double kMemoryFullPct = 90.0;
inline constexpr double kMemoryBeyondStep = 2.0;
inline constexpr double kDriftMax = 1.0;
inline constexpr double kMovedZ = 3.0;  // |mean z| of a channel the episode moved (settled())
inline constexpr std::size_t kDriftChannels = 5;  // channels the settled test looks at
inline constexpr double kDriftingShare = 0.5;
// A workload change still drifting after this many relearn periods (StreamingOptions::
// relearn_samples, 30 rows) is an incident (a leak); before that, each window re-tests whether
// the last relearn period settled. 3 (90 s at the defaults), up from 1: chosen while looking at
// the recorded host days, where job starts and stops whose load ramped for over 30 s became
// incidents.
inline constexpr std::uint64_t kDriftRelearns = 3;

// An incident whose symptoms have been gone for kSymptomGoneWindows windows ends at its last
// symptomatic window, whether or not the load settled: the fault is over, while what it left
// behind (a page cache refilling after a drop, jobs catching up after a stall, a job that
// started meanwhile) may take minutes to settle. What still differs is a workload change from
// the row after the last symptom: it is re-learned once it settles, and symptoms that rise again
// open a new incident. Before, such an incident waited for relearn_samples rows without a
// symptom *and* settled rows, and outlasted day 38's cachedrop fault by 42 s (issue #17: no
// incident may outlast its fault by more than 30 s). 10 windows (10 s at the default stride):
// three times the incident rule's end_after, so a stall that pauses for a few seconds stays one
// incident. Chosen from day 38's analysis before the fresh day 39 was looked at.
inline constexpr std::uint64_t kSymptomGoneWindows = 10;

// Symptoms whose cause lies outside the host's own workloads: hypervisor steal
// (derived:cpu_steal_pct and its per-CPU channels: time the hypervisor ran another guest while
// this one's vCPU was runnable). No job or fault inside the guest raises it; on a shared cloud
// host it comes and goes with the neighbours, in bursts of seconds to minutes (10–80 % all day
// on the VM of docs/BENCHMARKS.md). A level of it the host already held for a relearn period
// (StreamingOptions::relearn_samples, 30 s) within the last kAmbientMemoryS is a known
// condition of the host, reported once, not a new fault each time it returns: SymptomGate
// judges such a channel's rise from that recent peak (RecentPeaks) when it lies above the
// reference. A first burst (for its first 30 s), or one that climbs a material step above
// every burst of the last hour, is still a symptom.
bool ambient_symptom(const std::string& name);
// Per channel, ambient_symptom() of its name.
std::vector<char> ambient_mask(const std::vector<const ChannelInfo*>& chans);
// How long a reached level of an ambient symptom stays known: an hour, the span an operator
// reads a recurring condition over (Alertmanager repeats a firing alert every 4 h by default).
inline constexpr double kAmbientMemoryS = 3600.0;
// Symptom-led windows (SymptomGate::stepped) measure a step from the highest level a symptom
// held over kStepSpanS seconds ending kStepLagS before the window: a step is led for at most
// kStepLagS (the relearn period, StreamingOptions::relearn_samples at 1 Hz) after it happened;
// a state that holds longer is the fused detectors' and the workload-change rules' to judge.
inline constexpr double kStepLagS = 30.0;
inline constexpr double kStepSpanS = 60.0;
// RecentPeaks spans for those, in windows of `stride_s` seconds: {span, lag}.
std::pair<std::size_t, std::size_t> step_peaks_span(double stride_s);

// The highest level each of n channels held over `span` windows, ending `lag` windows before
// the newest (the episode a level belongs to is no history for itself while it is being judged),
// kept as maxima of kBuckets equal buckets, so the span is exact to one bucket. Feed it one
// value per channel per window, in time order, after the window was judged. NaN values are
// ignored.
class RecentPeaks {
 public:
  static constexpr std::size_t kBuckets = 60;
  // Forgets everything; n channels, span ≥ 1 windows, lag ≥ 0 windows. Allocates.
  void reset(std::size_t n, std::size_t span, std::size_t lag = 0);
  // One window's levels (size n). Allocates nothing.
  void push(std::span<const double> level);
  // Channel i's highest level over the span; NaN when none was pushed. Allocates nothing.
  double peak(std::size_t i) const;
  std::size_t channels() const { return n_; }

 private:
  void enter(const double* level);  // a level leaving the delay line joins the buckets

  std::size_t n_ = 0, per_bucket_ = 1, in_bucket_ = 0, head_ = 0;
  std::vector<double> max_;  // kBuckets × n_, -inf: empty
  std::size_t lag_ = 0, pushed_ = 0;
  std::vector<double> delay_;  // lag_ × n_ ring of the newest levels, not yet in the buckets
};

class SymptomGate {
 public:
  // Per model channel: its role and the smallest rise that counts; `cores`: the host's CPUs
  // (RunMetadata::cores; ≤ 0 leaves runnable tasks out). Allocates.
  void reset(const std::vector<const ChannelInfo*>& chans, int cores);
  // True when some symptom channel j rose: z[j] ≥ kSymptomZ and its rise, low[j] − median[j],
  // is at least its material step. `z`: the window's sustained robust z per model channel
  // (WindowModel::score; clipped at ±200, so it cannot measure the rise); `median`: the
  // reference median (RobustZ::median()); `low`: the window's minimum (the value every sample
  // of the window exceeds, which the sustained z is of); `seen`: per model channel, the
  // highest level an ambient symptom (ambient_symptom()) held recently (RecentPeaks; NaN or
  // empty: none), from which its rise is then measured when above the median; `accepted`: per
  // model channel, a level the host's current workload is known to hold (a withdrawn
  // incident's, StreamingDetector::withdraw_incident; NaN or empty: none) — a symptom channel
  // with one qualifies only when the window also rose its material step above it. Allocates nothing.
  bool symptomatic(std::span<const double> z, std::span<const double> median, std::span<const double> low,
                   std::span<const double> seen = {}, std::span<const double> accepted = {}) const {
    return strongest(z, median, low, seen, accepted) >= 0;
  }
  // The model channel j whose qualifying rise is largest relative to its material step (z when
  // any rise counts), or -1 when none qualifies. Allocates nothing.
  std::ptrdiff_t strongest(std::span<const double> z, std::span<const double> median, std::span<const double> low,
                           std::span<const double> seen = {}, std::span<const double> accepted = {}) const;
  // Symptom-led windows (DetectOptions::symptom_windows): the strongest non-ambient symptom that
  // qualifies as in strongest() and whose rise beyond `recent[j]` — the highest level channel j
  // held over the kStepSpanS seconds that ended kStepLagS before the window (RecentPeaks; NaN:
  // no history yet, then the reference alone judges) — is also at least its material step:
  // a step up from the recent past, not a level the host held all along (a whole day's
  // reference whose median lies in its quiet hours). -1 when none. Allocates nothing.
  std::ptrdiff_t stepped(std::span<const double> z, std::span<const double> median, std::span<const double> low,
                         std::span<const double> recent) const;
  // The model channels that are symptoms (ascending).
  const std::vector<std::size_t>& channels() const { return idx_; }
  // That channel's rise (low − median; for runnable tasks, the tasks waiting beyond the CPUs
  // added; for memory in use, the points beyond kMemoryFullPct added), in its unit.
  double rise(std::size_t j, std::span<const double> median, std::span<const double> low) const;
  std::size_t symptom_channels() const { return idx_.size(); }

 private:
  double rise_of(std::size_t k, std::span<const double> median, std::span<const double> low) const;  // idx_[k]'s
  // strongest() (`peak`: the ambient symptoms' recent peaks) or, with `step`, stepped() (`peak`:
  // every symptom's peak over the minute before the last 30 s).
  std::ptrdiff_t pick(std::span<const double> z, std::span<const double> median, std::span<const double> low,
                      std::span<const double> peak, bool step, std::span<const double> accepted = {}) const;

  std::vector<std::size_t> idx_;   // model channels that are symptoms
  std::vector<double> material_;   // their material rise, in the channel's unit
  std::vector<double> beyond_;     // saturation channels: the level their rise is counted beyond
                                   // (runnable tasks: 1 + CPUs; memory in use: kMemoryFullPct);
                                   // NaN for the others
  std::vector<char> ambient_;      // ambient_symptom(): judged from its recent peak too
  double cores_ = 0;
};

// Channels the kernel smooths out of another recorded channel: the PSI averages
// (proc.pressure:*_avg10/60/300, and a cgroup's: cgroup:cpu_pressure_some_avg10.<cgroup>) of the stall totals whose rates are
// derived:psi_*, and the load averages (proc.loadavg:load1/5/15) of the run queue
// (procs_running). Exponential filters with 10 s to 15 min time constants, they move for
// minutes after every job start or stop: kept out of the streaming self fit, so a settled new
// regime does not look like drift and a change does not outlast itself.
bool smoothed_average(const std::string& name);

// The settled test over rows [r0, r1) of a row source: `row(r)` gives row r (layout columns),
// `cols[j]` model channel j's column, `floor[j]` its robust-scale floor, `zbar[j]` its mean z
// over the episode (which channels moved). Fewer than 8 rows: not settled. Allocates.
bool settled(std::uint64_t r0, std::uint64_t r1, const std::function<std::span<const double>(std::uint64_t)>& row,
             const std::vector<int>& cols, std::span<const double> floor, std::span<const double> zbar);

// The channels a lasting incident moves only now (the second `zbar` of settled() when an open
// incident would end into a new reference: its symptoms quiet while the load stays different,
// or a state that lasted): per channel, its z in the current window `znow` where its mean z
// over the incident's opening windows `onset` is under kMovedZ (the onset did not move it),
// else 0 (NaN counts as 0). A second fault that began late in a lasting incident — a leak while
// another tenant's job contends for the CPU — moves channels the onset did not, with less
// weight than the onset's; the incident's state is settled only when those are settled too,
// judged among themselves, so the state the leak is still changing does not become the
// reference. Workload changes keep the episode's mean alone (a job's slow ramps would otherwise
// hold changes open into drifts). `out` is resized to znow.size(); `onset` may be shorter
// (missing entries count as unmoved).
void fresh_movers(std::span<const double> onset, std::span<const double> znow, std::vector<double>& out);

// One part of an episode of anomalous windows, as the streaming detector with a fixed
// reference (a baseline model) tells it apart: windows [first, last], an incident or a workload
// change. It ends at row `end_row` (-1: at its last window's last row): a change that symptoms
// cut short, where they rose; an incident whose symptoms were gone for `relearn` rows while the
// load stayed different and settled (`ended_quiet`), at its last symptomatic row. The load that
// stays is a workload change from the decision's window on, dated from `start_row` (the row
// after that last symptom; -1: its first window's first row).
struct EpisodePart {
  bool incident = false;
  std::size_t first = 0, last = 0;
  std::int64_t end_row = -1;
  bool ended_quiet = false;
  std::int64_t start_row = -1;
  // An incident's own symptoms are its symptomatic windows from this one on: `first`, or for a
  // change that kept drifting (an incident as a whole) the window after the one that decided
  // it, as the streaming detector counts them (its symptoms while a change are not its own).
  std::size_t symptoms_from = 0;
};

// A workload change's action: news, not a fault (detect() and the streaming detector).
inline constexpr const char* kWorkloadChangeAction = "a workload change: the host runs something else";
// A transient's action (IncidentRule::min_duration_s): too short to act on.
inline constexpr const char* kTransientAction =
    "a transient: over before it lasted long enough to be an incident; none unless it recurs";
// Makes `inc` a transient (kind "transient", its `withdrawn` text and time, kTransientAction),
// decided at `decided_unix_ns`, its span measured with the sample interval `interval_s`
// (is_transient()): the streaming detector, its replay and detect() alike.
void make_transient(Incident& inc, const IncidentRule& rule, std::int64_t decided_unix_ns, double interval_s);
// What an incident that ended that way says after its action, with a fixed reference.
inline constexpr const char* kEndedQuietFixed =
    "(ended: its symptoms are gone; the load that stays is a workload change)";

// The streaming detector's episode rules over a whole run of windows, for detect(): the
// IncidentTracker of `rule` opens and closes episodes; with `changes` off each is an incident.
// Otherwise an episode whose opening windows have a symptom (`symptomatic[k]`, for anomalous
// windows) is an incident; else it is a workload change that becomes an incident from its
// symptomatic windows when K − 1 of them follow in a row (K = min_windows + 1), or as a whole
// when it has not settled `drift_relearns` × `relearn` rows after its transition (the first L
// rows): `settled(r0, r1, zbar)` tests rows [r0, r1) with zbar = the mean robust z of the
// episode's anomalous windows so far (`z(k)`: window k's robust z). Windows start every
// `stride` rows and span L. A change that settled stays a change until it ends. An incident
// that had a symptom ends kSymptomGoneWindows windows after its last symptomatic one (dated
// there; `ended_quiet`); one that never had one ends once `relearn` rows past its transition
// settled. Anomalous windows that go on past that end are a workload change from the row after
// the last symptom (`start_row`). Allocates.
std::vector<EpisodePart> episodes(std::span<const bool> anomalous, std::span<const bool> sustained,
                                  std::span<const bool> symptomatic, IncidentRule rule, bool changes,
                                  std::size_t L, std::size_t stride, std::uint64_t relearn,
                                  std::uint64_t drift_relearns,
                                  const std::function<std::span<const double>(std::size_t)>& z,
                                  const std::function<bool(std::uint64_t, std::uint64_t, std::span<const double>)>& settled);

}  // namespace reveal::pipeline
