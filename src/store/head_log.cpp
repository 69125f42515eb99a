#include "store/head_log.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include "reveal/store.h"

namespace reveal::store {
namespace {
constexpr std::size_t kRecordHeaderWords = 3;  // seq, t, flags
constexpr std::uint64_t kKeyframe = 1;
constexpr int kLevel = 1;

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw StoreError(path + ": " + what); }
}  // namespace

HeadLogWriter::~HeadLogWriter() {
  if (fd_ >= 0) ::close(fd_);
  ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_));
}

void HeadLogWriter::open(const std::filesystem::path& path, std::size_t n_channels) {
  path_ = path.string();
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path_, std::string("cannot create head log: ") + std::strerror(errno));
  auto* cctx = ZSTD_createCCtx();
  cctx_ = cctx;
  if (!cctx || ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kLevel)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)))
    fail(path_, "cannot set up zstd");
  prev_.assign(n_channels, 0);
  record_.assign(kRecordHeaderWords + n_channels, 0);
  out_.assign(4 + ZSTD_compressBound(record_.size() * 8), 0);
  keyframe_ = true;
}

void HeadLogWriter::append(std::uint64_t seq, std::int64_t t_unix_ns, std::span<const double> row) {
  if (row.size() != prev_.size()) fail(path_, "sample width does not match channel count");
  record_[0] = seq;
  record_[1] = static_cast<std::uint64_t>(t_unix_ns);
  record_[2] = keyframe_ ? kKeyframe : 0;
  for (std::size_t c = 0; c < row.size(); ++c) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(row[c]);
    record_[kRecordHeaderWords + c] = keyframe_ ? bits : bits ^ prev_[c];
    prev_[c] = bits;
  }
  const std::size_t n = ZSTD_compress2(static_cast<ZSTD_CCtx*>(cctx_), out_.data() + 4, out_.size() - 4,
                                       record_.data(), record_.size() * 8);
  if (ZSTD_isError(n)) fail(path_, std::string("zstd: ") + ZSTD_getErrorName(n));
  const auto len = static_cast<std::uint32_t>(n);
  std::memcpy(out_.data(), &len, 4);
  const std::size_t total = n + 4;
  ssize_t w;
  do w = ::write(fd_, out_.data(), total);
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
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> guard(dctx, ZSTD_freeDCtx);
  std::vector<std::uint64_t> record(kRecordHeaderWords + n_channels), prev(n_channels, 0);
  std::vector<double> row(n_channels);
  std::size_t at = 0;
  bool have_prev = false;
  std::uint64_t next_seq = 0;
  while (bytes.size() - at >= 4) {
    std::uint32_t len;
    std::memcpy(&len, bytes.data() + at, 4);
    if (len > bytes.size() - at - 4) break;  // torn tail
    const std::size_t n = ZSTD_decompressDCtx(dctx, record.data(), record.size() * 8, bytes.data() + at + 4, len);
    if (ZSTD_isError(n) || n != record.size() * 8) break;  // damaged (checksum) or another width
    at += 4 + len;
    const bool key = (record[2] & kKeyframe) != 0;
    if (!key && !have_prev) break;  // a delta without its base: nothing after it can be decoded
    if (have_prev && record[0] != next_seq) break;
    for (std::size_t c = 0; c < n_channels; ++c) {
      const std::uint64_t bits = key ? record[kRecordHeaderWords + c] : record[kRecordHeaderWords + c] ^ prev[c];
      prev[c] = bits;
      row[c] = std::bit_cast<double>(bits);
    }
    have_prev = true;
    next_seq = record[0] + 1;
    if (record[0] < first_seq) continue;  // already committed to a chunk
    out.t_unix_ns.push_back(static_cast<std::int64_t>(record[1]));
    out.values.append_row(row);
  }
  return out;
}

}  // namespace reveal::store
