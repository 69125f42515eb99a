#include "telemetry/perf/perf_group.h"

#include <cerrno>
#include <cmath>

namespace reveal::telemetry {
namespace {
constexpr std::uint64_t kReadFormat =
    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

std::string read_paranoid() {
  FileReader f;
  if (!f.open("/proc/sys/kernel/perf_event_paranoid")) return "?";
  auto t = f.read();
  return t ? std::string(trim(*t)) : "?";
}
}  // namespace

perf_event_attr perf_attr(const PerfEvent& ev) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = ev.type;
  attr.config = ev.config;
  attr.config1 = ev.config1;
  attr.config2 = ev.config2;
  attr.read_format = kReadFormat;
  attr.disabled = 0;  // count from open; the rate stage differences the totals
  return attr;
}

std::string_view pmu_state_reason(PmuState s) {
  switch (s) {
    case PmuState::ok: return "";
    case PmuState::not_scheduled:
      return "PMU counters not scheduled: another profiler or the NMI watchdog holds them";
    case PmuState::zero_counts:
      return "PMU counters read zero while scheduled: another agent programs the PMU directly";
  }
  return "";
}

bool perf_unsupported(int err) { return err == ENOENT || err == EOPNOTSUPP || err == EINVAL; }
bool perf_cpu_gone(int err) { return err == ENODEV || err == ENXIO || err == EINVAL; }

std::string perf_open_error(std::string_view event, int err, bool hardware) {
  const std::string what = "perf_event_open " + std::string(event) + ": " + errno_message(err);
  if (err == EACCES || err == EPERM)
    return what + " (kernel.perf_event_paranoid=" + read_paranoid() +
           "; system-wide counting needs CAP_PERFMON or CAP_SYS_ADMIN, or paranoid <= 0)";
  if (err == ENOSYS) return what + " (kernel built without perf events)";
  if (hardware && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV))
    return "no PMU exposed (" + what + ")";
  return what;
}

std::vector<int> online_cpus(const std::filesystem::path& root) {
  for (const auto& p : {root / "sys/devices/system/cpu/online",
                        std::filesystem::path("/sys/devices/system/cpu/online")}) {
    FileReader f;
    if (!f.open(p)) continue;
    auto text = f.read();
    if (!text) continue;
    if (auto cpus = parse_cpu_list(*text); cpus && !cpus->empty()) return *cpus;
  }
  return {};
}

int perf_probe_event(PerfSyscalls& sys, const PerfEvent& ev, int cpu) {
  const int fd = sys.open(perf_attr(ev), cpu, -1);
  if (fd < 0) return -fd;
  sys.close(fd);
  return 0;
}

PerfGroups::PerfGroups(PerfSyscalls* sys) : sys_(sys ? sys : &system_perf_syscalls()) {}

PerfGroups::~PerfGroups() { clear(); }

void PerfGroups::clear() {
  for (auto& g : groups_)
    for (int fd : g.fds) sys_->close(fd);
  groups_.clear();
  buf_.clear();
  gap_.clear();
  n_out_ = 0;
  running_slot_ = PerfSlot::none;
  state_ = PmuState::ok;
  bad_ticks_ = 0;
}

void PerfGroups::truncate(std::size_t n) {
  while (groups_.size() > n) {
    for (int fd : groups_.back().fds) sys_->close(fd);
    groups_.pop_back();
  }
}

std::optional<PerfGroups::OpenError> PerfGroups::add(int cpu, std::span<const PerfEvent> events,
                                                     std::span<const PerfSlot> slots) {
  Group g;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const int fd = sys_->open(perf_attr(events[i]), cpu, i == 0 ? -1 : g.fds.front());
    if (fd < 0) {
      for (int f : g.fds) sys_->close(f);
      return OpenError{i, -fd};
    }
    g.fds.push_back(fd);
  }
  g.slots.assign(slots.begin(), slots.end());
  g.prev.assign(events.size(), 0);
  g.est.assign(events.size(), 0.0);
  groups_.push_back(std::move(g));
  return std::nullopt;
}

void PerfGroups::finish(std::size_t n_out, std::size_t running_slot) {
  std::size_t widest = 0;
  for (const auto& g : groups_) widest = std::max(widest, g.fds.size());
  buf_.assign(3 + widest, 0);
  gap_.assign(n_out, 0);
  n_out_ = n_out;
  running_slot_ = running_slot;
}

void PerfGroups::read(std::span<double> out) {
  const double nan = std::nan("");
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = 0;
    gap_[i] = 0;
  }
  auto gap = [&](const Group& g) {
    for (const auto& s : g.slots) {
      if (s.host != PerfSlot::none) gap_[s.host] = 1;
      if (s.cpu != PerfSlot::none) gap_[s.cpu] = 1;
    }
  };
  double sum_enabled = 0, sum_running = 0, sentinel_delta = 0;
  std::size_t enabled_groups = 0, unscheduled_groups = 0;
  bool sentinel_seen = false, sentinel_ran = true;
  for (auto& g : groups_) {
    const std::size_t n = g.fds.size();
    const long bytes = static_cast<long>((3 + n) * sizeof(std::uint64_t));
    const long r = sys_->read(g.fds.front(), buf_.data(), static_cast<std::size_t>(bytes));
    if (r != bytes || buf_[0] != n || buf_[1] < g.prev_enabled || buf_[2] < g.prev_running) {
      gap(g);
      continue;
    }
    const double d_enabled = static_cast<double>(buf_[1] - g.prev_enabled);
    const double d_running = static_cast<double>(buf_[2] - g.prev_running);
    g.prev_enabled = buf_[1];
    g.prev_running = buf_[2];
    const bool unscheduled = d_enabled > 0 && d_running == 0;
    if (d_enabled > 0) {
      ++enabled_groups;
      sum_enabled += d_enabled;
      sum_running += d_running;
      if (unscheduled) ++unscheduled_groups;
    }
    const double factor = d_running > 0 && d_running < d_enabled ? d_enabled / d_running : 1.0;
    bool member_gap = unscheduled;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t v = buf_[3 + k];
      if (v < g.prev[k]) {  // a hardware counter never steps back: distrust the group
        member_gap = true;
        g.prev[k] = v;
        continue;
      }
      const double delta = static_cast<double>(v - g.prev[k]);
      g.prev[k] = v;
      if (g.slots[k].sentinel && d_enabled > 0) {
        sentinel_seen = true;
        sentinel_ran = sentinel_ran && d_running > 0;
        sentinel_delta += delta;
      }
      if (!unscheduled) g.est[k] += delta * factor;
    }
    if (member_gap) {
      gap(g);
      continue;
    }
    for (std::size_t k = 0; k < n; ++k) {
      const PerfSlot& s = g.slots[k];
      const double x = g.est[k] * s.scale;
      if (s.host != PerfSlot::none) out[s.host] += x;
      if (s.cpu != PerfSlot::none) out[s.cpu] += x;
    }
  }

  const bool starved = enabled_groups > 0 && unscheduled_groups == enabled_groups;
  const bool zeros = sentinel_seen && sentinel_ran && sentinel_delta == 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (gap_[i] || zeros) out[i] = nan;
  if (running_slot_ < out.size())
    out[running_slot_] = sum_enabled > 0 ? 100.0 * sum_running / sum_enabled : nan;

  if (starved || zeros) {
    if (++bad_ticks_ >= kBadTicks) state_ = starved ? PmuState::not_scheduled : PmuState::zero_counts;
  } else if (enabled_groups > 0) {
    bad_ticks_ = 0;
    state_ = PmuState::ok;
  }
}

ProbeStatus open_perf_probe(std::span<const PerfEvent> events, const std::filesystem::path& root,
                            PerfGroups& groups, std::vector<ChannelInfo>& channels) {
  channels.clear();
  groups.clear();
  if (events.empty()) return {false, "no events"};
  const std::vector<int> cpus = online_cpus(root);
  if (cpus.empty()) return {false, "no online CPUs (sys/devices/system/cpu/online unreadable)"};
  std::vector<PerfSlot> slots(events.size());
  for (std::size_t i = 0; i < events.size(); ++i) slots[i].host = i;
  for (int cpu : cpus) {
    const bool first = groups.groups() == 0;
    if (auto e = groups.add(cpu, events, slots)) {
      if (!first && e->event == 0 && perf_cpu_gone(e->err)) continue;
      groups.clear();
      const auto& ev = events[e->event];
      return {false, perf_open_error(ev.name, e->err, ev.type != PERF_TYPE_SOFTWARE)};
    }
  }
  groups.finish(events.size());
  for (const auto& ev : events)
    channels.push_back({channel_name("perf", ev.name), ev.unit, Kind::counter, ev.subsystem, 64, ev.help});
  return {true, {}};
}

}  // namespace reveal::telemetry
