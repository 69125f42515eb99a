// Tenant scan codec: the `data` blob of a tenant_scans row (format summary in
// include/reveal/store.h). A row holds a batch of consecutive scans (the writer puts
// kTenantScansPerRow = 12 in one, a minute at one scan per 5 s); each row stands alone: no row
// refers to another, so retention may delete any of them and a corrupt one spoils only its own
// scans.
//
// blob = zstd( payload ), the frame carrying its content size; varint = unsigned LEB128 (at most
// 10 bytes), zigzag(d) = (d << 1) ^ (d >> 63).
//
// Version 2 (written since tenant scans are batched): one row = n_scans scans, in time order.
//   u8 version (= kTenantBlobVersion = 2)
//   varint n_scans                            -- 1 .. kTenantMaxScansPerRow
//   then per scan k = 0 .. n_scans-1:
//     varint t[k] - t[k-1] (ns, >= 0)         -- only for k > 0; t[0] is the row's t_unix_ns
//     varint n                                -- entries
//     n × varint zigzag(id[i] − id[i−1])      -- id[−1] = 0; sorted ids give 1-byte deltas
//     4 columns (cpu_usage_us, cpu_some_us, memory_some_us, io_some_us), n varints each:
//       code(v) when k = 0 or the entry has no reference, else zigzag(code(v) − code(ref))
//       (mod 2^64), where ref is the same id's entry in scan k−1: entry i of scan k−1 when it has
//       the same id, else the first entry of scan k−1 with that id. A cgroup that appeared in
//       scan k has none and is written absolute: no flag is stored, the decoder knows which ids
//       scan k−1 held. A steady or idle cgroup's counters cost one byte each; a counter that
//       went down (a cgroup removed and created again) gives a negative delta.
//   code(v) = 0 for NaN, else round(v) + 1. Counters are whole microseconds: a value is rounded
//   to the nearest integer, and one that cannot be (negative, infinite, >= 9.2e18) is written
//   as NaN. NaN -> NaN is a delta of 0.
// Version 1 (the first stores; still read): one scan per row, the same fields as scan 0 of a
// version 2 row without n_scans: u8 1, varint n, the n id deltas, the 4 columns of code(v).
// Columns keep like bytes together (the id deltas, the zero deltas of idle cgroups) for zstd,
// which also finds each scan's id list again in the previous scan's.
//
// Size, 200 cgroups, bytes per scan in rows of 12 (tests/store/tenant_store_test.cpp
// ScansOf200CgroupsStaySmall; a row's first scan: usage log-uniform in 1e9..1e12 us, stall
// totals up to 1e9 us; then every 5 s a busy cgroup's usage grows by a random 0..2e7 us (up to
// 4 cores) and each stall total by 0..2e5 us, an idle cgroup's do not change):
//   all busy  2440 (as version 1 rows: 3666); the random increments alone hold 1.9 KB a scan
//   half idle 1483 (2813)
//   all idle   170 (2012)
// On disk, page-rounded (bench/tenants/scan_cost.cpp on the 198-cgroup fixture, 120 scans):
// 375 bytes per scan with the fixture's counters unchanged, 2492 with them advancing as "busy"
// above; 4130 as version 1 rows (one SQLite page and more each).
//
// Errors: decode throws std::runtime_error with a one-line reason (the caller adds the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "reveal/recording.h"

namespace reveal::store {

inline constexpr std::uint8_t kTenantBlobVersion1 = 1;  // one scan per row (read only)
inline constexpr std::uint8_t kTenantBlobVersion = 2;   // a batch of scans per row (written)
// Ids are below this (16 M cgroups); a blob naming a larger one is corrupt.
inline constexpr std::uint32_t kTenantMaxIds = 1u << 24;
// A frame whose content size exceeds this is refused before anything is allocated.
inline constexpr std::size_t kTenantMaxPayload = std::size_t{64} << 20;
// A frame whose content size exceeds kTenantMaxRatio x its compressed bytes + kTenantRatioSlack
// is refused too (a zstd bomb: tiny blobs of zeros that decode to millions of entries each).
// Real rows compress about 2-8x (the sizes below: 2440 bytes a scan busy, 170 idle, against
// some 1-4 kB of payload a scan); a row past the bound loses its scans like any corrupt row.
inline constexpr std::size_t kTenantMaxRatio = 256;
inline constexpr std::size_t kTenantRatioSlack = std::size_t{64} << 10;
// A version 2 row claiming more scans than this is corrupt (the writer puts 12 in one).
inline constexpr std::size_t kTenantMaxScansPerRow = 4096;

// Reusable zstd contexts and buffers (one per writer/reader).
class TenantCodec {
 public:
  TenantCodec();
  ~TenantCodec();
  TenantCodec(const TenantCodec&) = delete;
  TenantCodec& operator=(const TenantCodec&) = delete;

  // One version 2 row of `scans` (1 .. kTenantMaxScansPerRow, stamped in non-decreasing time
  // order; scans[0].t_unix_ns is not encoded, it is the row's t_unix_ns column). Each scan's ids
  // and counters must be parallel and every id < kTenantMaxIds. Else std::invalid_argument.
  // `out` is replaced.
  void encode_row(std::span<const TenantScan> scans, int level, std::vector<char>& out);
  // One version 1 row (one scan), the format before batching: the writer no longer writes it;
  // kept so that tests can make the rows of older stores.
  void encode_v1(const TenantScan& scan, int level, std::vector<char>& out);
  // Appends the scans of a row of either version to `out`, the first stamped t_first. Throws
  // std::runtime_error, leaving `out` as it was, for a bad frame, a frame over
  // kTenantMaxPayload or over the ratio bound above, another version, a scan count of 0 or over kTenantMaxScansPerRow, a
  // truncated or over-long payload, an over-long varint, an entry count larger than the bytes
  // left can hold, an id >= kTenantMaxIds or a scan time past 2^63 ns. Allocates at most the
  // frame's content size plus the scans and entries it really holds.
  void decode_row(std::span<const char> blob, std::int64_t t_first, std::vector<TenantScan>& out);

 private:
  void compress(int level, std::vector<char>& out);
  void decode_payload(std::int64_t t_first, std::vector<TenantScan>& out);
  void* cctx_ = nullptr;  // ZSTD_CCtx*
  void* dctx_ = nullptr;  // ZSTD_DCtx*
  std::vector<std::uint8_t> payload_;
  std::vector<std::uint64_t> codes_, prev_codes_;  // 4 columns × n of the scan and the one before
  std::vector<std::uint32_t> ref_;                  // per entry: index of its reference in scan k−1
  std::vector<std::uint64_t> sorted_prev_;          // (id << 32 | index) of scan k−1, sorted
};

}  // namespace reveal::store
