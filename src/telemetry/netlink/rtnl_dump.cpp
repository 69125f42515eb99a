#include "telemetry/netlink/rtnl_dump.h"

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

int walk_rtnl_datagram(std::span<const std::uint8_t> bytes, std::uint32_t seq, RtnlMessageVisitor on_message) {
  std::size_t off = 0;
  while (bytes.size() - off >= sizeof(nlmsghdr)) {
    const auto h = load_unaligned<nlmsghdr>(bytes.subspan(off));
    const std::size_t left = bytes.size() - off;
    if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > left) return -EBADMSG;
    const auto payload = bytes.subspan(off + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN);
    off += std::min<std::size_t>(left, NLMSG_ALIGN(h.nlmsg_len));
    if (h.nlmsg_seq != seq) continue;
    switch (h.nlmsg_type) {
      case NLMSG_DONE: {
        // Since Linux 4.x the payload is the dump's final status (negative errno on failure).
        const int status = payload.size() >= sizeof(int) ? load_unaligned<int>(payload) : 0;
        return status < 0 ? status : kRtnlDumpDone;
      }
      case NLMSG_ERROR: {  // struct nlmsgerr: int error, then the request's header
        if (payload.size() < sizeof(int)) return -EBADMSG;
        const int error = load_unaligned<int>(payload);
        if (error == 0) break;  // an acknowledgement
        return error < 0 ? error : -EPROTO;
      }
      default:
        if (h.nlmsg_type < NLMSG_MIN_TYPE) break;  // NLMSG_NOOP, NLMSG_OVERRUN
        if (int e = on_message(h.nlmsg_type, payload); e < 0) return e;
        break;
    }
  }
  return off == bytes.size() ? kRtnlDumpMore : -EBADMSG;
}

int walk_rtattrs(std::span<const std::uint8_t> attrs,
                 FunctionRef<int(std::uint16_t type, std::span<const std::uint8_t> payload)> on_attr) {
  std::size_t off = 0;
  while (attrs.size() - off >= sizeof(rtattr)) {
    const auto a = load_unaligned<rtattr>(attrs.subspan(off));
    const std::size_t left = attrs.size() - off;
    if (a.rta_len < sizeof(rtattr) || a.rta_len > left) return -EBADMSG;
    const auto data = attrs.subspan(off + RTA_LENGTH(0), a.rta_len - RTA_LENGTH(0));
    off += std::min<std::size_t>(left, RTA_ALIGN(a.rta_len));
    if (int e = on_attr(static_cast<std::uint16_t>(a.rta_type & NLA_TYPE_MASK), data); e < 0) return e;
  }
  return off == attrs.size() ? 0 : -EBADMSG;
}

std::unique_ptr<RtnlIo> make_system_rtnl_io() { return std::make_unique<SystemRtnlIo>(); }

RtnlDumper::RtnlDumper() : owned_(make_system_rtnl_io()), io_(owned_.get()) {}

RtnlDumper::~RtnlDumper() { close(); }

int RtnlDumper::open() {
  if (int e = io_->open(); e < 0) return e;
  io_open_ = true;
  if (!buf_) buf_ = std::make_unique<std::uint64_t[]>(kBufferBytes / sizeof(std::uint64_t));
  return 0;
}

void RtnlDumper::close() {
  io_->close();
  io_open_ = false;
  buf_.reset();
}

int RtnlDumper::dump(std::uint16_t type, std::span<const std::uint8_t> family_header, RtnlMessageVisitor on_message) {
  if (!buf_) return -EBADF;
  if (family_header.size() > kMaxFamilyHeader) return -EINVAL;
  if (!io_open_) {
    if (int e = io_->open(); e < 0) return e;
    io_open_ = true;
  }
  alignas(nlmsghdr) std::uint8_t req[NLMSG_HDRLEN + NLMSG_ALIGN(kMaxFamilyHeader)]{};
  nlmsghdr h{};
  h.nlmsg_len = static_cast<std::uint32_t>(NLMSG_LENGTH(family_header.size()));
  h.nlmsg_type = type;
  h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  h.nlmsg_seq = ++seq_;
  std::memcpy(req, &h, sizeof h);
  if (!family_header.empty()) std::memcpy(req + NLMSG_HDRLEN, family_header.data(), family_header.size());
  const std::span<std::uint8_t> buf(reinterpret_cast<std::uint8_t*>(buf_.get()), kBufferBytes);

  static_assert(kRtnlDumpMore == 0, "the loop below reads on while rc is 0");
  int rc = io_->send({req, h.nlmsg_len});
  while (rc == 0) {  // sent, or kRtnlDumpMore: read the next datagram
    const long n = io_->recv(buf);
    rc = n < 0 ? static_cast<int>(n) : walk_rtnl_datagram(buf.first(static_cast<std::size_t>(n)), h.nlmsg_seq, on_message);
  }
  if (rc == kRtnlDumpDone) return 0;
  // See the contract: never reuse a socket whose dump was not read to its end.
  io_->close();
  io_open_ = false;
  return rc;
}

}  // namespace reveal::telemetry
