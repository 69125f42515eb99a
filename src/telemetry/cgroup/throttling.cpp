// CFS bandwidth throttling summed over CPU-limited cgroups; contract in throttling.h.
#include "telemetry/cgroup/throttling.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

namespace reveal::telemetry {
namespace {

constexpr std::size_t kDentsBuf = 8192;  // one getdents64 buffer per walk level

// The record getdents64(2) fills (linux/dirent.h): 8-byte aligned, d_name NUL-terminated.
struct Dirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};
constexpr unsigned char kDtUnknown = 0, kDtDir = 4;

// Reads a small file at `dir_fd`/`name` into buf (NUL-terminated); its length or -1.
long read_at(int dir_fd, const char* name, char* buf, std::size_t cap) {
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const long n = ::pread(fd, buf, cap - 1, 0);
  ::close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

// v2 cpu.max "<quota|max> <period>"; v1 cpu.cfs_quota_us "<quota|-1>" (microseconds).
bool limited(std::string_view text, bool v2) {
  const std::size_t b = text.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) return false;
  text.remove_prefix(b);
  if (v2) return text.substr(0, 3) != "max";
  std::uint64_t quota = 0;
  return std::from_chars(text.data(), text.data() + text.size(), quota).ec == std::errc{} && quota > 0;
}

}  // namespace

CpuThrottlingProbe::~CpuThrottlingProbe() {
  for (Tracked& t : table_) ::close(t.stat_fd);
}

ProbeStatus CpuThrottlingProbe::open(const std::filesystem::path& root) {
  for (Tracked& t : table_) ::close(t.stat_fd);
  table_.clear();
  channels_.clear();
  total_ = {};
  untracked_ = truncated_ = 0;
  const std::filesystem::path base = root / "sys/fs/cgroup";
  std::filesystem::path dir;
  std::error_code ec;
  std::array<char, 512> buf{};
  const int base_fd = ::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (base_fd >= 0) {
    const long n = read_at(base_fd, "cgroup.controllers", buf.data(), buf.size());
    ::close(base_fd);
    if (n > 0) {
      std::string_view c(buf.data(), std::size_t(n));
      for (std::size_t p = 0; p < c.size();) {  // whitespace-separated controller names
        const std::size_t e = std::min(c.find_first_of(" \n", p), c.size());
        if (c.substr(p, e - p) == "cpu") dir = base;
        p = e + 1;
      }
    }
  }
  v2_ = !dir.empty();
  if (!v2_)
    for (const char* sub : {"cpu,cpuacct", "cpu", "cpuacct,cpu"})
      if (std::filesystem::exists(base / sub / "cpu.cfs_quota_us", ec)) {
        dir = base / sub;
        break;
      }
  if (dir.empty())
    return {false, "no cgroup CPU controller (neither cgroup v2 with \"cpu\" in " + (base / "cgroup.controllers").string() +
                       " nor v1 " + (base / "cpu/cpu.cfs_quota_us").string() + ")"};
  root_fd_ = UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd_) return {false, "cannot open " + dir.string() + ": " + std::strerror(errno)};
  table_.reserve(kMaxCgroups);
  dents_.assign(kMaxDepth * kDentsBuf, 0);
  text_.assign(4096, 0);
  channels_ = {
      {"cgroup.throttling:nr_throttled", "count", Kind::counter, Subsystem::cpu, 64,
       "enforcement periods in which a CPU-limited cgroup used up its quota, summed over cgroups"},
      {"cgroup.throttling:throttled_usec", "us", Kind::counter, Subsystem::cpu, 64,
       "time CPU-limited cgroups spent throttled, summed over cgroups"},
      {"cgroup.throttling:nr_periods", "count", Kind::counter, Subsystem::cpu, 64,
       "enforcement periods with runnable tasks, summed over CPU-limited cgroups"},
      {"cgroup.throttling:limited_cgroups", "count", Kind::gauge, Subsystem::cpu, 64,
       "cgroups with a CPU limit (v2 cpu.max, v1 cpu.cfs_quota_us), tracked now"},
  };
  rescan();  // the starting point: the cgroups found now add nothing
  total_ = {};
  last_scan_ = std::chrono::steady_clock::now();
  return {true, ""};
}

bool CpuThrottlingProbe::read_stat(int fd, Stat& s) {
  const long n = ::pread(fd, text_.data(), text_.size() - 1, 0);
  if (n <= 0 || std::size_t(n) >= text_.size() - 1) return false;
  const std::string_view text(text_.data(), std::size_t(n));
  bool periods = false, throttled = false, time = false;
  for (std::size_t p = 0; p < text.size();) {
    const std::size_t e = std::min(text.find('\n', p), text.size());
    const std::string_view line = text.substr(p, e - p);
    p = e + 1;
    const std::size_t sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, sp), val = line.substr(sp + 1);
    std::uint64_t v = 0;
    if (std::from_chars(val.data(), val.data() + val.size(), v).ec != std::errc{}) continue;
    if (key == "nr_periods") s.periods = v, periods = true;
    else if (key == "nr_throttled") s.throttled = v, throttled = true;
    else if (key == "throttled_usec" && v2_) s.throttled_us = v, time = true;
    else if (key == "throttled_time" && !v2_) s.throttled_us = v / 1000, time = true;  // ns
  }
  return periods && throttled && time;
}

void CpuThrottlingProbe::add(const Stat& g) {
  total_.periods += g.periods;
  total_.throttled += g.throttled;
  total_.throttled_us += g.throttled_us;
}

void CpuThrottlingProbe::retire(std::size_t k) {
  ::close(table_[k].stat_fd);
  table_.erase(table_.begin() + std::ptrdiff_t(k));  // within capacity: no allocation
}

void CpuThrottlingProbe::visit(int dir_fd, std::uint64_t ino) {
  const auto it = std::lower_bound(table_.begin(), table_.end(), ino,
                                   [](const Tracked& t, std::uint64_t i) { return t.ino < i; });
  if (it != table_.end() && it->ino == ino) {
    it->seen = true;
    return;
  }
  const long n = read_at(dir_fd, v2_ ? "cpu.max" : "cpu.cfs_quota_us", text_.data(), text_.size());
  if (n <= 0 || !limited(std::string_view(text_.data(), std::size_t(n)), v2_)) return;
  if (table_.size() >= kMaxCgroups) {
    ++untracked_;
    return;
  }
  const int fd = ::openat(dir_fd, "cpu.stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  Tracked t;
  t.ino = ino;
  t.stat_fd = fd;
  t.seen = true;
  if (!read_stat(fd, t.last)) {
    ::close(fd);
    return;
  }
  add(t.last);  // all it counted since its creation
  table_.insert(it, t);
}

void CpuThrottlingProbe::rescan() {
  for (Tracked& t : table_) t.seen = false;
  untracked_ = 0;
  struct Level {
    int fd;
    long pos, len;
  };
  std::array<Level, kMaxDepth> stack{};
  const int root = root_fd_.get();
  struct stat sb {};
  if (::lseek(root, 0, SEEK_SET) < 0 || ::fstat(root, &sb) != 0) return;
  visit(root, std::uint64_t(sb.st_ino));
  std::size_t depth = 1, dirs = 1;
  stack[0] = {root, 0, 0};
  bool cut = false;
  while (depth > 0) {
    Level& lv = stack[depth - 1];
    char* buf = dents_.data() + (depth - 1) * kDentsBuf;
    if (lv.pos >= lv.len) {
      const long n = ::syscall(SYS_getdents64, lv.fd, buf, kDentsBuf);
      if (n <= 0) {
        if (depth > 1) ::close(lv.fd);
        --depth;
        continue;
      }
      lv.pos = 0;
      lv.len = n;
    }
    Dirent64 d;
    std::memcpy(&d, buf + lv.pos, offsetof(Dirent64, d_name));
    const char* name = buf + lv.pos + offsetof(Dirent64, d_name);
    lv.pos += d.d_reclen > 0 ? d.d_reclen : lv.len;  // a zero length ends this buffer
    if ((d.d_type != kDtDir && d.d_type != kDtUnknown) || std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0)
      continue;
    if (depth >= kMaxDepth || dirs >= kMaxScanDirs) {
      cut = true;
      if (dirs >= kMaxScanDirs) break;
      continue;
    }
    const int fd = ::openat(lv.fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    ++dirs;
    visit(fd, d.d_ino);
    stack[depth++] = {fd, 0, 0};
  }
  for (std::size_t k = 1; k < depth; ++k) ::close(stack[k].fd);
  if (cut) {
    ++truncated_;
    return;  // a partial walk retires nothing: what it did not reach may still be there
  }
  for (std::size_t k = table_.size(); k-- > 0;)
    if (!table_[k].seen) retire(k);
}

void CpuThrottlingProbe::sample(std::span<double> out) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_scan_ >= rescan_) {
    rescan();
    last_scan_ = now;
  }
  for (std::size_t k = table_.size(); k-- > 0;) {
    Tracked& t = table_[k];
    Stat s;
    if (!read_stat(t.stat_fd, s)) {  // removed (ENODEV) or unreadable: its counts stay
      retire(k);
      continue;
    }
    // Growth since the last read; a counter that went backwards starts again from 0.
    add({s.periods >= t.last.periods ? s.periods - t.last.periods : s.periods,
         s.throttled >= t.last.throttled ? s.throttled - t.last.throttled : s.throttled,
         s.throttled_us >= t.last.throttled_us ? s.throttled_us - t.last.throttled_us : s.throttled_us});
    t.last = s;
  }
  if (out.size() < 4) return;
  out[0] = double(total_.throttled);
  out[1] = double(total_.throttled_us);
  out[2] = double(total_.periods);
  out[3] = double(table_.size());
}

}  // namespace reveal::telemetry
