#include "telemetry/sysfs/sysfs_attr.h"

#include "telemetry/file_reader.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <system_error>

namespace reveal::telemetry {
namespace {
constexpr long kSysfsMagic = 0x62656572;

std::atomic<long> g_kept_fds{0};  // SysfsAttr fds kept open, process-wide

long kept_fd_budget() {
  struct rlimit r {};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 256;
  if (r.rlim_cur == RLIM_INFINITY || r.rlim_cur > (1u << 22)) return 1L << 21;
  return static_cast<long>(r.rlim_cur / 2);
}

int open_ro(const char* p) {
  int fd;
  do fd = ::open(p, O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  return fd;
}
}  // namespace

bool SysfsAttr::Slot::acquire() {
  if (held) return true;
  const long budget = kept_fd_budget();
  long n = g_kept_fds.load(std::memory_order_relaxed);
  while (n < budget)
    if (g_kept_fds.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) return held = true;
  return false;
}

void SysfsAttr::Slot::release() {
  if (held) g_kept_fds.fetch_sub(1, std::memory_order_relaxed);
  held = false;
}

int SysfsAttr::open(const std::filesystem::path& path) {
  path_ = path.string();
  fd_.reset(open_ro(path_.c_str()));
  if (!fd_) {
    const int err = errno;
    slot_.release();
    return err;
  }
  // Reopened by the path the class symlinks led to at open (/sys/class/hwmon/hwmon1 ->
  // /sys/devices/.../nvme0/hwmon/hwmon1): the kernel gives a freed hwmonN number to the next
  // chip that registers (ida_alloc), so the class path may come back naming another chip,
  // while the device path is gone with its device. (Chips without a parent device and thermal
  // zones live under /sys/devices/virtual/<class>/<name>N: their number stays in the path.)
  if (char* real = ::realpath(path_.c_str(), nullptr)) {
    path_ = real;
    std::free(real);
  }
  struct statfs sfs {};
  check_unlinked_ = ::fstatfs(fd_.get(), &sfs) == 0 && sfs.f_type != kSysfsMagic;
  if (!slot_.acquire()) fd_.reset();  // over the budget: open on every read
  return 0;
}

// A read that gave nothing: counted on the reading thread (telemetry/file_reader.h
// note_read_failure(), the probe's reveal_probe_errors_total) unless the attribute is gone
// (ENOENT, ENODEV, ESRCH: a device removed) or cannot answer in the state its device is in by
// design (EINVAL: a down link's speed or carrier; EPERM: amdgpu's sensors while the GPU is
// runtime-suspended; ENODATA, EAGAIN: a thermal zone whose firmware is not running, iwlwifi;
// EOPNOTSUPP): those would count every tick on a healthy host. EIO, EACCES and the rest are
// counted. errno is kept.
std::optional<std::string_view> SysfsAttr::failed(int e) {
  switch (e) {
    case ENOENT: case ENODEV: case ESRCH:  // gone
    case EINVAL: case EPERM: case ENODATA: case EAGAIN: case EOPNOTSUPP:  // not now, by design
      break;
    default:
      note_read_failure();
  }
  errno = e;
  return std::nullopt;
}

bool SysfsAttr::reopen() {
  if (path_.empty()) {
    errno = ENOENT;  // never opened
    return false;
  }
  fd_.reset(open_ro(path_.c_str()));
  return static_cast<bool>(fd_);
}

std::optional<std::string_view> SysfsAttr::read() {
  if (!fd_ && !reopen()) return failed(errno);
  if (check_unlinked_) {
    struct stat st {};
    if (::fstat(fd_.get(), &st) != 0 || st.st_nlink == 0) {
      fd_.reset();
      if (!reopen()) return failed(errno);
    }
  }
  ssize_t n;
  do n = ::pread(fd_.get(), buf_, kCapacity, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    // EINVAL: the attribute exists but cannot answer now (speed or carrier of a link that is
    // down); the same fd answers once it can, as every pread runs the kernel's show() anew,
    // so keep it: no open(2) per tick for each down link. Anything else (ENODEV: the device
    // is gone; EIO) may mean a stale fd: close it and reopen the path at the next read.
    const int e = errno;
    if (e != EINVAL || !slot_.held) fd_.reset();
    return failed(e);
  }
  if (!slot_.held) fd_.reset();
  if (static_cast<std::size_t>(n) >= kCapacity) {  // not a one-value file
    note_read_failure();
    return std::nullopt;
  }
  return trim(std::string_view(buf_, static_cast<std::size_t>(n)));
}

std::optional<double> parse_integer(std::string_view tok) {
  if (!tok.empty() && tok.front() == '-') {
    auto v = parse_i64(tok);
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
  }
  auto v = parse_u64(tok);
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

double SysfsAttr::read_number(double divisor) {
  auto text = read();
  auto v = text ? parse_integer(*text) : std::nullopt;
  return v ? *v / divisor : std::nan("");
}

std::optional<std::string> read_text(const std::filesystem::path& path) {
  FileReader f;
  if (!f.open(path)) return std::nullopt;
  auto text = f.read();
  if (!text) return std::nullopt;
  return std::string(trim(*text));
}

std::vector<NumberedEntry> numbered_entries(const std::filesystem::path& dir,
                                            std::string_view prefix, bool dirs_only) {
  std::vector<NumberedEntry> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    auto n = parse_u64(std::string_view(name).substr(prefix.size()));
    if (!n) continue;
    std::error_code sec;
    if (dirs_only && !it->is_directory(sec)) continue;  // follows symlinks
    out.push_back({*n, std::move(name)});
  }
  std::sort(out.begin(), out.end(),
            [](const NumberedEntry& a, const NumberedEntry& b) { return a.number < b.number; });
  return out;
}

std::string sanitize_index(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '+' || c == '-';
    if (!ok) c = '_';
  }
  if (s.empty()) s = "_";
  return s;
}

void make_unique_names(std::vector<std::string>& names) {
  std::map<std::string, int> count;
  for (const auto& n : names) ++count[n];
  std::set<std::string> used(names.begin(), names.end());
  std::map<std::string, int> next;
  for (auto& n : names) {
    if (count[n] < 2) continue;
    int& k = next[n];
    std::string cand;
    do cand = n + "_" + std::to_string(k++);
    while (used.count(cand));
    used.insert(cand);
    n = std::move(cand);
  }
}

}  // namespace reveal::telemetry
