#include "telemetry/perf/syscalls.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace reveal::telemetry {
namespace {
class SystemPerfSyscalls final : public PerfSyscalls {
 public:
  int open(const perf_event_attr& attr, int cpu, int group_fd) override {
    perf_event_attr a = attr;  // the kernel may write attr.size back on E2BIG
    const long fd = ::syscall(SYS_perf_event_open, &a, /*pid=*/-1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : static_cast<int>(fd);
  }
  long read(int fd, std::uint64_t* buf, std::size_t bytes) override {
    ssize_t r;
    do r = ::read(fd, buf, bytes);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -errno : static_cast<long>(r);
  }
  void close(int fd) override { ::close(fd); }
};
}  // namespace

PerfSyscalls& system_perf_syscalls() {
  static SystemPerfSyscalls s;
  return s;
}

}  // namespace reveal::telemetry
