#include "telemetry/perf/perf_group.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>

namespace reveal::telemetry {
namespace {
constexpr std::uint64_t kReadFormat =
    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

int perf_event_open(const PerfEventSpec& ev, int cpu, int group_fd) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = ev.type;
  attr.config = ev.config;
  attr.read_format = kReadFormat;
  attr.disabled = 0;  // count from open; the rate stage differences the totals
  return static_cast<int>(
      ::syscall(SYS_perf_event_open, &attr, /*pid=*/-1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC));
}

bool unsupported(int err) { return err == ENOENT || err == EOPNOTSUPP || err == EINVAL; }
bool cpu_gone(int err) { return err == ENODEV || err == ENXIO || err == EINVAL; }

std::string read_paranoid() {
  FileReader f;
  if (!f.open("/proc/sys/kernel/perf_event_paranoid")) return "?";
  auto t = f.read();
  return t ? std::string(trim(*t)) : "?";
}
}  // namespace

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

std::string PerfGroups::open(std::span<const PerfEventSpec> events, const std::vector<int>& cpus,
                             bool drop_unsupported) {
  groups_.clear();
  active_.clear();
  if (events.empty()) return "no events";
  if (cpus.empty()) return "no online CPUs (sys/devices/system/cpu/online unreadable)";
  for (std::size_t i = 0; i < events.size(); ++i) active_.push_back(i);

  for (std::size_t c = 0; c < cpus.size(); ++c) {
    const bool first = groups_.empty();
    std::vector<UniqueFd> group;
    UniqueFd leader(perf_event_open(events[0], cpus[c], -1));
    if (!leader) {
      const int err = errno;
      if (!first && cpu_gone(err)) continue;
      groups_.clear();
      return perf_open_error(events[0].name, err, events[0].type != PERF_TYPE_SOFTWARE);
    }
    const int leader_fd = leader.get();
    group.push_back(std::move(leader));
    std::vector<std::size_t> kept{0};
    for (std::size_t k = 1; k < active_.size(); ++k) {
      const PerfEventSpec& ev = events[active_[k]];
      UniqueFd fd(perf_event_open(ev, cpus[c], leader_fd));
      if (!fd) {
        const int err = errno;
        if (first && drop_unsupported && unsupported(err)) continue;
        groups_.clear();
        return perf_open_error(ev.name, err, ev.type != PERF_TYPE_SOFTWARE);
      }
      group.push_back(std::move(fd));
      kept.push_back(active_[k]);
    }
    if (first) active_ = kept;
    groups_.push_back(std::move(group));
  }
  if (groups_.empty()) return "perf_event_open: no CPU could be opened";
  buf_.assign(3 + active_.size(), 0);
  return {};
}

void PerfGroups::read_sum(std::span<double> out) {
  for (double& v : out) v = 0;
  const std::size_t n = active_.size();
  const std::size_t bytes = buf_.size() * sizeof(std::uint64_t);
  for (const auto& group : groups_) {
    ssize_t r;
    do r = ::read(group.front().get(), buf_.data(), bytes);
    while (r < 0 && errno == EINTR);
    const bool ok = r == static_cast<ssize_t>(bytes) && buf_[0] == n;
    const double enabled = static_cast<double>(buf_[1]);
    const double running = static_cast<double>(buf_[2]);
    if (!ok || (running == 0 && enabled > 0)) {  // failed, or never scheduled: unknown
      for (double& v : out) v = std::nan("");
      return;
    }
    const double scale = running > 0 && running < enabled ? enabled / running : 1.0;
    for (std::size_t k = 0; k < n; ++k) out[k] += static_cast<double>(buf_[3 + k]) * scale;
  }
}

ProbeStatus open_perf_probe(std::span<const PerfEventSpec> events,
                            const std::filesystem::path& root, bool drop_unsupported,
                            PerfGroups& groups, std::vector<ChannelInfo>& channels) {
  channels.clear();
  std::string err = groups.open(events, online_cpus(root), drop_unsupported);
  if (!err.empty()) return {false, std::move(err)};
  for (std::size_t i : groups.active()) {
    const auto& ev = events[i];
    channels.push_back({channel_name("perf", ev.name), std::string(ev.unit), Kind::counter,
                        ev.subsystem, 64, std::string(ev.help)});
  }
  return {true, {}};
}

}  // namespace reveal::telemetry
