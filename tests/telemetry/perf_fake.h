// A scripted perf_event_open(2) for the perf probe tests: no PMU needed.
//
// Every open() is recorded (attr, cpu, group). refuse(attr, cpu) returns the errno to fail an
// open with (0 accepts). advance(dt_ns, share, rate) moves time for every open group: its
// leader's time_enabled grows by dt, time_running by dt × share(group), and each member counts
// rate(attr, cpu) events per second of *running* time. read() answers the group read format
// {nr, enabled, running, values...} and allocates nothing.
#pragma once

#include <linux/perf_event.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "telemetry/perf/syscalls.h"

namespace reveal::testing {

class FakePerf final : public telemetry::PerfSyscalls {
 public:
  static constexpr int kBase = 100;  // fds are kBase + index into fds()
  struct Fd {
    perf_event_attr attr{};
    int cpu = -1;
    int leader = -1;  // index of the group leader (itself for a leader)
    bool open = true;
    std::uint64_t count = 0, enabled = 0, running = 0;
    std::vector<int> members;  // leader only: member indices in open order, itself first
  };

  std::function<int(const perf_event_attr&, int cpu)> refuse;
  int read_errno = 0;  // fail every read with this errno when set

  int open(const perf_event_attr& attr, int cpu, int group_fd) override {
    if (refuse)
      if (int e = refuse(attr, cpu)) return -e;
    Fd f;
    f.attr = attr;
    f.cpu = cpu;
    const int idx = static_cast<int>(fds_.size());
    if (group_fd < 0) {
      f.leader = idx;
      f.members.push_back(idx);
    } else {
      f.leader = group_fd - kBase;
      if (f.leader < 0 || f.leader >= idx || !fds_[f.leader].open) return -EBADF;
      fds_[f.leader].members.push_back(idx);
    }
    fds_.push_back(f);
    return kBase + idx;
  }

  long read(int fd, std::uint64_t* buf, std::size_t bytes) override {
    if (read_errno) return -read_errno;
    const int i = fd - kBase;
    if (i < 0 || i >= static_cast<int>(fds_.size()) || !fds_[i].open) return -EBADF;
    const Fd& l = fds_[i];
    if (l.leader != i) return -EINVAL;  // the probes only read leaders
    const std::size_t need = (3 + l.members.size()) * sizeof(std::uint64_t);
    if (bytes < need) return -ENOSPC;
    buf[0] = l.members.size();
    buf[1] = l.enabled;
    buf[2] = l.running;
    for (std::size_t k = 0; k < l.members.size(); ++k) buf[3 + k] = fds_[l.members[k]].count;
    return static_cast<long>(need);
  }

  void close(int fd) override {
    const int i = fd - kBase;
    if (i >= 0 && i < static_cast<int>(fds_.size())) fds_[i].open = false;
  }

  // share(leader) in [0, 1]; rate(attr, cpu) events per second while running.
  void advance(std::uint64_t dt_ns, const std::function<double(const Fd& leader)>& share,
               const std::function<double(const perf_event_attr&, int cpu)>& rate) {
    for (std::size_t i = 0; i < fds_.size(); ++i) {
      Fd& l = fds_[i];
      if (!l.open || l.leader != static_cast<int>(i)) continue;
      const double s = share(l);
      const auto run = static_cast<std::uint64_t>(std::llround(static_cast<double>(dt_ns) * s));
      l.enabled += dt_ns;
      l.running += run;
      for (int m : l.members)
        fds_[m].count += static_cast<std::uint64_t>(std::llround(rate(fds_[m].attr, l.cpu) * run * 1e-9));
    }
  }

  const std::vector<Fd>& fds() const { return fds_; }
  std::size_t open_count() const {
    std::size_t n = 0;
    for (const auto& f : fds_) n += f.open;
    return n;
  }
  // Open group leaders (indices into fds()).
  std::vector<int> open_leaders() const {
    std::vector<int> out;
    for (std::size_t i = 0; i < fds_.size(); ++i)
      if (fds_[i].open && fds_[i].leader == static_cast<int>(i)) out.push_back(static_cast<int>(i));
    return out;
  }

 private:
  std::vector<Fd> fds_;
};

inline bool is_hw(const perf_event_attr& a, std::uint64_t config) {
  return a.type == PERF_TYPE_HARDWARE && a.config == config;
}

}  // namespace reveal::testing
