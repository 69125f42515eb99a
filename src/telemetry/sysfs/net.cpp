#include "telemetry/sysfs/net.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <system_error>
#include <utility>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "sys.net";

// One-line meanings of the kernel's statistics files (sysfs-class-net-statistics).
constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kStatHelp{{
    {"collisions", "collisions seen on the medium (half duplex)"},
    {"multicast", "multicast packets received"},
    {"rx_bytes", "bytes received"},
    {"rx_compressed", "compressed packets received"},
    {"rx_crc_errors", "received packets with a CRC error"},
    {"rx_dropped", "received packets dropped by the kernel (no buffer, filtered)"},
    {"rx_errors", "receive errors (all kinds)"},
    {"rx_fifo_errors", "receive FIFO overruns"},
    {"rx_frame_errors", "received packets with a frame alignment error"},
    {"rx_length_errors", "received packets with a bad length"},
    {"rx_missed_errors", "packets missed by the NIC (ring full)"},
    {"rx_nohandler", "received packets dropped: no protocol handler"},
    {"rx_over_errors", "receive overruns"},
    {"rx_packets", "packets received"},
    {"tx_aborted_errors", "transmissions aborted"},
    {"tx_bytes", "bytes transmitted"},
    {"tx_carrier_errors", "transmit carrier errors"},
    {"tx_compressed", "compressed packets transmitted"},
    {"tx_dropped", "transmit packets dropped"},
    {"tx_errors", "transmit errors (all kinds)"},
    {"tx_fifo_errors", "transmit FIFO underruns"},
    {"tx_heartbeat_errors", "transmit heartbeat errors"},
    {"tx_packets", "packets transmitted"},
    {"tx_window_errors", "transmit late collisions (window errors)"},
}};

// statistics/ files whose value /proc/net/dev already gives per interface (proc.net.dev
// channels): not read again here, one pread each per tick saved.
constexpr std::array<std::string_view, 14> kInProcNetDev{
    "collisions",    "multicast",      "rx_bytes",      "rx_compressed", "rx_dropped",
    "rx_errors",     "rx_fifo_errors", "rx_packets",    "tx_bytes",      "tx_compressed",
    "tx_dropped",    "tx_errors",      "tx_fifo_errors", "tx_packets"};

bool in_proc_net_dev(std::string_view file) {
  return std::find(kInProcNetDev.begin(), kInProcNetDev.end(), file) != kInProcNetDev.end();
}

std::string stat_help(std::string_view file) {
  for (const auto& [k, h] : kStatHelp)
    if (k == file) return std::string(h) + " (statistics/" + std::string(file) + ")";
  return "interface counter statistics/" + std::string(file);
}

std::string_view stat_unit(std::string_view file) {
  if (file.ends_with("_bytes")) return "bytes";
  if (file.ends_with("_packets") || file == "multicast") return "packets";
  return "count";
}

std::vector<std::string> sorted_files(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    if (it->is_regular_file(sec)) out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> interfaces(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    if (it->is_directory(sec)) out.push_back(it->path().filename().string());  // skips bonding_masters
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

double SysNetProbe::operstate_code(std::string_view word) {
  constexpr std::array<std::pair<std::string_view, double>, 7> kCodes{{{"up", 1},
                                                                       {"down", 2},
                                                                       {"testing", 3},
                                                                       {"unknown", 4},
                                                                       {"dormant", 5},
                                                                       {"notpresent", 6},
                                                                       {"lowerlayerdown", 7}}};
  for (const auto& [w, c] : kCodes)
    if (w == word) return c;
  return std::nan("");
}

ProbeStatus SysNetProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  files_.clear();
  decode_.clear();
  const auto base = root / "sys/class/net";
  std::error_code ec;
  if (!std::filesystem::is_directory(base, ec))
    return {false, base.string() + ": " + (ec ? ec.message() : "not a directory")};

  std::string first_error;
  auto add = [&](const std::filesystem::path& file, std::string field, const std::string& iface,
                 std::string unit, Kind kind, std::string help, Decode d) {
    SysfsAttr a;
    if (int err = a.open(file)) {
      if (err != ENOENT && first_error.empty()) first_error = file.string() + ": " + errno_message(err);
      return;
    }
    files_.push_back(std::move(a));
    decode_.push_back(d);
    channels_.push_back({channel_name(kSource, field, iface), std::move(unit), kind,
                         Subsystem::network, 64, std::move(help)});
  };

  for (const std::string& iface : interfaces(base)) {
    const auto dir = base / iface;
    add(dir / "carrier", "carrier", iface, "bool", Kind::state,
        "link carrier: 1 up, 0 down (NaN while the interface is admin down)", Decode::integer);
    add(dir / "mtu", "mtu", iface, "bytes", Kind::gauge, "interface MTU", Decode::integer);
    add(dir / "operstate", "operstate", iface, "state", Kind::state,
        "RFC 2863 ifOperStatus: up=1 down=2 testing=3 unknown=4 dormant=5 notPresent=6 "
        "lowerLayerDown=7",
        Decode::operstate);
    add(dir / "speed", "speed", iface, "Mb/s", Kind::gauge,
        "negotiated link speed (NaN when unknown or link down)", Decode::speed);
    for (const std::string& f : sorted_files(dir / "statistics"))
      if (!in_proc_net_dev(f))
        add(dir / "statistics" / f, f, iface, std::string(stat_unit(f)), Kind::counter, stat_help(f),
          Decode::integer);
  }
  if (channels_.empty())
    return {false, first_error.empty() ? base.string() + ": no interfaces" : first_error};
  return {true, {}};
}

void SysNetProbe::sample(std::span<double> out) {
  for (std::size_t i = 0; i < files_.size(); ++i) {
    switch (decode_[i]) {
      case Decode::integer:
        out[i] = files_[i].read_number();
        break;
      case Decode::speed: {
        const double v = files_[i].read_number();
        out[i] = (v < 0 || v >= 4294967295.0) ? std::nan("") : v;  // SPEED_UNKNOWN
        break;
      }
      case Decode::operstate: {
        auto text = files_[i].read();
        out[i] = text ? operstate_code(*text) : std::nan("");
        break;
      }
    }
  }
}

}  // namespace reveal::telemetry
