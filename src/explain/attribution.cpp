// Attribution of an incident; contract in attribution.h.
#include "attribution.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <string_view>

namespace reveal::explain {
namespace {

constexpr double kFallWeight = 0.25;
// A channel moved materially when its mean robust z over the incident reaches this: the
// significance robust_z's evidence needs, and where a multivariate detector's contribution
// counts in full (materiality below).
constexpr double kMaterialZ = 3.0;
// What a channel that did not move at all (|z| = 0) keeps of its multivariate contribution.
constexpr double kQuietShare = 0.05;
constexpr double kLoadWeight = 0.5;  // a load channel's evidence against a symptom channel's (channel_role)

// CPU pressure stall (PSI cpu, total and derived shares): tasks waiting for a CPU, whatever
// they run. On a host with few CPUs every extra piece of work raises it, the network stack's
// softirqs and a memory-bandwidth hog's threads as much as a CPU hog, so it says that something
// competes for the CPUs, not what: in attribution it weighs as load, like the runnable tasks.
bool cpu_contention(const std::string& name) {
  return name.rfind("proc.pressure:cpu_", 0) == 0 || name.rfind("derived:psi_cpu_", 0) == 0;
}
// A symptom that names its subsystem (attribute()): any but the CPU's and the host-wide ones.
bool specific_symptom(const ChannelEvidence& symptom) {
  return !symptom.name.empty() && symptom.subsystem != Subsystem::cpu && symptom.subsystem != Subsystem::system;
}
// ... when its subsystem's share of the evidence is at least this part of the leading one's: a
// close call the symptom decides, not a consequence (I/O stalls while memory is short, reclaim
// while a disk is written) against evidence that points elsewhere.
constexpr double kSymptomNamesShare = 0.5;
const double kMaxEffect = std::log(100.0);  // effect-size cap for attribution (100×)
constexpr std::size_t kTopPerSubsystem = 3;

// The length of the "cpu<N>" that opens `label`, when the label is one CPU's: "cpu3", or "cpu3."
// followed by more (sys.cpuidle's "cpu3.C6" in stores recorded before it summed over CPUs: one
// idle state of CPU 3); 0 otherwise.
std::size_t per_cpu_prefix(std::string_view label) {
  if (label.size() < 4 || label.compare(0, 3, "cpu") != 0) return 0;
  std::size_t i = 3;
  while (i < label.size() && label[i] >= '0' && label[i] <= '9') ++i;
  if (i == 3 || (i < label.size() && label[i] != '.')) return 0;
  return i;
}

// The entity a channel's evidence goes to for the focus: its label, cut to "cpu<N>" for a
// per-CPU channel (every idle state of CPU 3 is CPU 3).
std::string focus_entity(const std::string& name) {
  std::string label = channel_label(name);
  if (const std::size_t n = per_cpu_prefix(label)) label.resize(n);
  return label;
}

// The ε of the attribution effect size: the unit's resolution, but 5 points for shares
// (%, and 0/1 states averaged into the fraction of time true).
double attribution_eps(const std::string& unit, double floor) {
  if (unit == "%") return std::max(floor, 5.0);
  if (unit == "bool") return std::max(floor, 0.05);
  return std::max(floor, 1e-9);
}

}  // namespace

void attribute(Incident& inc, std::span<const double> zbar, std::span<const double> mean_value,
               ChannelReference reference, const std::vector<const ChannelInfo*>& chans, int cores,
               int top_channels, const DetectorEvidence& more, std::optional<Subsystem> named) {
  const std::size_t nc = zbar.size();
  const std::span<const double> ref_median = reference.median;
  std::vector<std::size_t> order(nc);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::fabs(zbar[x]) > std::fabs(zbar[y]);
  });
  // robust_z's per-channel evidence. Significance comes from z (|z| ≥ 3); the weight of a
  // significant channel is its effect size, |ln((|value| + ε) / (|reference| + ε))| capped at
  // ln 100, with ε the channel's unit resolution. z alone would let a quiet but irrelevant
  // channel (virtual memory committed by a newly started process) outvote a large move on a
  // noisy one (CPU stall time 6 % → 82 %). Shares (%, 0/1 states) use ε = 5 points: a core
  // going from 0 % to 95 % busy is a big move, not a 95-fold one.
  // Each channel's evidence is then multiplied by its channel weight, the product of:
  //  * direction: rises weigh 1 and falls kFallWeight (0.25): a fault adds load or errors, while
  //    the victim workload slowing down shows as falls spread over every subsystem it uses,
  //    which must not outvote the cause;
  //  * role (channel_role, reveal/channel.h): symptom channels (stall time, steal, reclaim,
  //    drops, errors, retransmits, throttling, queue time, the sampler running late) weigh 1 and
  //    load channels (utilisation, throughput, activity counts, levels) kLoadWeight (0.5): a
  //    shortage is where the host hurts, while activity moves wherever work moves. A fork storm
  //    allocates and faults pages by the hundred thousand per second (proc.vmstat:pgalloc_*,
  //    pgfree, pgfault: load), which must not name memory over the processes it creates.
  //    Saturation (runnable tasks) and CPU pressure stall (cpu_contention above) weigh as load:
  //    they show that something competes for the CPUs, not what;
  //    When only load channels move (a new job), every weight halves and the shares are as
  //    without the role;
  //  * per CPU: a channel of one CPU (label "cpu<N>", or "cpu<N>.<state>" for older stores' sys.cpuidle)
  //    weighs 1/N on an N-CPU host: one core of sixteen is a sixteenth of the CPU (the host
  //    aggregate of the same quantity carries the host-level evidence). Per-device channels
  //    (a disk, a NIC) keep their full weight: devices are not interchangeable shares of one
  //    pool, and one saturated disk or link is the whole fault of the job that uses it.
  // The same channel weights apply to the other detectors' shares. Within a subsystem, the
  // sum of its kTopPerSubsystem strongest weighted channels (below) caps what one quantity seen
  // through many channels (a device and its partitions, bytes and packets of the same traffic,
  // hundreds of co-moving vmstat counters) adds up to.
  const double n_cpus = std::max(1, cores);
  std::vector<double> static_weight(nc);  // role × per-CPU; the direction depends on zbar
  for (std::size_t j = 0; j < nc; ++j)
    static_weight[j] = (channel_role(chans[j]->name) == ChannelRole::symptom && !cpu_contention(chans[j]->name)
                            ? 1.0
                            : kLoadWeight) /
                       (per_cpu_prefix(channel_label(chans[j]->name)) ? n_cpus : 1.0);
  const auto channel_weight = [&](std::size_t j) { return (zbar[j] < 0 ? kFallWeight : 1.0) * static_weight[j]; };
  std::vector<double> zev(nc, 0.0);
  double z_total = 0;
  for (std::size_t j : order) {
    if (std::fabs(zbar[j]) < kMaterialZ) break;
    const double v = mean_value[j], ref = ref_median[j];
    if (!std::isfinite(v) || !std::isfinite(ref)) continue;
    const ChannelInfo& ch = *chans[j];
    const double eps = attribution_eps(ch.unit, reference.floor[j]);
    const double effect = std::min(std::fabs(std::log((std::fabs(v) + eps) / (std::fabs(ref) + eps))), kMaxEffect);
    zev[j] = effect * channel_weight(j);
    z_total += zev[j];
  }
  // The forest's and the PCA residual's contributions also weigh by materiality: in full for a
  // channel whose own mean |z| over the incident's anomalous windows reached kMaterialZ (its
  // windows' |z|, so a change of variance counts), in proportion below it, at least kQuietShare. Their contributions favour channels that were merely quiet: a PCA
  // residual that barely flagged a CPU hog's windows (level 1.01) gave memory 39 % from page
  // counters idle at 0 in the reference (8.5 page reuses/s, robust z 0) while the host's CPU
  // stall time rose 8.6 % → 84 % (z 16). Among channels that all stayed in their range (a
  // broken correlation) those that moved further weigh more; shares stay as they were when
  // they moved alike.
  const bool abs_z = more.mean_abs_z.size() == nc;
  const auto materiality = [&](std::size_t j) {
    const double z = std::fabs(abs_z ? more.mean_abs_z[j] : zbar[j]);
    return std::isnan(z) ? kQuietShare : std::clamp(z / kMaterialZ, kQuietShare, 1.0);
  };
  const auto weighted = [&](std::span<const double> share, std::vector<double>& out) -> std::span<const double> {
    if (share.size() != nc) return {};
    out.assign(nc, 0.0);
    for (std::size_t j = 0; j < nc; ++j) out[j] = share[j] * channel_weight(j) * materiality(j);
    return out;
  };
  std::vector<double> ifw, spew;
  const std::span<const double> if_ev = weighted(more.iforest, ifw), spe_ev = weighted(more.pca_spe, spew);
  double if_total = 0, spe_total = 0;
  for (double v : ifw) if_total += v;
  for (double v : spew) spe_total += v;
  // Per subsystem, the sum of its kTopPerSubsystem strongest weighted channels: one quantity
  // seen through many channels (bytes, packets, segments of the same traffic) counts once-ish.
  const auto subsystem_shares = [&](std::span<const double> per_channel) {
    std::map<Subsystem, std::vector<double>> by_sub;
    for (std::size_t j = 0; j < per_channel.size(); ++j)
      if (per_channel[j] > 0) by_sub[chans[j]->subsystem].push_back(per_channel[j]);
    std::vector<std::pair<Subsystem, double>> out;
    double total = 0;
    for (auto& [sub, es] : by_sub) {
      std::sort(es.begin(), es.end(), std::greater<>());
      double sum = 0;
      for (std::size_t i = 0; i < es.size() && i < kTopPerSubsystem; ++i) sum += es[i];
      out.emplace_back(sub, sum);
      total += sum;
    }
    for (auto& [sub, v] : out) v /= total > 0 ? total : 1.0;
    std::sort(out.begin(), out.end(), [](auto& x, auto& y) { return x.second > y.second; });
    return out;
  };
  // Each detector's view, and the weight it gets. robust_z alone when it flagged a window of the
  // incident on its own (peak level ≥ 1): each channel's own sustained deviation, weighed by its
  // effect size, explains a level shift best, while the multivariate detectors' contributions
  // in robust-z units favour channels that were merely quiet (a per-CPU busy % idle at 0.5 ± 0.2
  // dominates a PCA residual). Otherwise the forest and the PCA residual that flagged it, each
  // weighted by its peak level: a broken correlation or a change of variance, which no single
  // channel's level shows. robust_z alone when none flagged.
  const std::array<const char*, 3> names{"robust_z", "iforest", "pca_spe"};
  const std::array<std::span<const double>, 3> per_channel{std::span<const double>(zev), if_ev, spe_ev};
  const std::array<double, 3> totals{z_total, if_total, spe_total};
  std::array<double, 3> weight{};
  inc.detectors.clear();
  for (std::size_t d = 0; d < 3; ++d) {
    if (per_channel[d].size() != nc) continue;
    Incident::DetectorView view{names[d], more.peak_level[d], subsystem_shares(per_channel[d])};
    if (view.subsystem_shares.empty()) continue;
    weight[d] = std::isfinite(view.peak_level) && view.peak_level >= 1.0 ? view.peak_level : 0.0;
    inc.detectors.push_back(std::move(view));
  }
  if (weight[0] > 0 || weight[1] + weight[2] <= 0) weight = {1.0, 0.0, 0.0};
  const double wsum = weight[0] + weight[1] + weight[2];
  std::map<Subsystem, double> share;
  std::vector<double> combined(nc, 0.0);  // per channel: its weighted share of the evidence
  for (std::size_t d = 0; d < 3; ++d) {
    if (weight[d] <= 0 || per_channel[d].size() != nc || !(totals[d] > 0)) continue;
    for (const auto& view : inc.detectors)
      if (view.detector == names[d])
        for (const auto& [sub, v] : view.subsystem_shares) share[sub] += weight[d] / wsum * v;
    for (std::size_t j = 0; j < nc; ++j) combined[j] += weight[d] / wsum * per_channel[d][j] / totals[d];
  }
  inc.subsystem_shares.assign(share.begin(), share.end());
  std::sort(inc.subsystem_shares.begin(), inc.subsystem_shares.end(),
            [](auto& x, auto& y) { return x.second > y.second; });
  inc.subsystem = Subsystem::system;
  inc.confidence = 0;
  if (!inc.subsystem_shares.empty()) {
    inc.subsystem = inc.subsystem_shares.front().first;
    inc.confidence = inc.subsystem_shares.front().second;
  }
  // An incident opened by a symptom of one subsystem's own (a qdisc's throttling, retransmitted
  // losses, memory being used up, I/O stalls; not CPU contention, which every extra piece of work
  // raises on a small host, nor the host-wide system signals) is about that subsystem: the load
  // that moved with it (the victims' CPU use falling, other tenants' phases) is context.
  bool by_symptom = false;
  if (!named && specific_symptom(inc.symptom) && !inc.subsystem_shares.empty()) {
    double own = 0;
    for (const auto& [sub, v] : inc.subsystem_shares)
      if (sub == inc.symptom.subsystem) own = v;
    if (own > 0 && own >= kSymptomNamesShare * inc.subsystem_shares.front().second) {
      named = inc.symptom.subsystem;
      by_symptom = true;
    }
  }
  if (named) {
    inc.subsystem = *named;
    inc.confidence = 0;
    for (const auto& [sub, v] : inc.subsystem_shares)
      if (sub == *named) inc.confidence = v;
  }
  // Focus: the entity ("" = host-wide; a CPU's channels, idle states included, are "cpu<N>")
  // with the largest share of the combined evidence.
  std::map<std::string, double> by_label;
  double all_evidence = 0;
  for (std::size_t j = 0; j < nc; ++j) {
    by_label[focus_entity(chans[j]->name)] += combined[j];
    all_evidence += combined[j];
  }
  inc.focus.clear();
  inc.focus_share = 0;
  for (const auto& [label, e] : by_label)
    if (!label.empty() && all_evidence > 0 && e / all_evidence >= kFocusMinShare && e / all_evidence > inc.focus_share) {
      inc.focus = label;
      inc.focus_share = e / all_evidence;
    }
  // Top channels: by |z| when robust_z took part (its value-vs-reference reading is what an
  // operator checks), else by the combined share of the detectors that raised the incident.
  if (weight[0] <= 0)
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return combined[x] > combined[y]; });
  const auto evidence = [&](std::size_t j) {
    ChannelEvidence ev;
    ev.name = chans[j]->name;
    ev.unit = chans[j]->unit;
    ev.subsystem = chans[j]->subsystem;
    ev.z = zbar[j];
    ev.reference = ref_median[j];
    ev.value = mean_value[j];
    return ev;
  };
  inc.top.clear();
  for (std::size_t i = 0; i < order.size() && int(inc.top.size()) < top_channels; ++i)
    inc.top.push_back(evidence(order[i]));
  // The action names the strongest channel (in the same order) of the subsystem it is about:
  // the top channel may belong to another one when, say, a storage counter idle at 0 carries
  // more effect size than a move on a CPU channel.
  inc.action.clear();
  if (!order.empty()) {
    std::size_t lead = order.front();
    for (std::size_t j : order)
      if (chans[j]->subsystem == inc.subsystem) { lead = j; break; }
    // Named by its symptom: the symptom's channel leads the action.
    if (by_symptom)
      for (std::size_t j = 0; j < nc; ++j)
        if (chans[j]->name == inc.symptom.name) { lead = j; break; }
    inc.action = suggest_action(inc.subsystem, evidence(lead));
  }
  // Steal is caused by the VM's physical host, never by what moved inside it, so an incident
  // whose symptom is hypervisor steal says so in its action. The subsystem stays the evidence's:
  // on a shared VM steal rises as the host gets busy, with a job's start (its traffic named) as
  // with a fault that began then (a leak's page faults, a disk's writes), and only the evidence
  // tells the two apart. When the evidence names cpu, steal is the action.
  if (hypervisor_steal(inc.symptom.name))
    inc.action = inc.subsystem == Subsystem::cpu || inc.action.empty()
                     ? steal_action(inc.symptom)
                     : inc.action + "; it opened on " + steal_action(inc.symptom);
  // A drop of the caches is an administrator's write, whatever else moved with it (the jobs'
  // re-reads, their slowdown): the writer is the cause to name.
  else if (page_cache_dropped(inc.symptom.name))
    inc.action = cache_drop_action(inc.symptom);
}

}  // namespace reveal::explain
