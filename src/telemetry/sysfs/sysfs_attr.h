// Helpers shared by the /sys probes: SysfsAttr, a reader for one small sysfs attribute file,
// and the directory walking / index naming every sysfs probe uses.
//
// SysfsAttr contract (a sibling of FileReader, for one-value files):
//  * open(path) opens O_RDONLY|O_CLOEXEC and does NOT read: some attributes exist but fail
//    their read for a while (net speed/carrier return EINVAL while a link is down) and must
//    work once they can be read. Returns 0 or the errno of open(2) (ENOENT, EACCES, ...).
//  * read() pread()s from offset 0 into a fixed inline buffer of kCapacity bytes and returns
//    the trimmed content, or nullopt this tick when: the read failed (EINVAL, ENODEV from a
//    removed device, EIO from a faulty sensor), the content filled the buffer, or a regular
//    (fixture) file was unlinked. After EINVAL (an attribute that cannot answer now: speed
//    or carrier of a down link) the fd is kept, and the next pread on it reads the value
//    once the kernel has one. After any other failure the fd is closed and the next read()
//    reopens the path (open(2) only) that the given one resolved to at open (realpath: through
//    the class symlinks to the device's own directory), so that a hwmonN number the kernel
//    gave to another chip after this one's device went away is never read as this one (chips
//    without a parent device and thermal zones sit under /sys/devices/virtual, numbered: not
//    covered). read() never allocates. A failure is counted on
//    the reading thread (file_reader.h note_read_failure(): the probe's
//    reveal_probe_errors_total) unless the attribute is gone (ENOENT, ENODEV, ESRCH) or
//    cannot answer in its device's present state by design (EINVAL, EPERM, ENODATA, EAGAIN,
//    EOPNOTSUPP: sysfs_attr.cpp failed()); errno is left as the read set it.
//  * File descriptors: an attribute keeps its fd open while the process-wide count of kept
//    SysfsAttr fds is under half the RLIMIT_NOFILE soft limit; past that budget, attributes
//    open, pread and close on every read() (3 syscalls instead of 1), so that thousands of
//    attributes (cpuidle on many CPUs, net on hosts with many veths) never exhaust the
//    descriptors other probes (perf) need.
// Why not FileReader: its open() fails when the first read fails (see above), and it keeps
// >= 4 KiB per file, while these probes open thousands of one-value files on large hosts
// (cpuidle: CPUs x states x 2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/file_reader.h"

namespace reveal::telemetry {

// A temperature below it (°C) is no reading: firmware answering garbage (hwmon, thermal zones).
inline constexpr double kAbsoluteZeroCelsius = -273.15;

class SysfsAttr {
 public:
  static constexpr std::size_t kCapacity = 64;  // sysfs numbers and enum words are far shorter

  SysfsAttr() = default;
  SysfsAttr(SysfsAttr&&) noexcept = default;
  SysfsAttr& operator=(SysfsAttr&&) noexcept = default;

  // 0 on success, else errno of open(2). Allocates (keeps the path for reopening).
  int open(const std::filesystem::path& path);
  // Trimmed content, or nullopt (see contract above). Never allocates.
  std::optional<std::string_view> read();
  // The content as a decimal integer (signed or up to 2^64-1) divided by `divisor`;
  // NaN when unreadable or not a whole integer. Never allocates.
  double read_number(double divisor = 1);

  const std::string& path() const { return path_; }  // as resolved at open
  // Whether this attribute keeps its fd between reads (see the fd budget above).
  bool keeps_fd() const { return slot_.held; }

 private:
  // One unit of the process-wide budget of kept fds; released on destruction.
  struct Slot {
    bool held = false;
    Slot() = default;
    Slot(Slot&& o) noexcept : held(o.held) { o.held = false; }
    Slot& operator=(Slot&& o) noexcept {
      if (this != &o) {
        release();
        held = o.held;
        o.held = false;
      }
      return *this;
    }
    ~Slot() { release(); }
    bool acquire();
    void release();
  };

  bool reopen();
  static std::optional<std::string_view> failed(int err);
  std::string path_;
  Slot slot_;
  UniqueFd fd_;
  bool check_unlinked_ = false;  // regular files (fixtures): detect unlink via fstat
  char buf_[kCapacity] = {};
};

// Parses a decimal integer token (optionally negative); nullopt if malformed.
std::optional<double> parse_integer(std::string_view tok);

// Whole small text file (a sysfs "name", "type", "*_label"), trimmed; nullopt if unreadable.
// Allocates: use at open() only.
std::optional<std::string> read_text(const std::filesystem::path& path);

// Entries of `dir` named <prefix><N> (N decimal), as {N, name}, ascending by N. Symlinks are
// followed (sysfs class directories hold symlinks), and when `dirs_only` only entries that
// are (or point to) directories are kept. Missing or unreadable dir: empty.
struct NumberedEntry {
  std::uint64_t number;
  std::string name;
};
std::vector<NumberedEntry> numbered_entries(const std::filesystem::path& dir,
                                            std::string_view prefix, bool dirs_only = true);

// An index part from free text (labels, chip names): every character outside
// [A-Za-z0-9_+-] becomes '_' (spaces, and '.' which separates index parts); empty -> "_".
std::string sanitize_index(std::string_view text);

// Makes every string unique: each value that occurs more than once gets "_<k>" appended,
// k = 0, 1, ... in order of appearance (e.g. two "coretemp" -> "coretemp_0", "coretemp_1").
void make_unique_names(std::vector<std::string>& names);

}  // namespace reveal::telemetry
