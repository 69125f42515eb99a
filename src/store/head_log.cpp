#include "store/head_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include "reveal/store.h"

namespace reveal::store {
namespace {
constexpr std::size_t kFixedWords = 3;  // seq, t, n_channels << 1 | keyframe
constexpr std::uint64_t kKeyframe = 1;

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw StoreError(path + ": " + what); }

std::size_t bitmap_words(std::size_t n_channels) { return (n_channels + 63) / 64; }

// Multiply-xorshift over 64-bit words (not cryptographic; detects torn and damaged records).
std::uint64_t check_of(const std::uint64_t* w, std::size_t n) {
  std::uint64_t h = 0x243f6a8885a308d3ull ^ n;
  for (std::size_t i = 0; i < n; ++i) {
    h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  return h;
}
}  // namespace

HeadLogWriter::~HeadLogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void HeadLogWriter::open(const std::filesystem::path& path, std::size_t n_channels) {
  path_ = path.string();
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path_, std::string("cannot create head log: ") + std::strerror(errno));
  prev_.assign(n_channels, 0);
  // word 0: u32 size in its upper half (the record starts at byte 4), word 1: check, payload.
  record_.assign(2 + kFixedWords + bitmap_words(n_channels) + n_channels, 0);
  keyframe_ = true;
}

void HeadLogWriter::append(std::uint64_t seq, std::int64_t t_unix_ns, std::span<const double> row) {
  const std::size_t nc = prev_.size();
  if (row.size() != nc) fail(path_, "sample width does not match channel count");
  std::uint64_t* payload = record_.data() + 2;
  payload[0] = seq;
  payload[1] = static_cast<std::uint64_t>(t_unix_ns);
  payload[2] = (std::uint64_t(nc) << 1) | (keyframe_ ? kKeyframe : 0);
  std::uint64_t* bitmap = payload + kFixedWords;
  std::uint64_t* words = bitmap + bitmap_words(nc);
  std::fill(bitmap, words, 0);
  std::size_t n_words = 0;
  for (std::size_t c = 0; c < nc; ++c) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(row[c]);
    const std::uint64_t x = keyframe_ ? bits : bits ^ prev_[c];
    prev_[c] = bits;
    if (x != 0) {
      bitmap[c / 64] |= std::uint64_t(1) << (c % 64);
      words[n_words++] = x;
    }
  }
  const std::size_t payload_words = kFixedWords + bitmap_words(nc) + n_words;
  record_[1] = check_of(payload, payload_words);
  const auto bytes = static_cast<std::uint32_t>(payload_words * 8);
  std::memcpy(reinterpret_cast<char*>(record_.data()) + 4, &bytes, 4);
  const char* out = reinterpret_cast<const char*>(record_.data()) + 4;
  const std::size_t total = 4 + 8 + payload_words * 8;
  ssize_t w;
  do w = ::write(fd_, out, total);
  while (w < 0 && errno == EINTR);
  if (w != static_cast<ssize_t>(total)) {
    const std::string why = w < 0 ? std::strerror(errno) : "short write";
    // A partial record would end the log for readers: cut it off so later records stay readable.
    if (w > 0) {
      const off_t end = ::lseek(fd_, 0, SEEK_END);
      if (end >= w && ::ftruncate(fd_, end - w) != 0) { /* the reader stops at the torn record */ }
    }
    fail(path_, "cannot append sample: " + why);
  }
  keyframe_ = false;
}

void HeadLogWriter::clear() {
  if (fd_ < 0) return;
  if (::ftruncate(fd_, 0) != 0) fail(path_, std::string("cannot empty head log: ") + std::strerror(errno));
  keyframe_ = true;
}

void HeadLogWriter::remove() {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

HeadSamples read_head_log(const std::filesystem::path& path, std::size_t n_channels, std::uint64_t first_seq) {
  HeadSamples out;
  out.values = Matrix(0, n_channels);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return out;
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path.string(), "cannot read head log");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::size_t nb = bitmap_words(n_channels);
  std::vector<std::uint64_t> payload(kFixedWords + nb + n_channels), prev(n_channels, 0);
  std::vector<double> row(n_channels);
  std::size_t at = 0;
  bool have_prev = false;
  std::uint64_t next_seq = 0;
  while (bytes.size() - at >= 12) {
    std::uint32_t len;
    std::uint64_t check;
    std::memcpy(&len, bytes.data() + at, 4);
    std::memcpy(&check, bytes.data() + at + 4, 8);
    if (len % 8 || len < (kFixedWords + nb) * 8 || len > payload.size() * 8 || len > bytes.size() - at - 12)
      break;  // torn tail, or not a record of this width
    const std::size_t pw = len / 8;
    std::memcpy(payload.data(), bytes.data() + at + 12, len);
    if (check_of(payload.data(), pw) != check) break;  // damaged
    if ((payload[2] >> 1) != n_channels) break;
    const bool key = (payload[2] & kKeyframe) != 0;
    const std::uint64_t* bitmap = payload.data() + kFixedWords;
    std::size_t set = 0;
    for (std::size_t i = 0; i < nb; ++i) set += static_cast<std::size_t>(std::popcount(bitmap[i]));
    if (kFixedWords + nb + set != pw) break;
    if (!key && !have_prev) break;  // a delta without its base: nothing after it can be decoded
    if (have_prev && payload[0] != next_seq) break;
    at += 12 + len;
    const std::uint64_t* words = bitmap + nb;
    std::size_t k = 0;
    for (std::size_t c = 0; c < n_channels; ++c) {
      const std::uint64_t x = (bitmap[c / 64] >> (c % 64)) & 1 ? words[k++] : 0;
      prev[c] = key ? x : prev[c] ^ x;
      row[c] = std::bit_cast<double>(prev[c]);
    }
    have_prev = true;
    next_seq = payload[0] + 1;
    if (payload[0] < first_seq) continue;  // already committed to a chunk
    out.t_unix_ns.push_back(static_cast<std::int64_t>(payload[1]));
    out.values.append_row(row);
  }
  return out;
}

}  // namespace reveal::store
