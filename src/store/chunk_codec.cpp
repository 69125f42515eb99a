#include "store/chunk_codec.h"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

namespace reveal::store {
namespace {
static_assert(std::endian::native == std::endian::little, "store format assumes little-endian");

constexpr std::size_t kHeaderWords = 4;  // n_samples, n_channels, group_channels, n_groups

[[noreturn]] void bad(const std::string& what) { throw std::runtime_error(what); }

void put_u32(std::vector<char>& out, std::size_t at, std::uint32_t v) { std::memcpy(out.data() + at, &v, 4); }
std::uint32_t get_u32(std::span<const char> in, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, in.data() + at, 4);
  return v;
}

// Appends zstd(src) to out.
void compress_into(ZSTD_CCtx* cctx, const void* src, std::size_t bytes, int level, std::vector<char>& out) {
  const std::size_t at = out.size();
  out.resize(at + ZSTD_compressBound(bytes));
  const std::size_t n = ZSTD_compressCCtx(cctx, out.data() + at, out.size() - at, src, bytes, level);
  if (ZSTD_isError(n)) bad(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(at + n);
}

void decompress_exact(ZSTD_DCtx* dctx, std::span<const char> frame, void* dst, std::size_t bytes,
                      const char* what) {
  const std::size_t n = ZSTD_decompressDCtx(dctx, dst, bytes, frame.data(), frame.size());
  if (ZSTD_isError(n) || n != bytes) bad(std::string(what) + " does not decode to the expected size");
}
}  // namespace

ChunkCodec::ChunkCodec() : cctx_(ZSTD_createCCtx()), dctx_(ZSTD_createDCtx()) {
  if (!cctx_ || !dctx_) throw std::bad_alloc();
}

ChunkCodec::~ChunkCodec() {
  ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_));
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_));
}

void ChunkCodec::encode_columns(std::span<const double> rows, std::size_t n, std::size_t nc, int level,
                                std::vector<char>& out) {
  if (rows.size() != n * nc) bad("chunk: row data does not match samples × channels");
  const std::size_t groups = (nc + kGroupChannels - 1) / kGroupChannels;
  out.assign((kHeaderWords + groups) * 4, 0);
  put_u32(out, 0, static_cast<std::uint32_t>(n));
  put_u32(out, 4, static_cast<std::uint32_t>(nc));
  put_u32(out, 8, static_cast<std::uint32_t>(kGroupChannels));
  put_u32(out, 12, static_cast<std::uint32_t>(groups));
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t c0 = g * kGroupChannels, c1 = std::min(nc, c0 + kGroupChannels);
    const std::size_t m = (c1 - c0) * n;
    words_.resize(m);
    for (std::size_t c = c0; c < c1; ++c) {  // XOR with the channel's previous value
      std::uint64_t prev = 0;
      std::uint64_t* w = words_.data() + (c - c0) * n;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t bits = std::bit_cast<std::uint64_t>(rows[i * nc + c]);
        w[i] = bits ^ prev;
        prev = bits;
      }
    }
    planes_.resize(m * 8);
    for (std::size_t k = 0; k < m; ++k) {  // byte planes
      const std::uint64_t w = words_[k];
      for (std::size_t b = 0; b < 8; ++b) planes_[b * m + k] = static_cast<std::uint8_t>(w >> (8 * b));
    }
    const std::size_t before = out.size();
    compress_into(static_cast<ZSTD_CCtx*>(cctx_), planes_.data(), planes_.size(), level, out);
    put_u32(out, (kHeaderWords + g) * 4, static_cast<std::uint32_t>(out.size() - before));
  }
}

void ChunkCodec::encode_times(std::span<const std::int64_t> t, int level, std::vector<char>& out) {
  words_.resize(t.size());
  for (std::size_t i = 0; i < t.size(); ++i)
    words_[i] = static_cast<std::uint64_t>(t[i]) - (i ? static_cast<std::uint64_t>(t[i - 1]) : 0);  // wraps, never UB
  out.clear();
  compress_into(static_cast<ZSTD_CCtx*>(cctx_), words_.data(), words_.size() * 8, level, out);
}

namespace {
// Checks a columns blob's header against n samples of nc channels, then calls
// fn(c0, c1, frame) for each channel group [c0, c1) and its zstd frame, in order.
template <class Fn>
void walk_frames(std::span<const char> blob, std::size_t n, std::size_t nc, Fn&& fn) {
  if (blob.size() < kHeaderWords * 4) bad("chunk header is truncated");
  const std::size_t groups = (nc + kGroupChannels - 1) / kGroupChannels;
  if (get_u32(blob, 0) != n || get_u32(blob, 4) != nc || get_u32(blob, 8) != kGroupChannels ||
      get_u32(blob, 12) != groups)
    bad("chunk header does not match its samples and channels");
  if (blob.size() < (kHeaderWords + groups) * 4) bad("chunk header is truncated");
  std::size_t at = (kHeaderWords + groups) * 4;
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t bytes = get_u32(blob, (kHeaderWords + g) * 4);
    if (bytes > blob.size() - at) bad("chunk frame runs past the end of its blob");
    const std::size_t c0 = g * kGroupChannels, c1 = std::min(nc, c0 + kGroupChannels);
    fn(c0, c1, blob.subspan(at, bytes));
    at += bytes;
  }
}
}  // namespace

void ChunkCodec::check_sizes(std::span<const char> times, std::span<const char> columns, std::size_t n,
                             std::size_t nc) {
  const auto declares = [](std::span<const char> frame, std::size_t bytes, const char* what) {
    const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
      bad(std::string(what) + " is not a zstd frame with its size");
    if (size != bytes)
      bad(std::string(what) + " holds " + std::to_string(size) + " bytes, not the " + std::to_string(bytes) +
          " of its samples");
  };
  declares(times, n * 8, "chunk times");
  walk_frames(columns, n, nc, [&](std::size_t c0, std::size_t c1, std::span<const char> frame) {
    declares(frame, (c1 - c0) * n * 8, "chunk frame");
  });
}

void ChunkCodec::decode_columns(std::span<const char> blob, std::size_t n, std::size_t nc,
                                std::span<const std::uint8_t> wanted, double* dest, std::size_t stride) {
  walk_frames(blob, n, nc, [&](std::size_t c0, std::size_t c1, std::span<const char> frame) {
    const bool need = wanted.empty() || std::any_of(wanted.begin() + c0, wanted.begin() + c1, [](std::uint8_t w) { return w != 0; });
    if (need) {
      const std::size_t m = (c1 - c0) * n;
      planes_.resize(m * 8);
      decompress_exact(static_cast<ZSTD_DCtx*>(dctx_), frame, planes_.data(), m * 8, "chunk frame");
      // Un-shuffle plane by plane (sequential, vectorisable), then undo the XOR per channel.
      words_.assign(m, 0);
      for (std::size_t b = 0; b < 8; ++b) {
        const std::uint8_t* plane = planes_.data() + b * m;
        for (std::size_t k = 0; k < m; ++k) words_[k] |= std::uint64_t(plane[k]) << (8 * b);
      }
      for (std::size_t c = c0; c < c1; ++c) {
        if (!wanted.empty() && !wanted[c]) continue;
        std::uint64_t prev = 0;
        const std::uint64_t* w = words_.data() + (c - c0) * n;
        for (std::size_t i = 0; i < n; ++i) {
          prev ^= w[i];
          dest[i * stride + c] = std::bit_cast<double>(prev);
        }
      }
    }
  });
}

std::size_t ChunkCodec::columns_in(std::span<const char> blob) {
  if (blob.size() < kHeaderWords * 4) bad("chunk header is truncated");
  return get_u32(blob, 4);
}

void ChunkCodec::decode_times(std::span<const char> blob, std::size_t n, std::vector<std::int64_t>& out) {
  words_.resize(n);
  decompress_exact(static_cast<ZSTD_DCtx*>(dctx_), blob, words_.data(), n * 8, "chunk times");
  std::uint64_t t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    t += words_[i];  // modular, the inverse of encode_times
    out.push_back(static_cast<std::int64_t>(t));
  }
}

}  // namespace reveal::store
