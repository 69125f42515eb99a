#include "telemetry/sysfs/net.h"

#include <linux/if.h>  // IFF_UP, IF_OPER_*

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

double SysNetProbe::if_oper_code(std::uint8_t if_oper) {
  switch (if_oper) {  // the RFC 2863 codes of operstate_code() for the same states
    case IF_OPER_UP: return 1;
    case IF_OPER_DOWN: return 2;
    case IF_OPER_TESTING: return 3;
    case IF_OPER_UNKNOWN: return 4;
    case IF_OPER_DORMANT: return 5;
    case IF_OPER_NOTPRESENT: return 6;
    case IF_OPER_LOWERLAYERDOWN: return 7;
    default: return std::nan("");
  }
}

SysNetProbe::SysNetProbe(Path path) {
  if (path == Path::automatic) rtnl_ = std::make_unique<RtnlLinkDumper>();
}

SysNetProbe::SysNetProbe(RtnlIo& io) : rtnl_(std::make_unique<RtnlLinkDumper>(io)), check_live_(false) {}

SysNetProbe::~SysNetProbe() = default;

ProbeStatus SysNetProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  sysfs_.clear();
  nl_reads_.clear();
  links_.clear();
  by_ifindex_.clear();
  sysfs_only_reason_.clear();
  if (rtnl_) rtnl_->close();
  const auto base = root / "sys/class/net";
  std::error_code ec;
  if (!std::filesystem::is_directory(base, ec))
    return {false, base.string() + ": " + (ec ? ec.message() : "not a directory")};

  const std::vector<std::string> ifaces = interfaces(base);
  std::vector<Found> found;  // one per sysfs_ entry, until choose_netlink()
  std::string first_error;
  auto add = [&](std::size_t iface, std::string field, bool statistic, std::string unit, Kind kind,
                 std::string help, Decode d) {
    const auto file = statistic ? base / ifaces[iface] / "statistics" / field : base / ifaces[iface] / field;
    SysfsAttr a;
    if (int err = a.open(file)) {
      if (err != ENOENT && first_error.empty()) first_error = file.string() + ": " + errno_message(err);
      return;
    }
    sysfs_.push_back({static_cast<std::uint32_t>(channels_.size()), d, std::move(a)});
    channels_.push_back({channel_name(kSource, field, ifaces[iface]), std::move(unit), kind,
                         Subsystem::network, 64, std::move(help)});
    found.push_back({iface, std::move(field), statistic});
  };

  for (std::size_t i = 0; i < ifaces.size(); ++i) {
    add(i, "carrier", false, "bool", Kind::state,
        "link carrier: 1 up, 0 down (NaN while the interface is admin down)", Decode::integer);
    add(i, "mtu", false, "bytes", Kind::gauge, "interface MTU", Decode::integer);
    add(i, "operstate", false, "state", Kind::state,
        "RFC 2863 ifOperStatus: up=1 down=2 testing=3 unknown=4 dormant=5 notPresent=6 "
        "lowerLayerDown=7",
        Decode::operstate);
    add(i, "speed", false, "Mb/s", Kind::gauge, "negotiated link speed (NaN when unknown or link down)",
        Decode::speed);
    for (const std::string& f : sorted_files(base / ifaces[i] / "statistics"))
      if (!in_proc_net_dev(f))
        add(i, f, true, std::string(stat_unit(f)), Kind::counter, stat_help(f), Decode::integer);
  }
  if (channels_.empty())
    return {false, first_error.empty() ? base.string() + ": no interfaces" : first_error};
  choose_netlink(base, ifaces, found);
  return {true, {}};
}

void SysNetProbe::choose_netlink(const std::filesystem::path& base, const std::vector<std::string>& ifaces,
                                 const std::vector<Found>& found) {
  auto sysfs_only = [&](std::string why) {
    sysfs_only_reason_ = std::move(why);
    if (rtnl_) rtnl_->close();
  };
  if (!rtnl_) return sysfs_only("sysfs only by choice");
  std::error_code ec;
  if (check_live_ && !std::filesystem::equivalent(base, "/sys/class/net", ec))
    return sysfs_only(base.string() + " is not the live /sys/class/net");
  if (int e = rtnl_->open(); e < 0) return sysfs_only("NETLINK_ROUTE socket: " + errno_message(-e));

  // The first dump, by name: what each interface's record holds.
  struct Seen {
    std::string ifname;
    std::int32_t ifindex;
    bool carrier, mtu, operstate;
    std::size_t n_stats;
  };
  std::vector<Seen> seen;
  auto collect = [&](const RtnlLinkRecord& r) {
    seen.push_back({std::string(r.ifname), r.ifindex, r.carrier.has_value(), r.mtu.has_value(),
                    r.operstate.has_value(), r.n_stats});
  };
  if (int e = rtnl_->dump(collect); e < 0) return sysfs_only("RTM_GETLINK dump: " + errno_message(-e));
  std::sort(seen.begin(), seen.end(), [](const Seen& a, const Seen& b) { return a.ifname < b.ifname; });

  // Every interface of the tree in the dump, same name and index (all or nothing: see net.h).
  std::vector<const Seen*> match(ifaces.size());
  for (std::size_t i = 0; i < ifaces.size(); ++i) {
    auto it = std::lower_bound(seen.begin(), seen.end(), ifaces[i],
                               [](const Seen& s, const std::string& n) { return s.ifname < n; });
    if (it == seen.end() || it->ifname != ifaces[i])
      return sysfs_only(ifaces[i] + ": not in this network namespace's RTM_GETLINK dump");
    const auto index_file = base / ifaces[i] / "ifindex";
    const auto text = read_text(index_file);
    const auto want = text ? parse_i64(*text) : std::nullopt;
    if (!want) return sysfs_only(ifaces[i] + ": no interface index in " + index_file.string());
    if (*want != it->ifindex)
      return sysfs_only(ifaces[i] + ": the RTM_GETLINK dump's ifindex differs from " + index_file.string());
    match[i] = &*it;
  }

  // Channels move to the dump where it carries their value; the rest stays on sysfs.
  auto served = [](const Found& f, const Seen& s) -> std::optional<NlRead> {
    if (f.statistic) {
      const auto k = rtnl_link_stats64_index(f.field);
      if (!k || *k >= s.n_stats) return std::nullopt;
      return NlRead{0, NlField::stat, static_cast<std::uint8_t>(*k)};
    }
    if (f.field == "carrier" && s.carrier) return NlRead{0, NlField::carrier, 0};
    if (f.field == "mtu" && s.mtu) return NlRead{0, NlField::mtu, 0};
    if (f.field == "operstate" && s.operstate) return NlRead{0, NlField::operstate, 0};
    return std::nullopt;  // speed: no netlink attribute
  };
  std::vector<SysfsRead> rest;
  for (std::size_t k = 0; k < sysfs_.size(); ++k) {
    const Found& f = found[k];
    auto read = served(f, *match[f.iface]);
    if (!read) {
      rest.push_back(std::move(sysfs_[k]));
      continue;
    }
    read->channel = sysfs_[k].channel;  // sysfs_[k] is dropped, its fd closed
    const auto at = static_cast<std::uint32_t>(nl_reads_.size());
    if (links_.empty() || links_.back().ifname != ifaces[f.iface])  // found is in interface order
      links_.push_back({ifaces[f.iface], match[f.iface]->ifindex, at, at});
    nl_reads_.push_back(*read);
    links_.back().last = at + 1;
  }
  sysfs_ = std::move(rest);
  if (nl_reads_.empty()) return sysfs_only("the RTM_GETLINK dump serves no channel");
  for (std::size_t i = 0; i < links_.size(); ++i)
    by_ifindex_.push_back({links_[i].ifindex, static_cast<std::uint32_t>(i)});
  std::sort(by_ifindex_.begin(), by_ifindex_.end());
}

void SysNetProbe::sample(std::span<double> out) {
  for (SysfsRead& r : sysfs_) {
    switch (r.decode) {
      case Decode::integer:
        out[r.channel] = r.file.read_number();
        break;
      case Decode::speed: {
        const double v = r.file.read_number();
        out[r.channel] = (v < 0 || v >= 4294967295.0) ? std::nan("") : v;  // SPEED_UNKNOWN
        break;
      }
      case Decode::operstate: {
        auto text = r.file.read();
        out[r.channel] = text ? operstate_code(*text) : std::nan("");
        break;
      }
    }
  }
  if (!links_.empty()) sample_netlink(out);
}

double SysNetProbe::value_of(const NlRead& read, const RtnlLinkRecord& r) {
  const double nan = std::nan("");
  switch (read.field) {
    case NlField::carrier:  // sysfs answers EINVAL unless the interface is up
      return (r.flags & IFF_UP) && r.carrier ? double(*r.carrier != 0) : nan;
    case NlField::mtu:
      return r.mtu ? double(*r.mtu) : nan;
    case NlField::operstate:
      return r.operstate ? if_oper_code(*r.operstate) : nan;
    case NlField::stat:
      return read.stat < r.n_stats ? double(r.stats[read.stat]) : nan;
  }
  return nan;
}

SysNetProbe::NlLink* SysNetProbe::link_for(const RtnlLinkRecord& r) {
  const auto by_index = [](const std::pair<std::int32_t, std::uint32_t>& e, std::int32_t i) { return e.first < i; };
  auto it = std::lower_bound(by_ifindex_.begin(), by_ifindex_.end(), r.ifindex, by_index);
  if (it != by_ifindex_.end() && it->first == r.ifindex) return &links_[it->second];
  // A new index: an interface re-created under the name of one that has left (driver reload,
  // a veth re-created) takes its channels, as the sysfs paths would. Not while the old index
  // was in the last complete dump: then this is another interface that took a renamed one's name.
  auto l = std::lower_bound(links_.begin(), links_.end(), r.ifname,
                            [](const NlLink& x, std::string_view n) { return x.ifname < n; });
  if (l == links_.end() || l->ifname != r.ifname || l->present) return nullptr;
  const auto li = static_cast<std::uint32_t>(l - links_.begin());
  for (auto& e : by_ifindex_)
    if (e.second == li) e.first = r.ifindex;
  std::sort(by_ifindex_.begin(), by_ifindex_.end());  // in place: no allocation
  l->ifindex = r.ifindex;
  return &*l;
}

void SysNetProbe::sample_netlink(std::span<double> out) {
  for (NlLink& l : links_) l.seen = false;
  auto on_link = [&](const RtnlLinkRecord& r) {
    NlLink* l = link_for(r);
    if (!l) return;  // an interface added since open(), or one left on sysfs
    l->seen = true;
    for (std::uint32_t k = l->first; k < l->last; ++k) out[nl_reads_[k].channel] = value_of(nl_reads_[k], r);
  };
  const bool complete = rtnl_->dump(on_link) == 0;
  for (NlLink& l : links_) {
    if (!complete || !l.seen)  // also overwrites what records before a failure wrote
      for (std::uint32_t k = l.first; k < l.last; ++k) out[nl_reads_[k].channel] = std::nan("");
    if (complete) l.present = l.seen;
  }
}

}  // namespace reveal::telemetry
