#include "telemetry/procfs/net_dev.h"

#include <sys/utsname.h>

#include <array>
#include <cmath>
#include <string>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "proc.net.dev";
constexpr std::array<std::string_view, 16> kColumns{
    "rx_bytes",      "rx_packets",   "rx_errs",    "rx_drop",      "rx_fifo", "rx_frame",
    "rx_compressed", "rx_multicast", "tx_bytes",   "tx_packets",   "tx_errs", "tx_drop",
    "tx_fifo",       "tx_colls",     "tx_carrier", "tx_compressed"};

std::string_view unit_of(std::string_view col) {
  if (col.ends_with("_bytes")) return "bytes";
  if (col.ends_with("_packets")) return "packets";
  return "count";
}

// "  eth0: 1 2 3" -> iface "eth0", rest " 1 2 3"; false for header lines. The name ends at the
// last ':' (the counters hold none): alias names such as "bond0:1" or "eth0:backup" keep theirs.
bool split_iface(std::string_view line, std::string_view& iface, std::string_view& rest) {
  const auto colon = line.rfind(':');
  if (colon == std::string_view::npos) return false;
  iface = trim(line.substr(0, colon));
  rest = line.substr(colon + 1);
  return !iface.empty() && iface.find('|') == std::string_view::npos;
}
// The counters' width: 32 on a 32-bit kernel (see net_dev.h), else 64.
int counter_bits_of(const std::filesystem::path& root) {
  std::string arch;
  FileReader f;
  if (f.open(root / "proc/sys/kernel/arch")) {
    if (auto text = f.read()) arch = std::string(trim(*text));
  } else if (root == "/") {
    struct utsname u;
    if (::uname(&u) == 0) arch = u.machine;
  }
  static constexpr std::array<std::string_view, 9> k32{"i386", "i486", "i586", "i686", "arm", "mips", "ppc", "sparc", "riscv32"};
  // armv7l, armv6l, mips, mipsel, ppc (not ppc64), sparc (not sparc64), i?86, riscv32
  for (std::string_view a : k32)
    if (arch.starts_with(a) && arch.find("64") == std::string::npos && arch != "armv8l" && !arch.starts_with("aarch"))
      return 32;
  return 64;
}
}  // namespace

ProbeStatus ProcNetDevProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  ifaces_ = {};
  std::string err;
  if (!file_.open(root / "proc/net/dev", &err)) return {false, err};
  const auto bits = std::uint8_t(counter_bits_of(root));
  auto text = file_.read();
  if (!text) return {false, file_.path().string() + ": unreadable or too large"};
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view iface, values;
    if (!split_iface(next_line(rest), iface, values)) continue;
    std::size_t n = 0;
    while (n < kColumns.size() && parse_u64(next_token(values))) ++n;
    if (n == 0) continue;
    ifaces_.add(std::string(iface), channels_.size(), n);
    for (std::size_t c = 0; c < n; ++c)
      channels_.push_back({channel_name(kSource, kColumns[c], iface),
                           std::string(unit_of(kColumns[c])), Kind::counter, Subsystem::network, bits,
                           "/proc/net/dev " + std::string(kColumns[c])});
  }
  if (channels_.empty()) return {false, file_.path().string() + ": no interfaces"};
  return {true, {}};
}

void ProcNetDevProbe::sample(std::span<double> out) {
  for (double& v : out) v = std::nan("");
  auto text = file_.read();
  if (!text) return;
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view iface, values;
    if (!split_iface(next_line(rest), iface, values)) continue;
    const std::size_t i = ifaces_.find(iface);
    if (i == KeyIndex::npos) continue;
    const auto& e = ifaces_[i];
    for (std::size_t c = 0; c < e.count; ++c) out[e.slot + c] = next_u64_as_double(values);
  }
}

}  // namespace reveal::telemetry
