// Column-chunk codec of store schema v2 (format in include/reveal/store.h): a run of samples
// kept as one compressed block per group of channels, so that a reader decodes only the
// channel groups and time chunks it asks for.
//
// Encoding of one chunk of n samples × nc channels (values row-major, as sampled):
//   columns blob = header, then one zstd frame per group of kGroupChannels channels:
//     u32 n_samples, u32 n_channels, u32 group_channels, u32 n_groups,
//     u32 frame_bytes[n_groups], frame[0], frame[1], ...            (all little-endian)
//   frame g = zstd( shuffle( xor( channels [g·G, min(nc, (g+1)·G)) , column-major ) ) )
//     xor:     per channel, w[0] = bits(v[0]) and w[i] = bits(v[i]) XOR bits(v[i−1]), the
//              64-bit IEEE-754 patterns (Gorilla, Pelkonen et al., VLDB 2015, §4.1.2): a value
//              that did not change is 0 and a slowly moving one keeps its high bytes 0. NaN
//              gaps, infinities and −0 round-trip bit for bit.
//     shuffle: the frame's m words as 8 byte planes, plane b = byte b of every word (as
//              Blosc's shuffle filter), so those zero bytes form long runs for zstd.
//   times blob = zstd( i64 t[0], then t[i] − t[i−1] ) in nanoseconds.
// Errors: decode_* throw std::runtime_error with a one-line reason (the caller adds the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace reveal::store {

inline constexpr std::size_t kGroupChannels = 64;

// Reusable buffers and zstd contexts for encoding/decoding chunks (one per writer/reader).
class ChunkCodec {
 public:
  ChunkCodec();
  ~ChunkCodec();
  ChunkCodec(const ChunkCodec&) = delete;
  ChunkCodec& operator=(const ChunkCodec&) = delete;

  // n samples of nc channels, `rows` row-major (n·nc values). `out` is replaced.
  void encode_columns(std::span<const double> rows, std::size_t n, std::size_t nc, int level,
                      std::vector<char>& out);
  void encode_times(std::span<const std::int64_t> t, int level, std::vector<char>& out);

  // Checks, allocating nothing, that a chunk's blobs hold n samples of nc channels: the times
  // blob is one zstd frame declaring n·8 bytes, the columns blob's header matches n and nc,
  // its frames lie inside it and each declares the bytes of its group's n samples. Throws
  // std::runtime_error otherwise. (Run before sizing anything by n: a row's n_samples is the
  // file's claim; the frames' declared sizes are checked again as they decode.)
  static void check_sizes(std::span<const char> times, std::span<const char> columns, std::size_t n,
                          std::size_t nc);
  // Decodes the groups holding the channels flagged in `wanted` (size nc; empty = all) into
  // `dest`, row-major with row stride `stride` (>= nc) starting at dest[0]; channels not
  // decoded are left untouched. Checks the header against n and nc.
  void decode_columns(std::span<const char> blob, std::size_t n, std::size_t nc,
                      std::span<const std::uint8_t> wanted, double* dest, std::size_t stride);
  // The channel count a columns blob's header declares (std::runtime_error when truncated).
  static std::size_t columns_in(std::span<const char> blob);
  // Appends n timestamps to `out`.
  void decode_times(std::span<const char> blob, std::size_t n, std::vector<std::int64_t>& out);

 private:
  void* cctx_ = nullptr;  // ZSTD_CCtx*
  void* dctx_ = nullptr;  // ZSTD_DCtx*
  std::vector<std::uint64_t> words_;
  std::vector<std::uint8_t> planes_;
};

}  // namespace reveal::store
