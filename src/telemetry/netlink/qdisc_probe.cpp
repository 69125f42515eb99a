#include "telemetry/netlink/qdisc_probe.h"

#include <algorithm>
#include <cmath>
#include <system_error>
#include <utility>

#include "telemetry/file_reader.h"

namespace reveal::telemetry {
namespace {

constexpr std::string_view kSource = "tc.qdisc";

}  // namespace

QdiscProbe::QdiscProbe() : rtnl_(std::make_unique<RtnlQdiscDumper>()) {}

QdiscProbe::QdiscProbe(RtnlIo& io) : rtnl_(std::make_unique<RtnlQdiscDumper>(io)), check_live_(false) {}

QdiscProbe::~QdiscProbe() = default;

ProbeStatus QdiscProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  table_.clear();
  fresh_.clear();
  drops_ = overlimits_ = requeues_ = backlog_ = qlen_ = untracked_ = 0;
  rtnl_->close();
  std::error_code ec;
  if (check_live_ && !std::filesystem::equivalent(root / "sys/class/net", "/sys/class/net", ec))
    return {false, (root / "sys/class/net").string() +
                       " is not the live /sys/class/net (the netlink socket sees only the agent's network namespace)"};
  if (int e = rtnl_->open(); e < 0) return {false, "NETLINK_ROUTE socket: " + errno_message(-e)};
  table_.reserve(kMaxQdiscs);
  fresh_.reserve(kMaxQdiscs);
  if (int e = read_dump(true); e < 0) {
    rtnl_->close();
    return {false, "RTM_GETQDISC dump: " + errno_message(-e)};
  }
  auto add = [&](std::string_view field, std::string unit, Kind kind, std::string help) {
    channels_.push_back({std::string(kSource) + ":" + std::string(field), std::move(unit), kind, Subsystem::network,
                         64, std::move(help)});
  };
  add("drops", "packets", Kind::counter, "packets dropped by the root egress qdiscs of all devices");
  add("overlimits", "count", Kind::counter,
      "throttle events of the root egress qdiscs (a packet held back at a rate limit), all devices");
  add("requeues", "count", Kind::counter, "packets requeued by the root egress qdiscs (busy driver), all devices");
  add("backlog", "bytes", Kind::gauge, "bytes queued in the root egress qdiscs of all devices");
  add("qlen", "packets", Kind::gauge, "packets queued in the root egress qdiscs of all devices");
  return {true, {}};
}

int QdiscProbe::read_dump(bool baseline) {
  for (Tracked& t : table_) t.seen = false;
  fresh_.clear();
  std::uint64_t backlog = 0, qlen = 0;
  auto on_qdisc = [&](const RtnlQdiscRecord& r) {
    if (!r.is_root() || !r.queue) return;
    const QdiscQueueStats& q = *r.queue;
    backlog += q.backlog;
    qlen += q.qlen;
    const std::pair key{r.ifindex, r.handle};
    auto it = std::lower_bound(table_.begin(), table_.end(), key,
                               [](const Tracked& t, const auto& k) { return std::pair{t.ifindex, t.handle} < k; });
    if (it != table_.end() && it->ifindex == r.ifindex && it->handle == r.handle) {
      // The kernel's counters are 32-bit: unsigned subtraction is their growth across a wrap.
      drops_ += std::uint32_t(q.drops - it->drops);
      overlimits_ += std::uint32_t(q.overlimits - it->overlimits);
      requeues_ += std::uint32_t(q.requeues - it->requeues);
      *it = {r.ifindex, r.handle, q.drops, q.overlimits, q.requeues, true};
      return;
    }
    if (table_.size() + fresh_.size() >= kMaxQdiscs) {
      ++untracked_;
      return;
    }
    if (!baseline) {  // created since the last dump: everything it counted is new
      drops_ += q.drops;
      overlimits_ += q.overlimits;
      requeues_ += q.requeues;
    }
    fresh_.push_back({r.ifindex, r.handle, q.drops, q.overlimits, q.requeues, true});
  };
  const int rc = rtnl_->dump(on_qdisc);
  // Qdiscs gone since the last dump leave the table, once a complete dump says so.
  if (rc == 0) {
    table_.erase(std::remove_if(table_.begin(), table_.end(), [](const Tracked& t) { return !t.seen; }), table_.end());
    backlog_ = backlog;
    qlen_ = qlen;
  }
  // New ones join it (their counts are in the totals already; in place: no allocation).
  if (fresh_.empty()) return rc;
  table_.insert(table_.end(), fresh_.begin(), fresh_.end());
  std::sort(table_.begin(), table_.end(),
            [](const Tracked& a, const Tracked& b) { return std::pair{a.ifindex, a.handle} < std::pair{b.ifindex, b.handle}; });
  fresh_.clear();
  return rc;
}

void QdiscProbe::sample(std::span<double> out) {
  if (out.size() < channels_.size()) return;
  if (read_dump(false) < 0) {
    std::fill(out.begin(), out.begin() + std::ptrdiff_t(channels_.size()), std::nan(""));
    return;
  }
  out[0] = double(drops_);
  out[1] = double(overlimits_);
  out[2] = double(requeues_);
  out[3] = double(backlog_);
  out[4] = double(qlen_);
}

}  // namespace reveal::telemetry
