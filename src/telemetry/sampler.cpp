#include "reveal/sampler.h"

#include <time.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "reveal/glob.h"
#include "reveal/registry.h"

namespace reveal {

std::int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Sampler::Sampler(std::vector<std::unique_ptr<Probe>> probes, const std::filesystem::path& root) {
  for (auto& p : probes) {
    ProbeRecord rec;
    rec.name = std::string(p->name());
    ProbeStatus st;
    try {
      st = p->open(root);
    } catch (const std::exception& e) {  // a probe bug must not take its siblings down
      st = {false, std::string("probe failed to open: ") + e.what()};
    }
    if (st.available && p->channels().empty()) st = {false, "no channels found"};
    rec.available = st.available;
    rec.reason = st.reason;
    if (st.available) {
      Slot s;
      s.offset = channels_.size();
      s.count = p->channels().size();
      channels_.insert(channels_.end(), p->channels().begin(), p->channels().end());
      rec.n_channels = s.count;
      s.probe = std::move(p);
      slots_.push_back(std::move(s));
    }
    records_.push_back(std::move(rec));
  }
  row_.assign(channels_.size(), std::nan(""));
  for (const auto& s : slots_) stats_.push_back({std::string(s.probe->name()), s.count, 0, 0, 0});
}

std::span<const double> Sampler::sample_once(std::int64_t t_unix_ns) {
  std::span<double> row(row_);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    auto& s = slots_[i];
    auto out = row.subspan(s.offset, s.count);
    ProbeStats& st = stats_[i];
    const std::int64_t t0 = monotonic_ns();
    try {
      s.probe->sample(out);
    } catch (...) {  // a probe fault costs its channels for this tick, never the sampler
      std::fill(out.begin(), out.end(), std::nan(""));
    }
    st.last_duration_ns = monotonic_ns() - t0;
    std::size_t missing = 0;
    for (double v : out) missing += !std::isfinite(v);
    st.missing = missing;
    if (missing == out.size()) ++st.errors;
  }
  events_.clear();
  for (auto& s : slots_) s.probe->poll_events(t_unix_ns, events_);
  return row_;
}

std::size_t Sampler::run(std::chrono::nanoseconds interval, std::size_t max_samples,
                         const std::atomic<bool>& stop, const Callback& on_sample) {
  const std::int64_t step = interval.count();
  const std::int64_t t0 = monotonic_ns();
  const std::int64_t wall0 = realtime_ns();
  std::size_t taken = 0;
  std::int64_t k = 0;
  while (!stop.load(std::memory_order_relaxed) && (max_samples == 0 || taken < max_samples)) {
    const std::int64_t due = t0 + k * step;
    timespec ts{static_cast<time_t>(due / 1'000'000'000), static_cast<long>(due % 1'000'000'000)};
    int rc;
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr)) == EINTR) {
      if (stop.load(std::memory_order_relaxed)) return taken;
    }
    if (stop.load(std::memory_order_relaxed)) break;
    const std::int64_t t = wall0 + (monotonic_ns() - t0);
    auto row = sample_once(t);
    on_sample(t, row);
    ++taken;
    // Next tick strictly in the future; skip (do not bunch) ticks missed by a stall.
    const std::int64_t now = monotonic_ns();
    const std::int64_t next = std::max<std::int64_t>(k + 1, (now - t0) / step + 1);
    skipped_ += std::uint64_t(next - k - 1);
    k = next;
  }
  return taken;
}

std::vector<std::unique_ptr<Probe>> make_probes(const std::vector<std::string>& include,
                                                const std::vector<std::string>& exclude) {
  const auto& reg = probe_registry();
  for (const auto* list : {&include, &exclude})
    for (const auto& pat : *list) {
      bool any = false;
      for (const auto& f : reg) any = any || glob_match(pat, f.name);
      if (!any) throw std::invalid_argument("unknown probe '" + pat + "' (see `reveal probes`)");
    }
  std::vector<std::unique_ptr<Probe>> out;
  for (const auto& f : reg) {
    bool in = include.empty() ? f.enabled_by_default : false;
    for (const auto& pat : include) in = in || glob_match(pat, f.name);
    for (const auto& pat : exclude) in = in && !glob_match(pat, f.name);
    if (in) out.push_back(f.make());
  }
  return out;
}

}  // namespace reveal
