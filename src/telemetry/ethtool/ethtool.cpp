#include "telemetry/ethtool/ethtool.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <system_error>
#include <utility>

#include "telemetry/file_reader.h"
#include "telemetry/sysfs/sysfs_attr.h"

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "ethtool";

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A name's words: maximal alphanumeric runs, lower case, each with the character before it
// ('\0' for the first word of the name).
struct Word {
  std::string text;
  char sep;
};
std::vector<Word> words(std::string_view name) {
  std::vector<Word> out;
  std::size_t i = 0;
  char sep = '\0';
  while (i < name.size()) {
    if (!is_alnum(name[i])) {
      sep = name[i++];
      continue;
    }
    std::size_t j = i;
    while (j < name.size() && is_alnum(name[j])) ++j;
    out.push_back({lower(name.substr(i, j - i)), sep});
    sep = '\0';
    i = j;
  }
  return out;
}

bool one_of(std::string_view w, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), w) != set.end();
}

bool contains_any(const std::string& s, std::initializer_list<std::string_view> set) {
  for (std::string_view k : set)
    if (s.find(k) != std::string::npos) return true;
  return false;
}

std::string_view class_help(EthtoolProbe::StatClass c) {
  switch (c) {
    case EthtoolProbe::StatClass::pause: return "pause/PFC flow control";
    case EthtoolProbe::StatClass::drop_error: return "drops/errors";
    case EthtoolProbe::StatClass::priority: return "per-priority traffic";
    case EthtoolProbe::StatClass::other: break;
  }
  return "NIC counter";
}

std::vector<std::string> interface_dirs(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    if (it->is_directory(sec)) out.push_back(it->path().filename().string());  // follows links
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool has_device_link(const std::filesystem::path& ifdir) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(ifdir / "device", ec));
}
}  // namespace

bool EthtoolProbe::is_per_queue(std::string_view stat) {
  // "[<N>]" anywhere: bnxt "[0]: rx_ucast_packets", gve "rx_posted_desc[0]".
  for (std::size_t p = stat.find('['); p != std::string_view::npos; p = stat.find('[', p + 1)) {
    const std::size_t close = stat.find(']', p);
    if (close != std::string_view::npos && all_digits(stat.substr(p + 1, close - p - 1))) return true;
  }
  const auto w = words(stat);
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::string& t = w[i].text;
    // <q><N>: rx0_packets, ch3_events, ptp_cq0_cqe, txq0_pktnum.
    std::size_t d = t.size();
    while (d > 0 && t[d - 1] >= '0' && t[d - 1] <= '9') --d;
    if (d > 0 && d < t.size() &&
        one_of(std::string_view(t).substr(0, d), {"rx", "tx", "ch", "q", "rxq", "txq", "cq", "sq", "rq",
                                                  "queue", "ring", "rvec", "channel", "vec"}))
      return true;
    if (i + 1 < w.size() && all_digits(w[i + 1].text)) {
      // queue_0, ring_3, txq_0: the word itself names a queue.
      if (one_of(t, {"queue", "ring", "rvec", "rxq", "txq", "q", "channel", "vec", "ch"})) return true;
      // tx-0.tx_packets (i40e, sfc); not rx_64_bytes (a size bin).
      if (one_of(t, {"rx", "tx"}) && w[i + 1].sep == '-') return true;
    }
  }
  return false;
}

EthtoolProbe::StatClass EthtoolProbe::classify(std::string_view stat) {
  const std::string s = lower(stat);
  if (contains_any(s, {"pause", "pfc", "xon", "xoff"})) return StatClass::pause;
  if (contains_any(s, {"discard", "drop", "err", "out_of_buffer", "no_buf", "nobuf", "no_dma", "crc",
                       "miss", "timeout", "overflow", "overrun", "fifo", "lost", "fail", "abort",
                       "jabber", "undersize", "oversize", "fragment", "illegal"}))
    return StatClass::drop_error;
  if (s.find("prio") != std::string::npos) return StatClass::priority;
  return StatClass::other;
}

std::string_view EthtoolProbe::unit_of(std::string_view stat) {
  const auto w = words(stat);
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::string& t = w[i].text;
    if (t == "bytes" || t == "octets") return i > 0 && all_digits(w[i - 1].text) ? "packets" : "bytes";
    if (t == "packets" || t == "pkts") return "packets";
  }
  return "count";
}

std::vector<std::size_t> EthtoolProbe::select(const std::vector<std::string>& stats, std::size_t cap) {
  std::vector<std::pair<StatClass, std::size_t>> ranked;
  for (std::size_t i = 0; i < stats.size(); ++i)
    if (!is_per_queue(stats[i])) ranked.push_back({classify(stats[i]), i});
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (ranked.size() > cap) ranked.resize(cap);
  std::vector<std::size_t> out;
  out.reserve(ranked.size());
  for (const auto& r : ranked) out.push_back(r.second);
  std::sort(out.begin(), out.end());
  return out;
}

EthtoolProbe::EthtoolProbe() : owned_(make_system_ethtool_io()), io_(owned_.get()) {}

EthtoolProbe::~EthtoolProbe() { io_->close(); }

ProbeStatus EthtoolProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  nics_.clear();
  io_->close();
  const auto base = root / "sys/class/net";
  std::error_code ec;
  if (!std::filesystem::is_directory(base, ec))
    return {false, base.string() + ": " + (ec ? ec.message() : "not a directory")};

  std::vector<std::string> physical;
  for (const std::string& iface : interface_dirs(base))
    if (iface != "lo" && has_device_link(base / iface)) physical.push_back(iface);
  if (physical.empty())
    return {false, "no physical NIC under " + base.string() + " (no interface with a device link)"};
  if (int e = io_->open(); e < 0) return {false, "ethtool control socket: " + errno_message(-e)};

  std::string reasons;
  auto fail = [&](const std::string& iface, const std::string& why) {
    reasons += (reasons.empty() ? "" : "; ") + iface + ": " + why;
  };
  std::vector<std::string> stats;
  for (const std::string& iface : physical) {
    const auto index_file = base / iface / "ifindex";
    const auto want = read_text(index_file);
    const auto want_n = want ? parse_i64(*want) : std::nullopt;
    if (!want_n) {
      fail(iface, "no interface index (" + index_file.string() + ")");
      continue;
    }
    if (io_->ifindex(iface.c_str()) != *want_n) {
      fail(iface, "not an interface of this network namespace (ifindex differs from " +
                      index_file.string() + ")");
      continue;
    }
    if (int e = io_->gstrings(iface.c_str(), stats); e < 0) {
      fail(iface, "no driver statistics (ETHTOOL_GSTRINGS: " + errno_message(-e) + ")");
      continue;
    }
    if (stats.empty()) {
      fail(iface, "no driver statistics (the driver reports none)");
      continue;
    }
    const auto keep = select(stats);
    if (keep.empty()) {
      fail(iface, "only per-queue statistics (" + std::to_string(stats.size()) + ")");
      continue;
    }
    Nic nic;
    nic.ifname = iface;
    nic.first = channels_.size();
    nic.buf = EthtoolStatsBuffer(stats.size());
    std::vector<std::string> fields;
    for (std::size_t k : keep) {
      nic.pick.push_back(static_cast<std::uint32_t>(k));
      nic.raw.push_back(stats[k]);
      fields.push_back(sanitize_index(stats[k]));
    }
    make_unique_names(fields);
    for (std::size_t j = 0; j < keep.size(); ++j) {
      const std::string& raw = stats[keep[j]];
      channels_.push_back({channel_name(kSource, fields[j], iface), std::string(unit_of(raw)),
                           Kind::counter, Subsystem::network, 64,
                           std::string(class_help(classify(raw))) + ": driver statistic " + raw +
                               " (ethtool -S " + iface + ")"});
    }
    nics_.push_back(std::move(nic));
  }
  if (channels_.empty()) {
    io_->close();
    return {false, reasons};
  }
  return {true, {}};
}

bool EthtoolProbe::remap(Nic& nic) {
  std::vector<std::string> names;
  if (io_->gstrings(nic.ifname.c_str(), names) < 0 || names.empty()) return false;
  for (std::size_t j = 0; j < nic.raw.size(); ++j) {
    // The k-th channel of this name (k equal names kept before it) maps to the k-th such name.
    std::size_t k = 0;
    for (std::size_t i = 0; i < j; ++i) k += nic.raw[i] == nic.raw[j];
    nic.pick[j] = kGone;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == nic.raw[j] && k-- == 0) {
        nic.pick[j] = static_cast<std::uint32_t>(i);
        break;
      }
  }
  nic.buf = EthtoolStatsBuffer(names.size());
  return true;
}

void EthtoolProbe::sample(std::span<double> out) {
  for (Nic& nic : nics_) {
    int n = io_->gstats(nic.ifname.c_str(), nic.buf);
    // The driver's set changed size: its names read again, once per new count.
    // (GSTRINGS answers EAGAIN while the count is still changing: tried again next tick.)
    if (n > 0 && static_cast<std::size_t>(n) != nic.buf.size() && static_cast<std::size_t>(n) != nic.remapped_for) {
      if (remap(nic)) {
        nic.remapped_for = static_cast<std::size_t>(n);
        n = io_->gstats(nic.ifname.c_str(), nic.buf);
      }
    }
    const bool ok = n >= 0 && static_cast<std::size_t>(n) == nic.buf.size();
    const auto values = nic.buf.values();
    for (std::size_t j = 0; j < nic.pick.size(); ++j)
      out[nic.first + j] = ok && nic.pick[j] != kGone ? static_cast<double>(values[nic.pick[j]]) : std::nan("");
  }
}

}  // namespace reveal::telemetry
