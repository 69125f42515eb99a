// Peers reference (docs/DESIGN.md §4): hosts of one job compared with each other; finds the odd host.
// `reveal detect --peers` is a thin shell around compare_peers().
//
// The rule:
//   0. Hosts. A host with fewer than one window of rates (window length + 1 samples) is left
//      out, with a note naming it, while at least two remain (a fleet's host that stopped
//      before the range, or joined at its end; from Prometheus, a listed host without a
//      sample in the range comes as a recording without samples).
//   1. Alignment. When the hosts' recordings overlap in time by at least one window plus rates
//      (window length + 1 samples of the coarsest interval), each is cut to the common span
//      [latest start, earliest end]: the hosts are compared at the same time ("same time").
//      Otherwise (stores recorded one after another) each is cut to the shortest run's
//      duration, counted from its own first sample ("offset").
//   2. References, in memory that does not grow with the span, and with the fleet only by one
//      slice a host (issue #19). With slices of L = max(kPeersSliceSamples, 4 × (window length
//      + 1)) samples, each host contributes its cut recording when it has at most
//      R = max(L, kPeersReferenceSamples / hosts compared) samples (the first read sizes R by the
//      hosts given; when some are left out, the sliced hosts are read once more with the larger
//      R); a longer host contributes S = R / L
//      slices of L consecutive samples spread evenly over its compared span (the j-th centred at
//      (j + φ)/S of it, φ = frac(½ + i × 0.618…) for host i, so that hosts of one slice each
//      cover different times; reveal/store_reader.h spread_slices): drawn in the first read over
//      its whole recording, and read once more when the span is only part of it. The hosts are
//      dealt into K = min(hosts, kPeersMaxFolds) folds (host i into fold i mod K), and each
//      fold's reference model (reveal/baseline_model.h) is trained on the other folds'
//      contributions, at most about kPeersReferenceSamples samples of them (taken evenly, in
//      host order, when there are more: fleets of more than kPeersReferenceSamples / L hosts).
//      With up to kPeersMaxFolds hosts each host is its own fold: its reference is every other
//      host, whole when they fit R.
//   3. Each host's cut recording goes through detect() (reveal/offline.h) against its fold's
//      model: what this host did that its peers did not. A host longer than kWholeRunMaxValues
//      samples × channels is scored against that model by the streaming driver
//      (reveal/streaming.h, StreamingOptions::baseline), so that it is not held whole.
//   4. Oddness score of a host = Σ over its incidents of (windows in the incident / windows of
//      the run) × min(peak fused score, 10): the share of the run it was odd for, weighted by
//      how far past the threshold it went. A host without incidents scores 0.
//   5. Hosts are ranked by score (ties: more anomalous windows, then input order). The top
//      host is *the odd host* when its score is > 0 and at least kOddMargin times the
//      runner-up's; when several hosts have incidents and none leads by that margin, no single
//      host stands out (all with incidents are listed as `flagged`); when none has incidents,
//      no host stands out.
//   The odd host's strongest channels are the channels of its incidents' top lists, each once
//   with its largest |z|, by descending |z|.
//
// Reading: compare_peers() reads each host twice through a PeerReader (for its sample times and
// reference, then to score it; three times when a long host is compared over part of its
// recording), so that only the references and the hosts being scored are in memory at once:
// about kPeersReferenceSamples × channels values, plus what the reader holds.
//
// Errors: PeersError (a DetectError) for fewer than two hosts with a window of samples, a common span or shortest run
// too short for one window, or a host detect() rejects (the message names the host).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reveal/offline.h"

namespace reveal {

inline constexpr double kOddMargin = 2.0;   // the odd host's score over the runner-up's
inline constexpr double kOddPeakCap = 10.0; // peak fused score counted at most this high
// Samples of all hosts together that the references hold (rule 2): about the agent's hour of
// history at 1 Hz; slices of a minute at 1 Hz; at most 8 reference models.
inline constexpr std::size_t kPeersReferenceSamples = 4000;
inline constexpr std::size_t kPeersSliceSamples = 60;
inline constexpr std::size_t kPeersMaxFolds = 8;

class PeersError : public DetectError {
 public:
  using DetectError::DetectError;
};

struct PeerHost {
  std::string name;             // as given (hostname, instance, or store path)
  double score = 0;             // oddness score (rule 3)
  std::size_t windows = 0;      // windows scored
  std::size_t anomalous_windows = 0;  // windows with fused ≥ 1
  std::size_t incident_windows = 0;   // windows inside incidents
  double peak = 0;              // max fused score over the run
  DetectResult result;          // detect() against the other hosts
};

struct PeersResult {
  std::string alignment;        // "same time" or "offset"
  std::int64_t start_unix_ns = 0, end_unix_ns = 0;  // the common span ("same time" only)
  double span_s = 0;            // length compared, seconds
  std::vector<PeerHost> hosts;  // ranked, oddest first
  std::optional<std::size_t> odd;            // index into hosts (0) of the odd host, if one
  std::vector<std::string> flagged;          // hosts with incidents, in rank order
  std::vector<ChannelEvidence> odd_channels; // the odd host's strongest channels (≤ top_channels)
  std::vector<std::string> notes;
};

// The hosts, read as often as compare_peers() needs them: `read(use)` calls use(i, host i's
// recording) once for every host i in [0, hosts), in any order, from one thread or several at
// once (`use` is safe to call concurrently); its exceptions pass through.
using PeerReader = std::function<void(const std::function<void(std::size_t, const Recording&)>& use)>;

// Called once per host right after it is scored (its name, score, windows, anomalous_windows,
// incident_windows, peak and result set), one call at a time (under the lock that hands the
// scored hosts over: hosts scored on other threads wait meanwhile), on the thread that scored it. It may
// hand the result to an output and release what no later step needs: the ranking, the odd host
// and its strongest channels read only those fields and result.incidents (e.g.
// drop_window_traces(), reveal/offline.h, so that a fleet's per-window traces are never all in
// memory; issue #19). Its exceptions pass through.
using PeerScored = std::function<void(PeerHost&)>;

// `names[i]` names host i (names.size() == hosts, or empty: meta.hostname). Throws PeersError
// (see above).
PeersResult compare_peers(std::size_t hosts, const std::vector<std::string>& names, const PeerReader& read,
                          const DetectOptions& opts, const PeerScored& scored = {});
// The same over recordings in memory.
PeersResult compare_peers(const std::vector<Recording>& hosts, const std::vector<std::string>& names,
                          const DetectOptions& opts);

// Rows [first, first + count) of a recording (samples, times, events and configuration changes
// in that span; metadata start/end updated).
Recording slice_recording(const Recording& r, std::size_t first, std::size_t count);

}  // namespace reveal
