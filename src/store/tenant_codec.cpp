#include "store/tenant_codec.h"

#include <zstd.h>

#include <algorithm>
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
// An entry without a reference in the previous scan (written absolute).
constexpr std::uint32_t kNoRef = std::numeric_limits<std::uint32_t>::max();

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

// Zigzag of a difference taken mod 2^64: any two codes give a delta that round-trips.
std::uint64_t zigzag(std::uint64_t d) { return (d << 1) ^ (0 - (d >> 63)); }
std::uint64_t unzigzag(std::uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

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

// ref[i] = the index in `prev` of entry i's reference (tenant_codec.h): i when prev[i] is the
// same id, else the first entry of prev with that id, else kNoRef. Encoder and decoder share it.
void match_refs(std::span<const std::uint32_t> prev, std::span<const std::uint32_t> ids, std::vector<std::uint32_t>& ref,
                std::vector<std::uint64_t>& sorted) {
  ref.resize(ids.size());
  bool built = false;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i < prev.size() && prev[i] == ids[i]) {
      ref[i] = static_cast<std::uint32_t>(i);
      continue;
    }
    if (!built) {  // only when the id lists differ (a cgroup came or went)
      sorted.resize(prev.size());
      for (std::size_t j = 0; j < prev.size(); ++j) sorted[j] = std::uint64_t{prev[j]} << 32 | j;
      std::sort(sorted.begin(), sorted.end());
      built = true;
    }
    const auto it = std::lower_bound(sorted.begin(), sorted.end(), std::uint64_t{ids[i]} << 32);
    ref[i] = it != sorted.end() && (*it >> 32) == ids[i] ? static_cast<std::uint32_t>(*it) : kNoRef;
  }
}

// Appends the scan's id deltas (checked against kTenantMaxIds).
void put_ids(std::vector<std::uint8_t>& out, const TenantScan& scan) {
  std::int64_t prev = 0;
  for (const std::uint32_t id : scan.ids) {
    if (id >= kTenantMaxIds) throw std::invalid_argument("tenant scan: id " + std::to_string(id) + " is too large");
    put_varint(out, zigzag(static_cast<std::uint64_t>(std::int64_t{id} - prev)));
    prev = id;
  }
}

void get_ids(std::span<const std::uint8_t> in, std::size_t& at, std::vector<std::uint32_t>& ids) {
  std::int64_t prev = 0;
  for (auto& id : ids) {
    const std::uint64_t z = get_varint(in, at);
    const std::uint64_t mag = z >> 1;  // |delta| or |delta| - 1 (negative); compared before any arithmetic
    if (mag >= kTenantMaxIds) bad("id out of range");
    const std::int64_t d = (z & 1) ? -static_cast<std::int64_t>(mag) - 1 : static_cast<std::int64_t>(mag);
    const std::int64_t v = prev + d;
    if (v < 0 || v >= std::int64_t{kTenantMaxIds}) bad("id out of range");
    id = static_cast<std::uint32_t>(v);
    prev = v;
  }
}

// Reads an entry count and sizes the scan to it, refusing counts the bytes left cannot hold.
void get_count(std::span<const std::uint8_t> in, std::size_t& at, TenantScan& scan) {
  const std::uint64_t n = get_varint(in, at);
  if (n > (in.size() - at) / kMinEntryBytes) bad("claims " + std::to_string(n) + " entries, more than its bytes hold");
  scan.ids.resize(static_cast<std::size_t>(n));
  scan.counters.resize(static_cast<std::size_t>(n));
}
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

void TenantCodec::compress(int level, std::vector<char>& out) {
  out.resize(ZSTD_compressBound(payload_.size()));
  const std::size_t z = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(cctx_), out.data(), out.size(), payload_.data(),
                                          payload_.size(), level);
  if (ZSTD_isError(z)) throw std::runtime_error(std::string("tenant scan: zstd: ") + ZSTD_getErrorName(z));
  out.resize(z);
}

void TenantCodec::encode_v1(const TenantScan& scan, int level, std::vector<char>& out) {
  const std::size_t n = scan.ids.size();
  if (scan.counters.size() != n) throw std::invalid_argument("tenant scan: ids and counters differ in length");
  payload_.clear();
  payload_.push_back(kTenantBlobVersion1);
  put_varint(payload_, n);
  put_ids(payload_, scan);
  for (const auto column : kColumns)
    for (const auto& c : scan.counters) put_varint(payload_, counter_code(c.*column));
  compress(level, out);
}

void TenantCodec::encode_row(std::span<const TenantScan> scans, int level, std::vector<char>& out) {
  if (scans.empty() || scans.size() > kTenantMaxScansPerRow)
    throw std::invalid_argument("tenant scan: a row holds 1 to " + std::to_string(kTenantMaxScansPerRow) + " scans, not " +
                                std::to_string(scans.size()));
  payload_.clear();
  payload_.push_back(kTenantBlobVersion);
  put_varint(payload_, scans.size());
  for (std::size_t k = 0; k < scans.size(); ++k) {
    const TenantScan& scan = scans[k];
    const std::size_t n = scan.ids.size();
    if (scan.counters.size() != n) throw std::invalid_argument("tenant scan: ids and counters differ in length");
    if (k > 0) {
      if (scan.t_unix_ns < scans[k - 1].t_unix_ns)
        throw std::invalid_argument("tenant scan: scans of a row are not in time order");
      put_varint(payload_, static_cast<std::uint64_t>(scan.t_unix_ns) - static_cast<std::uint64_t>(scans[k - 1].t_unix_ns));
    }
    put_varint(payload_, n);
    put_ids(payload_, scan);
    codes_.resize(kCounters * n);
    for (std::size_t c = 0; c < kCounters; ++c)
      for (std::size_t i = 0; i < n; ++i) codes_[c * n + i] = counter_code(scan.counters[i].*kColumns[c]);
    const std::span<const std::uint32_t> prev_ids =
        k > 0 ? std::span<const std::uint32_t>(scans[k - 1].ids) : std::span<const std::uint32_t>();
    match_refs(prev_ids, scan.ids, ref_, sorted_prev_);
    const std::size_t np = prev_ids.size();
    for (std::size_t c = 0; c < kCounters; ++c)
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t code = codes_[c * n + i];
        put_varint(payload_, ref_[i] == kNoRef ? code : zigzag(code - prev_codes_[c * np + ref_[i]]));
      }
    codes_.swap(prev_codes_);
  }
  compress(level, out);
}

void TenantCodec::decode_row(std::span<const char> blob, std::int64_t t_first, std::vector<TenantScan>& out) {
  const std::size_t old = out.size();
  try {
    const unsigned long long size = ZSTD_getFrameContentSize(blob.data(), blob.size());
    if (size == ZSTD_CONTENTSIZE_ERROR) bad("not a zstd frame");
    if (size == ZSTD_CONTENTSIZE_UNKNOWN) bad("zstd frame without a content size");
    if (size > kTenantMaxPayload) bad("frame claims " + std::to_string(size) + " bytes, over the 64 MiB bound");
    if (size > kTenantRatioSlack + kTenantMaxRatio * blob.size())
      bad("frame claims " + std::to_string(size) + " bytes from " + std::to_string(blob.size()) +
          " compressed, more than a row compresses");
    payload_.resize(static_cast<std::size_t>(size));
    // One-shot decompression into a buffer of the declared size: a frame (or a run of frames)
    // holding more than it declares fails with dstSize_tooSmall instead of growing anything.
    const std::size_t got = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(dctx_), payload_.data(), payload_.size(),
                                                blob.data(), blob.size());
    if (ZSTD_isError(got)) bad(std::string("zstd: ") + ZSTD_getErrorName(got));
    if (got != size) bad("frame does not decode to its declared size");
    decode_payload(t_first, out);
  } catch (...) {
    out.resize(old);  // a corrupt row adds nothing
    throw;
  }
}

void TenantCodec::decode_payload(std::int64_t t_first, std::vector<TenantScan>& out) {
  const std::span<const std::uint8_t> in(payload_.data(), payload_.size());
  std::size_t at = 0;
  if (in.empty()) bad("payload is empty");
  const std::uint8_t version = in[at++];
  const std::size_t base = out.size();
  if (version == kTenantBlobVersion1) {
    out.resize(base + 1);
    TenantScan& scan = out[base];
    scan.t_unix_ns = t_first;
    get_count(in, at, scan);
    get_ids(in, at, scan.ids);
    for (const auto column : kColumns)
      for (auto& c : scan.counters) c.*column = counter_value(get_varint(in, at));
  } else if (version == kTenantBlobVersion) {
    const std::uint64_t n_scans = get_varint(in, at);
    // Every scan holds at least its entry count: a byte.
    if (n_scans == 0 || n_scans > kTenantMaxScansPerRow || n_scans > in.size() - at)
      bad("claims " + std::to_string(n_scans) + " scans");
    out.resize(base + static_cast<std::size_t>(n_scans));  // stable references from here on
    std::int64_t t = t_first;
    for (std::size_t k = 0; k < n_scans; ++k) {
      TenantScan& scan = out[base + k];
      if (k > 0) {
        const std::uint64_t dt = get_varint(in, at);
        // t + dt <= INT64_MAX, computed without overflow (the difference fits in 64 bits unsigned)
        if (dt > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - static_cast<std::uint64_t>(t))
          bad("scan time overflows");
        t = static_cast<std::int64_t>(static_cast<std::uint64_t>(t) + dt);
      }
      scan.t_unix_ns = t;
      get_count(in, at, scan);
      const std::size_t n = scan.ids.size();
      get_ids(in, at, scan.ids);
      const std::span<const std::uint32_t> prev_ids =
          k > 0 ? std::span<const std::uint32_t>(out[base + k - 1].ids) : std::span<const std::uint32_t>();
      match_refs(prev_ids, scan.ids, ref_, sorted_prev_);
      const std::size_t np = prev_ids.size();
      codes_.resize(kCounters * n);
      for (std::size_t c = 0; c < kCounters; ++c)
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint64_t v = get_varint(in, at);
          const std::uint64_t code = ref_[i] == kNoRef ? v : prev_codes_[c * np + ref_[i]] + unzigzag(v);
          codes_[c * n + i] = code;
          scan.counters[i].*kColumns[c] = counter_value(code);
        }
      codes_.swap(prev_codes_);
    }
  } else {
    bad("unknown version " + std::to_string(version));
  }
  if (at != in.size()) bad("payload has " + std::to_string(in.size() - at) + " bytes after its entries");
}

}  // namespace reveal::store
