#include "telemetry/file_reader.h"
#include "util/utf8.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <system_error>

namespace reveal::telemetry {
namespace {
constexpr long kProcSuperMagic = 0x9fa0;
constexpr long kSysfsMagic = 0x62656572;
constexpr long kCgroup2Magic = 0x63677270;  // cgroup v2 (kernfs, like sysfs)
constexpr long kCgroupMagic = 0x27e0eb;     // cgroup v1 hierarchies (kernfs)

thread_local std::uint64_t t_read_failures = 0;

// A read that failed because its file is gone (the node, cgroup or process removed) is the
// host changing, not a failure; anything else is counted.
void count_failure(int err) {
  if (err != ENOENT && err != ENODEV && err != ESRCH) ++t_read_failures;
}

int open_ro(const std::filesystem::path& p) {
  int fd;
  // O_NONBLOCK: a FIFO or device planted where a /proc file should be must not hang us.
  do fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // /proc and /sys files are regular
    ::close(fd);
    errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    return -1;
  }
  return fd;
}

// Reads from offset 0 until EOF or `cap` bytes; returns bytes read or -1 (errno set). With
// `short_is_eof`, a read returning less than asked for ends it (one seq_file record).
ssize_t pread_all(int fd, char* buf, std::size_t cap, bool short_is_eof = false) {
  std::size_t n = 0;
  while (n < cap) {
    ssize_t r = ::pread(fd, buf + n, cap - n, static_cast<off_t>(n));
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) break;
    n += static_cast<std::size_t>(r);
    if (short_is_eof && n < cap) break;
  }
  return static_cast<ssize_t>(n);
}
}  // namespace

std::uint64_t read_failures_on_this_thread() { return t_read_failures; }
void note_read_failure() { ++t_read_failures; }

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

bool FileReader::open(const std::filesystem::path& path, std::string* error, std::size_t min_capacity) {
  min_capacity = std::max<std::size_t>(min_capacity, 64);
  path_ = path;
  fd_.reset(open_ro(path));
  if (!fd_) {
    if (error) *error = path.string() + ": " + errno_message(errno);
    return false;
  }
  struct statfs sfs {};
  // Kernel files need no unlink check: a removed /sys node or cgroup fails its next read
  // (ENODEV), and /proc files vanish with their process the same way. Only other files
  // (fixture trees) keep their content after unlink, so only they pay an fstat per read.
  check_unlinked_ = ::fstatfs(fd_.get(), &sfs) == 0 && sfs.f_type != kProcSuperMagic && sfs.f_type != kSysfsMagic &&
                    sfs.f_type != kCgroup2Magic && sfs.f_type != kCgroupMagic;
  // Size the buffer from one full read (procfs reports st_size 0, so read to learn it).
  std::size_t cap = min_capacity;
  for (;;) {
    auto buf = std::make_unique<char[]>(cap);
    ssize_t n = pread_all(fd_.get(), buf.get(), cap);
    if (n < 0) {
      if (error) *error = path.string() + ": " + errno_message(errno);
      fd_.reset();
      return false;
    }
    if (static_cast<std::size_t>(n) < cap) {
      const std::size_t want = std::max(min_capacity, 2 * static_cast<std::size_t>(n));
      if (want != cap) buf = std::make_unique<char[]>(want);
      buf_ = std::move(buf);
      cap_ = want;
      return true;
    }
    if (cap >= kMaxCapacity) {  // no /proc or /sys file we read is this large
      if (error) *error = path.string() + ": larger than " + std::to_string(kMaxCapacity >> 20) + " MiB, not a kernel statistics file";
      fd_.reset();
      return false;
    }
    cap *= 4;
  }
}

bool FileReader::reopen() {
  if (path_.empty() || !buf_) {  // never opened: nothing to count as a failure
    errno = ENOENT;
    return false;
  }
  fd_.reset(open_ro(path_));
  return static_cast<bool>(fd_);
}

std::optional<std::string_view> FileReader::read() {
  if (!fd_ && !reopen()) {
    count_failure(errno);
    return std::nullopt;
  }
  if (check_unlinked_) {
    // A regular file keeps its content after unlink; treat unlink/replace as "gone".
    struct stat st {};
    if (::fstat(fd_.get(), &st) != 0 || st.st_nlink == 0) {
      fd_.reset();
      if (!reopen()) {
        count_failure(errno);
        return std::nullopt;
      }
    }
  }
  ssize_t n = pread_all(fd_.get(), buf_.get(), cap_, single_record_);
  // Content that fills the buffer may be truncated: the buffer grows 4x, up to kMaxCapacity,
  // and the file is read again at once (a file that outgrew its size at open: a node's pods
  // adding interfaces to /proc/net/dev, volumes attached adding disks to /proc/diskstats).
  while (n >= 0 && static_cast<std::size_t>(n) >= cap_ && cap_ < kMaxCapacity) {
    cap_ = std::min(cap_ * 4, kMaxCapacity);
    buf_ = std::make_unique<char[]>(cap_);
    n = pread_all(fd_.get(), buf_.get(), cap_, single_record_);
  }
  if (n < 0) {
    count_failure(errno);
    fd_.reset();  // e.g. ENODEV from a removed sysfs node: reopen next tick
    return std::nullopt;
  }
  if (static_cast<std::size_t>(n) >= cap_) {  // over kMaxCapacity, may be truncated: a gap this tick
    ++t_read_failures;
    return std::nullopt;
  }
  return std::string_view(buf_.get(), static_cast<std::size_t>(n));
}

std::size_t KeyIndex::add(std::string_view key, std::size_t slot, std::size_t count) {
  Entry e;
  e.key_offset = static_cast<std::uint32_t>(keys_.size());
  e.key_size = static_cast<std::uint32_t>(key.size());
  e.slot = static_cast<std::uint32_t>(slot);
  e.count = static_cast<std::uint32_t>(count);
  keys_.append(key);
  entries_.push_back(e);
  return entries_.size() - 1;
}

std::size_t KeyIndex::find(std::string_view key) {
  const std::size_t n = entries_.size();
  if (n == 0) return npos;
  if (next_ >= n) next_ = 0;
  for (std::size_t k = 0, i = next_; k < n; ++k, i = (i + 1 == n ? 0 : i + 1)) {
    const Entry& e = entries_[i];
    if (e.key_size == key.size() &&
        (key.empty() || std::memcmp(keys_.data() + e.key_offset, key.data(), key.size()) == 0)) {
      next_ = i + 1;
      return i;
    }
  }
  return npos;
}

std::string channel_name(std::string_view source, std::string_view field, std::string_view index) {
  std::string s;
  s.reserve(source.size() + field.size() + index.size() + 2);
  s.append(source).append(":").append(field);
  if (!index.empty()) s.append(".").append(index);
  return escape_invalid_utf8(s);
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  text = trim(text);
  if (text.empty()) return cpus;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
    auto dash = part.find('-');
    auto lo = parse_u64(part.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : parse_u64(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi > 1u << 20) return std::nullopt;
    for (auto c = *lo; c <= *hi; ++c) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

std::string errno_message(int err) { return std::generic_category().message(err); }

}  // namespace reveal::telemetry
