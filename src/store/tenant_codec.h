// Tenant scan codec: one TenantScan (reveal/recording.h) as the `data` blob of a tenant_scans
// row (format summary in include/reveal/store.h). Each blob stands alone: no scan refers to
// another, so retention may delete any of them and a corrupt one spoils only itself.
//
// blob = zstd( payload ), the frame carrying its content size; payload (varint = unsigned LEB128,
// at most 10 bytes):
//   u8 version (= kTenantBlobVersion)
//   varint n                                  -- entries
//   n × varint zigzag(id[i] − id[i−1])        -- id[−1] = 0; sorted ids give 1-byte deltas
//   n × varint code(cpu_usage_us)             -- then the same for cpu_some_us, memory_some_us,
//   n × varint code(cpu_some_us), ...            io_some_us: one column per counter
//   code(v) = 0 for NaN, else round(v) + 1. Counters are whole microseconds: a value is rounded
//   to the nearest integer, and one that cannot be (negative, infinite, >= 9.2e18) is written
//   as NaN.
// Columns keep like bytes together (the id deltas, the zero-pressure cgroups) for zstd.
// Errors: decode throws std::runtime_error with a one-line reason (the caller adds the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "reveal/recording.h"

namespace reveal::store {

inline constexpr std::uint8_t kTenantBlobVersion = 1;
// Ids are below this (16 M cgroups); a blob naming a larger one is corrupt.
inline constexpr std::uint32_t kTenantMaxIds = 1u << 24;
// A frame whose content size exceeds this is refused before anything is allocated.
inline constexpr std::size_t kTenantMaxPayload = std::size_t{64} << 20;

// Reusable zstd contexts and buffers (one per writer/reader).
class TenantCodec {
 public:
  TenantCodec();
  ~TenantCodec();
  TenantCodec(const TenantCodec&) = delete;
  TenantCodec& operator=(const TenantCodec&) = delete;

  // scan.ids and scan.counters must be parallel and every id < kTenantMaxIds (else
  // std::invalid_argument). `out` is replaced; t_unix_ns is not encoded (a column of its own).
  void encode(const TenantScan& scan, int level, std::vector<char>& out);
  // Replaces out.ids and out.counters (t_unix_ns is left alone). Throws std::runtime_error for a
  // bad frame, a frame over kTenantMaxPayload, another version, a truncated or over-long
  // payload, an over-long varint or an id >= kTenantMaxIds. Allocates at most the frame's
  // content size plus the entries it really holds.
  void decode(std::span<const char> blob, TenantScan& out);

 private:
  void* cctx_ = nullptr;  // ZSTD_CCtx*
  void* dctx_ = nullptr;  // ZSTD_DCtx*
  std::vector<std::uint8_t> payload_;
};

}  // namespace reveal::store
