// Internal: the three system calls the perf probes make, behind an interface so that group
// building, counter budgeting, multiplexing scaling and PMU-contention detection are tested
// with a scripted double (tests/telemetry/perf_fake.h) on hosts without a PMU.
//
// Contract (what system_perf_syscalls() does, and what a double must imitate):
//  * open(attr, cpu, group_fd): perf_event_open(2) counting system-wide on `cpu` (pid = -1),
//    flags PERF_FLAG_FD_CLOEXEC. group_fd = -1 makes a group leader, else a member of the
//    leader's group. Returns the fd (>= 0), or -errno.
//  * read(fd, buf, bytes): read(2) of a group leader opened with read_format
//    PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING; buf receives
//    {nr, time_enabled, time_running, value[nr]} (perf_event_open(2), "Reading results").
//    Returns the byte count, or -errno. Retries EINTR. Never allocates.
//  * close(fd): close(2).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

namespace reveal::telemetry {

class PerfSyscalls {
 public:
  virtual ~PerfSyscalls() = default;
  virtual int open(const perf_event_attr& attr, int cpu, int group_fd) = 0;
  virtual long read(int fd, std::uint64_t* buf, std::size_t bytes) = 0;
  virtual void close(int fd) = 0;
};

// The live kernel. A process-wide singleton; stateless.
PerfSyscalls& system_perf_syscalls();

}  // namespace reveal::telemetry
