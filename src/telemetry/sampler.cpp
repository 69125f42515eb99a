#include "reveal/sampler.h"

#include <sched.h>
#include <time.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "reveal/glob.h"
#include "reveal/registry.h"
#include "telemetry/file_reader.h"
#include "telemetry/self/sampler_probe.h"

namespace reveal {
namespace {

std::int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The calling thread's policy (pid 0 = this thread), with SCHED_RESET_ON_FORK.
int set_policy(int policy, int priority) {
  sched_param sp{};
  sp.sched_priority = priority;
  return sched_setscheduler(0, policy | SCHED_RESET_ON_FORK, &sp) == 0 ? 0 : errno;
}

std::string ms(double ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f ms", ns * 1e-6);
  return b;
}

}  // namespace

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
  timing_ = std::make_unique<telemetry::SampleTiming>();
  for (auto& s : slots_)
    if (auto* self = dynamic_cast<telemetry::SamplerProbe*>(s.probe.get())) self->attach(timing_.get());
}

Sampler::~Sampler() = default;

void Sampler::set_priority(SamplingPriority p) {
  if (!(p.cpu_share > 0 && p.cpu_share <= 1))
    throw std::invalid_argument("sampling priority: cpu_share must be in (0, 1]");
  if (p.burst.count() <= 0) throw std::invalid_argument("sampling priority: burst must be > 0");
  priority_ = std::move(p);
}

bool Sampler::enter_realtime() {
  const int policy = sched_getscheduler(0);
  sched_param sp{};
  sched_getparam(0, &sp);
  if (policy < 0) return false;
  saved_policy_ = policy & ~SCHED_RESET_ON_FORK;
  saved_priority_ = sp.sched_priority;
  if (saved_policy_ == SCHED_FIFO || saved_policy_ == SCHED_RR) return false;  // already real-time: left as is
  if (const int err = set_policy(SCHED_RR, 1)) {
    if (priority_.note)
      priority_.note(std::string("sampling at normal priority: real-time scheduling refused (") + std::strerror(err) +
                     (err == EPERM ? "; needs CAP_SYS_NICE or RLIMIT_RTPRIO >= 1" : "") + ")");
    return false;
  }
  rt_active_ = true;
  budget_ns_ = double(priority_.burst.count());
  budget_wall_ns_ = monotonic_ns();
  budget_cpu_ns_ = thread_cpu_ns();
  normal_cpu_ns_ = 0;
  return true;
}

void Sampler::leave_realtime() {
  if (!rt_active_) return;
  rt_active_ = false;
  set_policy(saved_policy_, saved_priority_);
}

void Sampler::charge_budget(std::int64_t now_ns) {
  const std::int64_t cpu = thread_cpu_ns();
  const double used = double(cpu - budget_cpu_ns_ - normal_cpu_ns_);
  budget_ns_ = std::min(budget_ns_ + double(now_ns - budget_wall_ns_) * priority_.cpu_share,
                        double(priority_.burst.count())) - used;
  budget_wall_ns_ = now_ns;
  budget_cpu_ns_ = cpu;
  normal_cpu_ns_ = 0;
  if (budget_ns_ >= 0) return;
  leave_realtime();
  if (priority_.note)
    priority_.note("sampling at normal priority from now on: the sampler used its real-time CPU budget (" +
                   ms(used) + " in its last tick; " + std::to_string(int(priority_.cpu_share * 100 + 0.5)) +
                   " % of a core, bursts up to " + ms(double(priority_.burst.count())) + ")");
}

Sampler::AtNormalPriority::AtNormalPriority(Sampler& s) : s_(&s) {
  if (!s_->rt_active_) {
    s_ = nullptr;
    return;
  }
  cpu0_ns_ = thread_cpu_ns();
  set_policy(s_->saved_policy_, s_->saved_priority_);
}

Sampler::AtNormalPriority::~AtNormalPriority() {
  if (!s_) return;
  s_->normal_cpu_ns_ += thread_cpu_ns() - cpu0_ns_;
  if (const int err = set_policy(SCHED_RR, 1)) {
    s_->rt_active_ = false;
    if (s_->priority_.note)
      s_->priority_.note(std::string("sampling at normal priority from now on: real-time scheduling refused (") +
                         std::strerror(err) + ")");
  }
}

std::span<const double> Sampler::sample_once(std::int64_t t_unix_ns) {
  timing_->ticks_missed = skipped_;
  std::span<double> row(row_);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    auto& s = slots_[i];
    auto out = row.subspan(s.offset, s.count);
    ProbeStats& st = stats_[i];
    const std::int64_t t0 = monotonic_ns();
    const std::uint64_t failures = telemetry::read_failures_on_this_thread();
    bool threw = false;
    try {
      s.probe->sample(out);
    } catch (...) {  // a probe fault costs its channels for this tick, never the sampler
      std::fill(out.begin(), out.end(), std::nan(""));
      threw = true;
    }
    st.last_duration_ns = monotonic_ns() - t0;
    std::size_t missing = 0;
    for (double v : out) missing += !std::isfinite(v);
    st.missing = missing;
    // A tick is an error when the probe threw, gave no value at all, or failed a read (not a
    // file that is gone: telemetry/file_reader.h).
    if (threw || missing == out.size() || telemetry::read_failures_on_this_thread() != failures) ++st.errors;
  }
  events_.clear();
  for (auto& s : slots_) s.probe->poll_events(t_unix_ns, events_);
  return row_;
}

std::size_t Sampler::run(std::chrono::nanoseconds interval, std::size_t max_samples,
                         const std::atomic<bool>& stop, const Callback& on_sample) {
  if (priority_.realtime) enter_realtime();
  struct Leave {  // every way out of run(), exceptions from on_sample included
    Sampler& s;
    ~Leave() {
      s.leave_realtime();
      s.timing_->delay_s = std::nan("");
    }
  } leave{*this};
  const std::int64_t step = interval.count();
  const std::int64_t t0 = monotonic_ns();
  anchor_.start(t0, realtime_ns());
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
    const std::int64_t woke = monotonic_ns();
    const std::int64_t t = anchor_.stamp(woke, realtime_ns());
    timing_->delay_s = double(std::max<std::int64_t>(0, woke - due)) * 1e-9;
    auto row = sample_once(t);
    on_sample(t, row);
    ++taken;
    // Next tick strictly in the future; skip (do not bunch) ticks missed by a stall.
    const std::int64_t now = monotonic_ns();
    const std::int64_t next = std::max<std::int64_t>(k + 1, (now - t0) / step + 1);
    skipped_ += std::uint64_t(next - k - 1);
    k = next;
    if (rt_active_) charge_budget(now);
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
