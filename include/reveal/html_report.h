// The HTML report (`reveal report`, `reveal detect --html`): one self-contained HTML5 file, with
// styles, a small script (table sorting and filtering) and every chart inline as SVG. It
// makes no network request and needs no script to show its charts.
//
// Why inline SVG generated here rather than a charting library: the charts are few and fixed
// (lines, shaded spans, bands, a heatmap), so a library would add a vendored dependency, a
// build step and a few hundred kB to every report for no chart we need; SVG is also readable
// by the unit tests, and a long run costs at most two points per pixel column.
//
// Contents, per host:
//   * a run summary: host, CPU, kernel, workload command and exit status, time range,
//     duration, probes (available or not, with the reason), reference mode and calibration,
//     notes, the configuration snapshot and its changes, recorded events;
//   * `svg.chart#timeline`: the fused anomaly score per window (window end time, seconds since
//     the run's start), the threshold (1) dashed, incidents shaded;
//   * one `section.incident` card per incident (data-subsystem="cpu"...): subsystem,
//     confidence, peak level, focus, detectors, action and small multiples of its top
//     channels: the channel's samples around the incident, its reference band (reference
//     median ± 3 robust SD of the window mean, DetectResult::reference_median/_scale: where
//     the robust z detector sees the channel as normal) and the incident's span shaded;
//   * `svg.chart#heatmap`: subsystem × time; a cell is the mean of the 3 largest |robust z| of
//     the subsystem's channels over the windows in its time bin (needs DetectResult::window_z:
//     DetectOptions::window_z = true);
//   * `table#channels`: every scored channel with its subsystem, reference, peak robust z and
//     when it peaked, sortable by any column (click a header) and filterable by name.
// With several hosts (Prometheus) every host has its section and ids get a "-<n>" suffix
// from the second host on. In peers mode an overview comes first: the hosts' ranking and one
// fused-score line per host on a shared `svg.chart#timeline`.
#pragma once

#include <string>
#include <vector>

#include "reveal/offline.h"
#include "reveal/peers.h"
#include "reveal/recording.h"

namespace reveal {

struct HtmlHost {
  std::string name;                     // host or store label, as in the text report
  const Recording* run = nullptr;       // the recording (summary, and the channels' samples)
  const DetectResult* result = nullptr;  // detect() on it, with window_z for the heatmap
};

// `source`: what was analysed (store paths, a Prometheus URL), shown in the title area.
// `peers`: the peers comparison the hosts come from (their results are peers->hosts[i].result,
// in rank order), or null. Throws std::invalid_argument when a host lacks its run or result.
std::string render_html(const std::vector<HtmlHost>& hosts, const std::string& source,
                        const PeersResult* peers = nullptr);

}  // namespace reveal
