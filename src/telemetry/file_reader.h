// Internal helpers shared by the /proc and /sys probes: an fd that is opened once and
// re-read with pread into a buffer sized at open, plus allocation-free parsing of the
// whitespace/colon separated text those files use.
//
// Contract of FileReader:
//  * open(path) opens O_RDONLY|O_CLOEXEC and reads the file once to size the buffer:
//    capacity = max(4 KiB, 2 × size seen). It is the only call that allocates.
//  * read() re-reads from offset 0 and returns the whole content as a view into the
//    buffer, or nullopt when the content is unavailable this tick: the file vanished,
//    pread failed, or the content filled the buffer (possibly truncated). The caller
//    turns nullopt into NaN for every channel taken from the file. read() allocates
//    nothing, except once in the reader's life: the first time content fills the buffer
//    it is grown 4x (that tick is still a gap), so a file that outgrew its size at open
//    (many new interfaces or devices) recovers; later overflows are gaps only.
//  * A file that vanishes and comes back works again: after a failed pread, or when a
//    regular (non-procfs/sysfs) file has been unlinked or replaced, the fd is closed and
//    the next read() reopens the same path (open(2) only; the buffer is kept).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reveal::telemetry {

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
  bool open(const std::filesystem::path& path, std::string* error = nullptr);
  // Current content, or nullopt (see contract above). Never allocates.
  std::optional<std::string_view> read();

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
  bool grown_ = false;           // the one growth after open has been used
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
double next_u64_as_double(std::string_view& s);
double next_i64_as_double(std::string_view& s);

// --- Key lookup -------------------------------------------------------------------------

// Keys established at open(), each mapped to a run of `count` channel slots starting at
// `slot`, looked up again on every sample without allocating. find() first tries the key
// after the previous hit, so a file whose lines come in the same order as at open costs
// one comparison per line; otherwise it scans all keys (a key seen only later is ignored).
class KeyIndex {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  struct Entry {
    std::string key;
    std::size_t slot = 0;
    std::size_t count = 1;
  };
  // Returns the position of the new key (0, 1, ...).
  std::size_t add(std::string key, std::size_t slot = 0, std::size_t count = 1);
  std::size_t find(std::string_view key);
  std::size_t size() const { return entries_.size(); }
  const Entry& operator[](std::size_t i) const { return entries_[i]; }

 private:
  std::vector<Entry> entries_;
  std::size_t next_ = 0;
};

// --- Misc --------------------------------------------------------------------------------

// "<source>:<field>" or "<source>:<field>.<index>" (see reveal/channel.h).
std::string channel_name(std::string_view source, std::string_view field,
                         std::string_view index = {});

// Parses a kernel CPU list such as "0-3,8,10-11" (sysfs .../cpu/online); nullopt if malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

// strerror(err) without the thread-safety problems of strerror().
std::string errno_message(int err);

}  // namespace reveal::telemetry
