#include "telemetry/procfs/diskstats.h"

#include <array>
#include <cmath>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "proc.diskstats";

struct Field {
  std::string_view name, unit;
  Kind kind;
  std::string_view help;
};
constexpr std::array<Field, 17> kFields{{
    {"reads_completed", "count", Kind::counter, "reads completed successfully"},
    {"reads_merged", "count", Kind::counter, "adjacent reads merged"},
    {"sectors_read", "sectors", Kind::counter, "512-byte sectors read"},
    {"read_time_ms", "ms", Kind::counter, "time spent reading"},
    {"writes_completed", "count", Kind::counter, "writes completed successfully"},
    {"writes_merged", "count", Kind::counter, "adjacent writes merged"},
    {"sectors_written", "sectors", Kind::counter, "512-byte sectors written"},
    {"write_time_ms", "ms", Kind::counter, "time spent writing"},
    {"ios_in_progress", "count", Kind::gauge, "I/Os currently in flight"},
    {"io_time_ms", "ms", Kind::counter, "time the device had I/O in flight (busy time)"},
    {"weighted_io_time_ms", "ms", Kind::counter, "in-flight I/O count integrated over time"},
    {"discards_completed", "count", Kind::counter, "discards completed successfully"},
    {"discards_merged", "count", Kind::counter, "adjacent discards merged"},
    {"sectors_discarded", "sectors", Kind::counter, "512-byte sectors discarded"},
    {"discard_time_ms", "ms", Kind::counter, "time spent discarding"},
    {"flush_completed", "count", Kind::counter, "flush requests completed successfully"},
    {"flush_time_ms", "ms", Kind::counter, "time spent flushing"},
}};

// The 4 fields of a partition line on kernels before 2.6.25 (iostats.rst): reads issued,
// sectors read, writes issued, sectors written — kFields' entries 0, 2, 4, 6.
constexpr std::array<std::size_t, 4> kPartitionFields{0, 2, 4, 6};

bool skipped(std::string_view dev) { return dev.starts_with("loop") || dev.starts_with("ram"); }

// zram devices are compressed RAM: their I/O is swapping (or a RAM disk), memory, not storage.
Subsystem device_subsystem(std::string_view dev) {
  return dev.starts_with("zram") ? Subsystem::memory : Subsystem::storage;
}

// Splits "  254  0 vda 1 2 ..." into device name and the rest after it.
bool split_device(std::string_view line, std::string_view& dev, std::string_view& rest) {
  if (next_token(line).empty() || next_token(line).empty()) return false;
  dev = next_token(line);
  rest = line;
  return !dev.empty();
}
}  // namespace

ProbeStatus ProcDiskstatsProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  devices_ = {};
  std::string err;
  if (!file_.open(root / "proc/diskstats", &err)) return {false, err};
  auto text = file_.read();
  if (!text) return {false, file_.path().string() + ": unreadable or too large"};
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view dev, values;
    if (!split_device(next_line(rest), dev, values) || skipped(dev)) continue;
    std::size_t n = 0;
    while (n < kFields.size() && parse_u64(next_token(values))) ++n;
    if (n != kPartitionFields.size() && n < 11) continue;  // not a diskstats line we understand
    devices_.add(std::string(dev), channels_.size(), n);
    for (std::size_t k = 0; k < n; ++k) {
      const Field& f = kFields[n == kPartitionFields.size() ? kPartitionFields[k] : k];
      // The times are unsigned ints on every architecture (block/genhd.c diskstats_show prints
      // them with %u): they wrap at 2^32 ms, 49.7 days of busy time, sooner summed over
      // in-flight I/Os (weighted_io_time_ms), and their rate across the wrap is right only
      // with the width declared. The counts are unsigned longs.
      const std::uint8_t bits = f.unit == "ms" ? 32 : 64;
      channels_.push_back({channel_name(kSource, f.name, dev), std::string(f.unit), f.kind, device_subsystem(dev), bits,
                           std::string(f.help)});
    }
  }
  if (channels_.empty()) return {false, file_.path().string() + ": no block devices"};
  return {true, {}};
}

void ProcDiskstatsProbe::sample(std::span<double> out) {
  for (double& v : out) v = std::nan("");
  auto text = file_.read();
  if (!text) return;
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view dev, values;
    if (!split_device(next_line(rest), dev, values) || skipped(dev)) continue;
    const std::size_t i = devices_.find(dev);
    if (i == KeyIndex::npos) continue;
    const auto& e = devices_[i];
    for (std::size_t f = 0; f < e.count; ++f) out[e.slot + f] = next_u64_as_double(values);
  }
}

}  // namespace reveal::telemetry
