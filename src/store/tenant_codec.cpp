#include "store/tenant_codec.h"

#include <zstd.h>

#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>

namespace reveal::store {
namespace {

[[noreturn]] void bad(const std::string& what) { throw std::runtime_error("tenant scan: " + what); }

constexpr std::size_t kCounters = 4;
// Each entry takes at least one byte per column: its id delta and its four counters.
constexpr std::size_t kMinEntryBytes = 1 + kCounters;

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

// Reads one varint at `at` (advanced past it); throws if it runs past the end or past 64 bits.
std::uint64_t get_varint(std::span<const std::uint8_t> in, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= in.size()) bad("payload is truncated");
    const std::uint8_t b = in[at++];
    if (shift == 63 && b > 1) bad("varint overflows 64 bits");
    v |= std::uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  bad("varint overflows 64 bits");
}

std::uint64_t counter_code(double v) {
  // NaN fails both comparisons; 9.2e18 < 2^63, so llround cannot overflow.
  if (!(v >= -0.5) || !(v < 9.2e18)) return 0;
  return static_cast<std::uint64_t>(std::llround(v)) + 1;
}

double counter_value(std::uint64_t code) {
  return code == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(code - 1);
}

double TenantCounters::*const kColumns[kCounters] = {&TenantCounters::cpu_usage_us, &TenantCounters::cpu_some_us,
                                                      &TenantCounters::memory_some_us, &TenantCounters::io_some_us};
}  // namespace

TenantCodec::TenantCodec() : cctx_(ZSTD_createCCtx()), dctx_(ZSTD_createDCtx()) {
  if (!cctx_ || !dctx_) {
    ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_));
    ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_));
    throw std::bad_alloc();
  }
}

TenantCodec::~TenantCodec() {
  ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_));
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_));
}

void TenantCodec::encode(const TenantScan& scan, int level, std::vector<char>& out) {
  const std::size_t n = scan.ids.size();
  if (scan.counters.size() != n) throw std::invalid_argument("tenant scan: ids and counters differ in length");
  payload_.clear();
  payload_.push_back(kTenantBlobVersion);
  put_varint(payload_, n);
  std::int64_t prev = 0;
  for (const std::uint32_t id : scan.ids) {
    if (id >= kTenantMaxIds) throw std::invalid_argument("tenant scan: id " + std::to_string(id) + " is too large");
    const std::int64_t d = std::int64_t{id} - prev;
    put_varint(payload_, (static_cast<std::uint64_t>(d) << 1) ^ static_cast<std::uint64_t>(d >> 63));  // zigzag
    prev = id;
  }
  for (const auto column : kColumns)
    for (const auto& c : scan.counters) put_varint(payload_, counter_code(c.*column));
  out.resize(ZSTD_compressBound(payload_.size()));
  const std::size_t z = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(cctx_), out.data(), out.size(), payload_.data(),
                                          payload_.size(), level);
  if (ZSTD_isError(z)) throw std::runtime_error(std::string("tenant scan: zstd: ") + ZSTD_getErrorName(z));
  out.resize(z);
}

void TenantCodec::decode(std::span<const char> blob, TenantScan& out) {
  const unsigned long long size = ZSTD_getFrameContentSize(blob.data(), blob.size());
  if (size == ZSTD_CONTENTSIZE_ERROR) bad("not a zstd frame");
  if (size == ZSTD_CONTENTSIZE_UNKNOWN) bad("zstd frame without a content size");
  if (size > kTenantMaxPayload) bad("frame claims " + std::to_string(size) + " bytes, over the 64 MiB bound");
  payload_.resize(static_cast<std::size_t>(size));
  // One-shot decompression into a buffer of the declared size: a frame (or a run of frames)
  // holding more than it declares fails with dstSize_tooSmall instead of growing anything.
  const std::size_t got =
      ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(dctx_), payload_.data(), payload_.size(), blob.data(), blob.size());
  if (ZSTD_isError(got)) bad(std::string("zstd: ") + ZSTD_getErrorName(got));
  if (got != size) bad("frame does not decode to its declared size");
  const std::span<const std::uint8_t> in(payload_.data(), payload_.size());
  std::size_t at = 0;
  if (in.empty()) bad("payload is empty");
  if (in[at] != kTenantBlobVersion) bad("unknown version " + std::to_string(in[at]));
  ++at;
  const std::uint64_t n = get_varint(in, at);
  if (n > (in.size() - at) / kMinEntryBytes) bad("claims " + std::to_string(n) + " entries, more than its bytes hold");
  out.ids.resize(static_cast<std::size_t>(n));
  out.counters.resize(static_cast<std::size_t>(n));
  std::int64_t prev = 0;
  for (auto& id : out.ids) {
    const std::uint64_t z = get_varint(in, at);
    const std::uint64_t mag = z >> 1;  // |delta| or |delta| - 1 (negative); compared before any arithmetic
    if (mag >= kTenantMaxIds) bad("id out of range");
    const std::int64_t d = (z & 1) ? -static_cast<std::int64_t>(mag) - 1 : static_cast<std::int64_t>(mag);
    const std::int64_t v = prev + d;
    if (v < 0 || v >= std::int64_t{kTenantMaxIds}) bad("id out of range");
    id = static_cast<std::uint32_t>(v);
    prev = v;
  }
  for (const auto column : kColumns)
    for (auto& c : out.counters) c.*column = counter_value(get_varint(in, at));
  if (at != in.size()) bad("payload has " + std::to_string(in.size() - at) + " bytes after its entries");
}

}  // namespace reveal::store
