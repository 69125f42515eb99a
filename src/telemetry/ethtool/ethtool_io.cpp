#include "telemetry/ethtool/ethtool_io.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace reveal::telemetry {
namespace {

class SystemEthtoolIo final : public EthtoolIo {
 public:
  ~SystemEthtoolIo() override { close(); }

  int open() override {
    if (fd_ >= 0) return 0;
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);  // no IPv4 in this kernel
    if (fd < 0) return -errno;
    fd_ = fd;
    return 0;
  }
  void close() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  int ifindex(const char* ifname) override {
    ifreq ifr;
    if (int e = request(ifname, SIOCGIFINDEX, nullptr, ifr)) return e;
    return ifr.ifr_ifindex;
  }

  int gstrings(const char* ifname, std::vector<std::string>& names) override {
    names.clear();
    for (int attempt = 0; attempt < 3; ++attempt) {
      const int n = stats_count(ifname);
      if (n < 0) return n;
      // Same slack as EthtoolStatsBuffer: the kernel writes its current count of strings.
      constexpr std::size_t kSlack = 64;
      std::vector<std::uint64_t> words(
          (sizeof(ethtool_gstrings) + (n + kSlack) * ETH_GSTRING_LEN + 7) / 8, 0);
      ethtool_gstrings hdr{};
      hdr.cmd = ETHTOOL_GSTRINGS;
      hdr.string_set = ETH_SS_STATS;
      hdr.len = static_cast<std::uint32_t>(n);
      std::memcpy(words.data(), &hdr, sizeof hdr);
      if (int e = ethtool(ifname, words.data())) return e;
      std::memcpy(&hdr, words.data(), sizeof hdr);
      if (hdr.len != static_cast<std::uint32_t>(n)) continue;  // the set changed meanwhile
      const char* text = reinterpret_cast<const char*>(words.data()) + sizeof(ethtool_gstrings);
      names.reserve(n);
      for (int i = 0; i < n; ++i) {
        const char* s = text + static_cast<std::size_t>(i) * ETH_GSTRING_LEN;
        names.emplace_back(s, ::strnlen(s, ETH_GSTRING_LEN));  // not NUL-terminated when full
      }
      return 0;
    }
    return -EAGAIN;
  }

  int gstats(const char* ifname, EthtoolStatsBuffer& buf) override {
    const int n = stats_count(ifname);
    if (n < 0 || static_cast<std::size_t>(n) != buf.size()) return n;
    const std::span<std::uint64_t> raw = buf.raw();
    ethtool_stats hdr{};
    hdr.cmd = ETHTOOL_GSTATS;
    hdr.n_stats = static_cast<std::uint32_t>(n);
    std::memcpy(raw.data(), &hdr, sizeof hdr);
    if (int e = ethtool(ifname, raw.data())) return e;
    std::memcpy(&hdr, raw.data(), sizeof hdr);
    return static_cast<int>(hdr.n_stats);
  }

 private:
  // ifr_name from `ifname` (truncated to IFNAMSIZ - 1 like the kernel's own limit), then
  // ioctl(cmd). 0, or -errno. Retries EINTR. No allocation: the ifreq is on the stack.
  int request(const char* ifname, unsigned long cmd, void* data, ifreq& ifr) {
    if (fd_ < 0) return -EBADF;
    std::memset(&ifr, 0, sizeof ifr);
    std::strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
    ifr.ifr_data = static_cast<char*>(data);
    int r;
    do r = ::ioctl(fd_, cmd, &ifr);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -errno : 0;
  }
  int ethtool(const char* ifname, void* arg) {
    ifreq ifr;
    return request(ifname, SIOCETHTOOL, arg, ifr);
  }
  // ETH_SS_STATS count (GSSET_INFO), or -errno; -EOPNOTSUPP when the driver has no such set.
  int stats_count(const char* ifname) {
    // struct ethtool_sset_info {u32 cmd; u32 reserved; u64 sset_mask; u32 data[];}: one set
    // asked, so one u32 count follows the header.
    std::uint64_t words[(sizeof(ethtool_sset_info) + sizeof(std::uint32_t) + 7) / 8] = {};
    ethtool_sset_info hdr{};
    hdr.cmd = ETHTOOL_GSSET_INFO;
    hdr.sset_mask = 1ULL << ETH_SS_STATS;
    std::memcpy(words, &hdr, sizeof hdr);
    if (int e = ethtool(ifname, words)) return e;
    std::memcpy(&hdr, words, sizeof hdr);
    if (!(hdr.sset_mask & (1ULL << ETH_SS_STATS))) return -EOPNOTSUPP;
    std::uint32_t count = 0;
    std::memcpy(&count, reinterpret_cast<const char*>(words) + sizeof hdr, sizeof count);
    if (count > (1u << 20)) return -E2BIG;  // not a count any driver has
    return static_cast<int>(count);
  }

  int fd_ = -1;
};

}  // namespace

std::unique_ptr<EthtoolIo> make_system_ethtool_io() { return std::make_unique<SystemEthtoolIo>(); }

}  // namespace reveal::telemetry
