// Attribution of an incident: which subsystem, entity and channels explain it, and what an
// operator should do next. The last step of the data path before the report; the same function
// for `reveal detect` (src/pipeline/offline.cpp) and the agent (src/pipeline/streaming.cpp), fed
// by IncidentEvidence (evidence.h). Algorithm summary in include/reveal/offline.h, "Attribution".
#pragma once

#include <array>
#include <optional>
#include <span>
#include <vector>

#include "reveal/channel.h"
#include "reveal/incident.h"

namespace reveal::explain {

// What the Isolation Forest and the PCA residual say about an incident: per model channel,
// their mean contribution share over its anomalous windows (empty spans = none), and each
// detector's peak level over the incident (robust_z, iforest, pca_spe; ≥ 1: it flagged a
// window on its own).
struct DetectorEvidence {
  std::span<const double> iforest, pca_spe;
  std::array<double, 3> peak_level{};
  // Per model channel, its mean |robust z| over the anomalous windows (materiality: a channel
  // whose variance changed swings both ways, so its mean z stays near 0); empty: |zbar|.
  std::span<const double> mean_abs_z;
};

// Per model channel, the reference it is compared with, in the channel's unit: the robust-z
// reference median of its window mean, and the floor of its robust scale (channel_floors in
// src/pipeline/reference.h), which sets the effect size's resolution ε.
struct ChannelReference {
  std::span<const double> median, floor;
};

// Attribution of one incident: `zbar` is each model channel's mean robust z over the
// incident's anomalous windows, `mean_value` its mean over the incident's samples (NaN: no
// value), `chans` the model channels' descriptions, `cores` the host's CPUs (per-CPU channels
// weigh 1/cores). Each detector gives subsystem shares: robust_z from effect sizes
// |ln((|v|+ε)/(|ref|+ε))| of the channels with |z| ≥ 3 (ε: unit resolution, 5 points for % and
// 0/1 states; cap ln 100), iforest and pca_spe from their contribution shares; every detector's
// per-channel evidence is multiplied by the same channel weight: falls ×0.25, load channels
// ×0.5 (symptom channels ×1; channel_role in reveal/channel.h), per-CPU channels ("cpu<N>",
// "cpu<N>.<state>" of older stores) ÷ CPUs; each subsystem: the sum of its 3 largest. The focus is the label
// with the largest share of the combined evidence, a CPU's channels counted as "cpu<N>".
// The incident's shares are robust_z's when its peak level is ≥ 1; otherwise the mean of
// iforest's and pca_spe's weighted by peak level over those ≥ 1 (robust_z when none is); in
// their views each channel's contribution also weighs by materiality, min(1, max(0.05, m/3)) with
// m its mean |z| over the anomalous windows (more.mean_abs_z; |zbar| without it; 0.05 for NaN):
// a channel that did not move itself explains little. The top channels
// are those of largest |z| when robust_z takes part, else of largest combined share.
// An incident whose symptom (inc.symptom, set before the call) is hypervisor steal
// (hypervisor_steal(), reveal/channel.h) has the hypervisor's action (steal_action()): alone
// when the evidence names cpu, after the subsystem's own action otherwise (the subsystem stays
// the evidence's: a job's start and a fault that began with the steal look alike otherwise).
// One whose symptom is a drop of the caches (page_cache_dropped(), reveal/channel.h) has
// cache_drop_action() as its action.
// `named`: the subsystem the incident is about whatever the shares say (a second cause's
// incident, opened because a symptom of that subsystem rose: StreamingDetector), its share the
// confidence and its strongest channel the action's. None: the subsystem of the incident's
// symptom (inc.symptom) when that is specific to one — any subsystem but cpu (CPU contention
// rises with every extra piece of work on a small host: a memory-bandwidth hog's threads, the
// network stack's softirqs) and system — and its share is at least half the largest (a close
// call, not a consequence such as I/O stalls while memory is short against evidence that
// names memory), the symptom's channel then leading the action; else the largest share. A
// qdisc throttling a rate limit (network, 0.47) names the incident where the CPU's channels
// moved a little more (0.53): the ranks waiting on the link use less CPU, another tenant more.
// Fills subsystem, confidence, subsystem_shares, detectors, focus, top and action of `inc`.
// All spans have one entry per model channel (chans.size()).
void attribute(Incident& inc, std::span<const double> zbar, std::span<const double> mean_value,
               ChannelReference ref, const std::vector<const ChannelInfo*>& chans, int cores, int top_channels,
               const DetectorEvidence& more, std::optional<Subsystem> named = std::nullopt);

}  // namespace reveal::explain
