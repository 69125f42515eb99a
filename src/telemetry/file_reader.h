// Internal helpers shared by the /proc and /sys probes: an fd that is opened once and
// re-read with pread into a buffer sized at open, plus allocation-free parsing of the
// whitespace/colon separated text those files use.
//
// Contract of FileReader:
//  * open(path) opens O_RDONLY|O_CLOEXEC and reads the file once to size the buffer:
//    capacity = max(4 KiB (or the caller's smaller minimum), 2 × size seen). It allocates;
//    read() only when a file outgrew its buffer (below).
//  * read() re-reads from offset 0 and returns the whole content as a view into the
//    buffer, or nullopt when the content is unavailable this tick: the file vanished,
//    pread failed, or the content filled the buffer (possibly truncated). The caller
//    turns nullopt into NaN for every channel taken from the file; a failure other than the
//    file being gone is counted (read_failures_on_this_thread() above). read() allocates
//    nothing, except when content fills the buffer: it is grown 4x, up to kMaxCapacity, and
//    the file read again in the same call, so a file that outgrew its size at open (a node's
//    pods adding hundreds of interfaces to /proc/net/dev, volumes adding disks) is read whole
//    with the channels it had (at most 5 growths from 4 KiB, 8 from the 64-byte minimum, in a
//    reader's life); only content of kMaxCapacity or more is a gap, counted.
//  * A file that vanishes and comes back works again: after a failed pread, or when a
//    regular (non-procfs/sysfs) file has been unlinked or replaced, the fd is closed and
//    the next read() reopens the same path (open(2) only; the buffer is kept).
//  * System calls per read(): pread until it returns 0 (end of file), so two for a file that
//    fits. A file known to be one seq_file record — a cgroup interface file (cpu.stat,
//    memory.stat, io.stat, *.pressure: one ->seq_show each) — is returned whole by one pread
//    whenever it fits, so set_single_record(true) takes a short read as the end: one pread.
//    Not for multi-record /proc files (vmstat, net/dev, diskstats), which the kernel hands
//    out a page at a time. Kernel files (procfs, sysfs, cgroupfs) need no unlink check: a
//    removed node fails its next read (ENODEV); other files (fixtures) pay one fstat per read.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reveal::telemetry {

// Failed reads on the calling thread since it started: FileReader::read() returning nullopt
// for any reason but the file being gone (ENOENT, ENODEV, ESRCH: a removed sysfs node, cgroup
// or process), i.e. permission or I/O errors (EIO, ENODATA: a faulty sensor) and content that
// overflowed the buffer; probes that read otherwise (NVML, perf) call note_read_failure().
// The sampler compares it before and after each probe's sample() to count that probe's failed
// ticks (reveal_probe_errors_total); a plain thread-local counter, so nothing is allocated or
// locked per read.
std::uint64_t read_failures_on_this_thread();
void note_read_failure();

// Owns one file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

class FileReader {
 public:
  static constexpr std::size_t kMinCapacity = 4096;
  static constexpr std::size_t kMaxCapacity = std::size_t{4} << 20;  // refuse larger files at open

  FileReader() = default;
  FileReader(FileReader&&) noexcept = default;
  FileReader& operator=(FileReader&&) noexcept = default;

  // Opens `path` and sizes the buffer. On failure returns false and, if `error` is
  // given, sets it to "<path>: <strerror>". Allocates.
  // `min_capacity` (default kMinCapacity) is the smallest buffer: a file whose size is bounded
  // by its format (a cgroup interface file's fixed keys) may ask for less than 4 KiB, which
  // matters when hundreds of cgroups keep several readers each (issue #21: 1800 × 4 KiB).
  bool open(const std::filesystem::path& path, std::string* error = nullptr,
            std::size_t min_capacity = kMinCapacity);
  // Current content, or nullopt (see contract above). Allocates only to grow the buffer.
  std::optional<std::string_view> read();

  // The file is one seq_file record (see the contract): one pread per read(). Default false.
  void set_single_record(bool single) { single_record_ = single; }

  bool is_open() const { return static_cast<bool>(fd_); }
  const std::filesystem::path& path() const { return path_; }
  std::size_t capacity() const { return cap_; }

 private:
  bool reopen();
  std::filesystem::path path_;
  UniqueFd fd_;
  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0;
  bool check_unlinked_ = false;  // regular files (fixtures): detect unlink/replace via fstat
  bool single_record_ = false;   // a short read is the whole file
};

// --- Parsing (all allocation-free; views point into the caller's text) ------------------

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Removes and returns the first line (without '\n'); `text` becomes the rest.
inline std::string_view next_line(std::string_view& text) {
  const auto nl = text.find('\n');
  std::string_view line = text.substr(0, nl);
  text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  return line;
}

inline std::string_view skip_spaces(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(i);
}

inline std::string_view trim(std::string_view s) {
  s = skip_spaces(s);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Removes and returns the next whitespace-separated token (empty at end).
inline std::string_view next_token(std::string_view& s) {
  s = skip_spaces(s);
  std::size_t i = 0;
  while (i < s.size() && !is_space(s[i])) ++i;
  std::string_view tok = s.substr(0, i);
  s.remove_prefix(i);
  return tok;
}

// Whole-token number parsers: the entire view must be the number.
inline std::optional<std::uint64_t> parse_u64(std::string_view tok) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size() || tok.empty()) return std::nullopt;
  return v;
}
inline std::optional<std::int64_t> parse_i64(std::string_view tok) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size() || tok.empty()) return std::nullopt;
  return v;
}
inline std::optional<double> parse_double(std::string_view tok) {
  double v = 0;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || p != tok.data() + tok.size() || tok.empty()) return std::nullopt;
  return v;
}

// Parses the next token as a number and converts to double; NaN if absent or malformed.
// Same result and same remaining `s` as parse_u64/parse_i64 on next_token(s), but these run
// for every value of every sample, so they scan the token once, in line, instead of
// tokenising first and calling std::from_chars (a library call per value).
namespace detail {
template <bool Signed>
inline double next_int_as_double(std::string_view& s) {
  const char* p = s.data();
  const char* const end = p + s.size();
  while (p != end && is_space(*p)) ++p;
  bool neg = false;
  if constexpr (Signed) {
    if (p != end && *p == '-') {
      neg = true;
      ++p;
    }
  }
  const char* const digits = p;
  std::uint64_t v = 0;
  bool overflow = false;
  for (; p != end; ++p) {
    const unsigned d = static_cast<unsigned char>(*p) - unsigned{'0'};
    if (d > 9) break;
    overflow |= __builtin_mul_overflow(v, std::uint64_t{10}, &v);
    overflow |= __builtin_add_overflow(v, std::uint64_t{d}, &v);
  }
  // A valid token is all digits up to the next space or the end ("12kB" is not a number).
  bool ok = p != digits && !overflow && (p == end || is_space(*p));
  while (p != end && !is_space(*p)) ++p;  // consume the rest of a malformed token
  s.remove_prefix(static_cast<std::size_t>(p - s.data()));
  if constexpr (Signed) {
    constexpr std::uint64_t kMaxPos = static_cast<std::uint64_t>(INT64_MAX);
    ok = ok && v <= kMaxPos + (neg ? 1 : 0);
    // Two's complement conversion (defined since C++20) gives INT64_MIN for -2^63 too.
    const auto x = static_cast<std::int64_t>(neg ? std::uint64_t{0} - v : v);
    return ok ? static_cast<double>(x) : std::numeric_limits<double>::quiet_NaN();
  } else {
    return ok ? static_cast<double>(v) : std::numeric_limits<double>::quiet_NaN();
  }
}
}  // namespace detail
inline double next_u64_as_double(std::string_view& s) { return detail::next_int_as_double<false>(s); }
inline double next_i64_as_double(std::string_view& s) { return detail::next_int_as_double<true>(s); }

// --- Key lookup -------------------------------------------------------------------------

// Keys established at open(), each mapped to a run of `count` channel slots starting at
// `slot`, looked up again on every sample without allocating. find() first tries the key
// after the previous hit, so a file whose lines come in the same order as at open costs
// one comparison per line; otherwise it scans all keys (a key seen only later is ignored).
// The keys lie back to back in one buffer and an entry is 16 bytes: a sample, once a second
// with cold caches, then touches a few contiguous cache lines instead of a 48-byte entry plus
// a heap block per key longer than the small-string buffer (most /proc/vmstat keys).
class KeyIndex {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  struct Entry {
    std::uint32_t key_offset = 0;  // the key is keys_[key_offset, key_offset + key_size)
    std::uint32_t key_size = 0;
    std::uint32_t slot = 0;
    std::uint32_t count = 1;
  };
  // Returns the position of the new key (0, 1, ...).
  std::size_t add(std::string_view key, std::size_t slot = 0, std::size_t count = 1);
  std::size_t find(std::string_view key);
  // The in-order case of find(next_token(line)) without tokenising first: if `line` starts
  // with the key after the previous hit, followed by whitespace or the end, removes the key
  // from `line` and returns its position; otherwise returns npos and leaves `line` alone
  // (the caller then falls back to find()).
  std::size_t match_next(std::string_view& line) {
    if (next_ >= entries_.size()) return npos;
    const Entry& e = entries_[next_];
    if (line.size() < e.key_size || (line.size() > e.key_size && !is_space(line[e.key_size])) ||
        std::memcmp(line.data(), keys_.data() + e.key_offset, e.key_size) != 0)
      return npos;
    line.remove_prefix(e.key_size);
    return next_++;
  }
  std::size_t size() const { return entries_.size(); }
  const Entry& operator[](std::size_t i) const { return entries_[i]; }
  std::string_view key(std::size_t i) const {
    return {keys_.data() + entries_[i].key_offset, entries_[i].key_size};
  }

 private:
  std::string keys_;
  std::vector<Entry> entries_;
  std::size_t next_ = 0;
};

// --- Misc --------------------------------------------------------------------------------

// "<source>:<field>" or "<source>:<field>.<index>" (see reveal/channel.h). Bytes that are not
// valid UTF-8 (an interface or disk name may hold any byte) are written as "\xNN", so every
// channel name is valid UTF-8 for JSON, Prometheus and the model file, and names stay distinct
// (util/utf8.h escape_invalid_utf8).
std::string channel_name(std::string_view source, std::string_view field,
                         std::string_view index = {});

// Parses a kernel CPU list such as "0-3,8,10-11" (sysfs .../cpu/online); nullopt if malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

// strerror(err) without the thread-safety problems of strerror().
std::string errno_message(int err);

}  // namespace reveal::telemetry
