#include "telemetry/netlink/rtnl_link.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "telemetry/file_reader.h"

namespace reveal::telemetry {
namespace {

// struct rtnl_link_stats64 of include/uapi/linux/if_link.h, in field order.
constexpr std::array<std::string_view, 25> kStats64Fields{
    "rx_packets",        "tx_packets",        "rx_bytes",          "tx_bytes",
    "rx_errors",         "tx_errors",         "rx_dropped",        "tx_dropped",
    "multicast",         "collisions",        "rx_length_errors",  "rx_over_errors",
    "rx_crc_errors",     "rx_frame_errors",   "rx_fifo_errors",    "rx_missed_errors",
    "tx_aborted_errors", "tx_carrier_errors", "tx_fifo_errors",    "tx_heartbeat_errors",
    "tx_window_errors",  "rx_compressed",     "tx_compressed",     "rx_nohandler",
    "rx_otherhost_dropped"};

// A copy of the T at `bytes` (which holds at least sizeof(T)): no alignment needed.
template <class T>
T load(std::span<const std::uint8_t> bytes) {
  T v;
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

// The attributes of one RTM_NEWLINK after its ifinfomsg (RTA_OK/RTA_NEXT with every length
// checked). 0 or -EBADMSG.
int parse_link_attributes(std::span<const std::uint8_t> attrs, RtnlLinkRecord& r) {
  std::size_t off = 0;
  while (attrs.size() - off >= sizeof(rtattr)) {
    const auto a = load<rtattr>(attrs.subspan(off));
    const std::size_t left = attrs.size() - off;
    if (a.rta_len < sizeof(rtattr) || a.rta_len > left) return -EBADMSG;
    const auto data = attrs.subspan(off + RTA_LENGTH(0), a.rta_len - RTA_LENGTH(0));
    off += std::min<std::size_t>(left, RTA_ALIGN(a.rta_len));
    switch (a.rta_type & NLA_TYPE_MASK) {
      case IFLA_IFNAME: {  // NUL-terminated; stop at the payload's end if it is not
        const char* s = reinterpret_cast<const char*>(data.data());
        r.ifname = std::string_view(s, ::strnlen(s, data.size()));
        break;
      }
      case IFLA_MTU:
        if (data.size() < sizeof(std::uint32_t)) return -EBADMSG;
        r.mtu = load<std::uint32_t>(data);
        break;
      case IFLA_OPERSTATE:
        if (data.empty()) return -EBADMSG;
        r.operstate = data[0];
        break;
      case IFLA_CARRIER:
        if (data.empty()) return -EBADMSG;
        r.carrier = data[0];
        break;
      case IFLA_STATS64:
        r.n_stats = std::min(data.size() / sizeof(std::uint64_t), RtnlLinkRecord::kMaxStats);
        std::memcpy(r.stats.data(), data.data(), r.n_stats * sizeof(std::uint64_t));
        break;
      default:
        break;  // IFLA_STATS (32-bit), IFLA_PAD, IFLA_AF_SPEC, ...: not needed
    }
  }
  return off == attrs.size() ? 0 : -EBADMSG;
}

class SystemRtnlIo final : public RtnlIo {
 public:
  int open() override {
    if (fd_) return 0;
    UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (!fd) return -errno;
    const timeval timeout{1, 0};
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0) return -errno;
    fd_ = std::move(fd);  // bound (a port id chosen by the kernel) by the first send
    return 0;
  }
  void close() override { fd_.reset(); }

  int send(std::span<const std::uint8_t> msg) override {
    if (!fd_) return -EBADF;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;  // nl_pid 0: the kernel
    ssize_t n;
    do n = ::sendto(fd_.get(), msg.data(), msg.size(), 0, reinterpret_cast<const sockaddr*>(&kernel),
                    sizeof kernel);
    while (n < 0 && errno == EINTR);
    if (n < 0) return -errno;
    return static_cast<std::size_t>(n) == msg.size() ? 0 : -EIO;
  }

  long recv(std::span<std::uint8_t> buf) override {
    if (!fd_) return -EBADF;
    for (;;) {
      sockaddr_nl from{};
      iovec iov{buf.data(), buf.size()};
      msghdr msg{};
      msg.msg_name = &from;
      msg.msg_namelen = sizeof from;
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      const ssize_t n = ::recvmsg(fd_.get(), &msg, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        return -errno;  // EAGAIN: the receive timeout passed
      }
      if (msg.msg_flags & MSG_TRUNC) return -EMSGSIZE;
      if (from.nl_pid != 0) continue;  // another process's datagram, not an answer
      return static_cast<long>(n);
    }
  }

 private:
  UniqueFd fd_;
};

}  // namespace

std::optional<std::size_t> rtnl_link_stats64_index(std::string_view field) {
  for (std::size_t i = 0; i < kStats64Fields.size(); ++i)
    if (kStats64Fields[i] == field) return i;
  return std::nullopt;
}

int parse_rtnl_link_datagram(std::span<const std::uint8_t> bytes, std::uint32_t seq,
                             RtnlLinkVisitor on_link) {
  std::size_t off = 0;
  while (bytes.size() - off >= sizeof(nlmsghdr)) {
    const auto h = load<nlmsghdr>(bytes.subspan(off));
    const std::size_t left = bytes.size() - off;
    if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > left) return -EBADMSG;
    const auto payload = bytes.subspan(off + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN);
    off += std::min<std::size_t>(left, NLMSG_ALIGN(h.nlmsg_len));
    if (h.nlmsg_seq != seq) continue;
    switch (h.nlmsg_type) {
      case NLMSG_DONE: {
        // Since Linux 4.x the payload is the dump's final status (negative errno on failure).
        const int status = payload.size() >= sizeof(int) ? load<int>(payload) : 0;
        return status < 0 ? status : kRtnlDumpDone;
      }
      case NLMSG_ERROR: {  // struct nlmsgerr: int error, then the request's header
        if (payload.size() < sizeof(int)) return -EBADMSG;
        const int error = load<int>(payload);
        if (error == 0) break;  // an acknowledgement
        return error < 0 ? error : -EPROTO;
      }
      case RTM_NEWLINK: {
        if (payload.size() < sizeof(ifinfomsg)) return -EBADMSG;
        const auto ifi = load<ifinfomsg>(payload);
        RtnlLinkRecord r;
        r.ifindex = ifi.ifi_index;
        r.flags = ifi.ifi_flags;
        const std::size_t attrs_at = std::min<std::size_t>(payload.size(), NLMSG_ALIGN(sizeof(ifinfomsg)));
        if (int e = parse_link_attributes(payload.subspan(attrs_at), r)) return e;
        on_link(r);
        break;
      }
      default:
        break;
    }
  }
  return off == bytes.size() ? kRtnlDumpMore : -EBADMSG;
}

std::unique_ptr<RtnlIo> make_system_rtnl_io() { return std::make_unique<SystemRtnlIo>(); }

RtnlLinkDumper::RtnlLinkDumper() : owned_(make_system_rtnl_io()), io_(owned_.get()) {}

RtnlLinkDumper::~RtnlLinkDumper() { close(); }

int RtnlLinkDumper::open() {
  if (int e = io_->open(); e < 0) return e;
  io_open_ = true;
  if (!buf_) buf_ = std::make_unique<std::uint64_t[]>(kBufferBytes / sizeof(std::uint64_t));
  return 0;
}

void RtnlLinkDumper::close() {
  io_->close();
  io_open_ = false;
  buf_.reset();
}

int RtnlLinkDumper::dump(RtnlLinkVisitor on_link) {
  if (!buf_) return -EBADF;
  if (!io_open_) {
    if (int e = io_->open(); e < 0) return e;
    io_open_ = true;
  }
  struct {
    nlmsghdr h;
    ifinfomsg ifi;
  } req{};
  static_assert(sizeof req == NLMSG_LENGTH(sizeof(ifinfomsg)));
  req.h.nlmsg_len = sizeof req;
  req.h.nlmsg_type = RTM_GETLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.h.nlmsg_seq = ++seq_;
  req.ifi.ifi_family = AF_UNSPEC;
  const std::span<std::uint8_t> buf(reinterpret_cast<std::uint8_t*>(buf_.get()), kBufferBytes);

  static_assert(kRtnlDumpMore == 0, "the loop below reads on while rc is 0");
  int rc = io_->send({reinterpret_cast<const std::uint8_t*>(&req), sizeof req});
  while (rc == 0) {  // sent, or kRtnlDumpMore: read the next datagram
    const long n = io_->recv(buf);
    rc = n < 0 ? static_cast<int>(n)
               : parse_rtnl_link_datagram(buf.first(static_cast<std::size_t>(n)), req.h.nlmsg_seq, on_link);
  }
  if (rc == kRtnlDumpDone) return 0;
  // See the contract: never reuse a socket whose dump was not read to its end.
  io_->close();
  io_open_ = false;
  return rc;
}

}  // namespace reveal::telemetry
