// rtnl_dump — one rtnetlink dump (a request with NLM_F_DUMP and the datagrams that answer it)
// over a NETLINK_ROUTE socket, whatever table it dumps (rtnetlink(7), netlink(7); message
// layout: include/uapi/linux/netlink.h, rtnetlink.h). The table-specific parts (the request's
// family header, the decoding of each answer message) live with their table: rtnl_link.h
// (RTM_GETLINK, interfaces), rtnl_qdisc.h (RTM_GETQDISC, queueing disciplines).
//
// Three layers, each usable alone:
//  * walk_rtnl_datagram(): walks the netlink messages of one received datagram, every length
//    checked, and hands each answer message's payload to a visitor. Never allocates or reads
//    outside the given bytes, whatever they hold.
//  * RtnlIo: the socket, behind an interface so that tests script the kernel's datagrams
//    (tests/telemetry/netlink/rtnl_fake.h), like EthtoolIo.
//  * RtnlDumper: one request and the datagrams of its answer, with a receive buffer allocated
//    at open(); dump() never allocates.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

namespace reveal::telemetry {

// A non-owning reference to a callable of signature R(Args...) (a function_ref): passing a
// lambda neither copies nor allocates. The callable must outlive the call it is passed to.
template <class Sig>
class FunctionRef;
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F>
    requires(!std::same_as<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): passed like a lambda
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* obj, Args... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(obj))(std::forward<Args>(a)...);
        }) {}
  R operator()(Args... a) const { return call_(obj_, std::forward<Args>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

// A copy of the T at the start of `bytes`, which must hold at least sizeof(T): netlink
// payloads are 4-byte aligned at best, and a crafted datagram not even that.
template <class T>
T load_unaligned(std::span<const std::uint8_t> bytes) {
  T v;
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

// Results of walk_rtnl_datagram() (and the table parsers built on it) besides -errno.
inline constexpr int kRtnlDumpMore = 0;  // the dump continues in a later datagram
inline constexpr int kRtnlDumpDone = 1;  // NLMSG_DONE of `seq` read: the dump is complete

// Called with an answer message's type (RTM_NEWLINK, RTM_NEWQDISC, ...) and payload (the bytes
// after its nlmsghdr, unaligned); returns 0 to go on or a negative errno to stop the walk with.
using RtnlMessageVisitor = FunctionRef<int(std::uint16_t type, std::span<const std::uint8_t> payload)>;

// Walks the netlink messages of one datagram (what NLMSG_OK/NLMSG_NEXT do, with every length
// checked against the bytes left) and, for each message of sequence number `seq`:
//  * NLMSG_DONE: returns kRtnlDumpDone, or the negative errno the kernel put in its payload
//    when the dump failed (messages after it are not read);
//  * NLMSG_ERROR: returns its error (-errno); an error of 0 (an acknowledgement) is skipped;
//  * NLMSG_NOOP and other control messages (type < NLMSG_MIN_TYPE): skipped;
//  * any other type: on_message(type, payload); a negative result ends the walk with it.
// Messages of another sequence number (the late answer to an earlier request) are skipped.
// Returns kRtnlDumpMore when the datagram ends without DONE. Malformed bytes give -EBADMSG:
// a message length shorter than its header or longer than the bytes left, trailing bytes
// shorter than a header, an NLMSG_ERROR payload shorter than its error field. Messages before
// the malformed one have been visited. Never allocates; the bytes need no alignment.
int walk_rtnl_datagram(std::span<const std::uint8_t> bytes, std::uint32_t seq, RtnlMessageVisitor on_message);

// The attributes (struct rtattr, 4-byte aligned; RTA_OK/RTA_NEXT with every length checked)
// of a message or of a nested attribute: on_attr(type without NLA_F_NESTED/NLA_F_NET_BYTEORDER,
// payload) for each. 0, -EBADMSG for a length shorter than the rtattr header or longer than
// the bytes left, or on_attr's negative result.
int walk_rtattrs(std::span<const std::uint8_t> attrs,
                 FunctionRef<int(std::uint16_t type, std::span<const std::uint8_t> payload)> on_attr);

// The NETLINK_ROUTE socket seam.
// Contract (what make_system_rtnl_io() does, and what a double must imitate):
//  * open(): socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE) with a 1 s receive
//    timeout (a kernel that never answers cannot stall the sampler), in the network namespace
//    of the calling process. 0 or -errno; idempotent. close() releases it; idempotent.
//  * send(msg): one datagram to the kernel. 0, or -errno (-EBADF while closed).
//  * recv(buf): the next datagram from the kernel into buf; its length, or -errno: -EMSGSIZE
//    when it was larger than buf (MSG_TRUNC: its tail is lost), -EAGAIN when nothing came
//    within the timeout, -EBADF while closed. Datagrams from another sender than the kernel
//    (netlink port id != 0) are dropped. Retries EINTR.
// None allocates.
class RtnlIo {
 public:
  virtual ~RtnlIo() = default;
  virtual int open() = 0;
  virtual void close() = 0;
  virtual int send(std::span<const std::uint8_t> msg) = 0;
  virtual long recv(std::span<std::uint8_t> buf) = 0;
};

// The live kernel: a new instance with its own socket (made by open()).
std::unique_ptr<RtnlIo> make_system_rtnl_io();

// Dumps over an RtnlIo.
//  * open(): opens the io and allocates the receive buffer (kBufferBytes: twice the most the
//    kernel puts in one datagram of a dump without extension filters, just under 32 KiB:
//    net/netlink/af_netlink.c, netlink_dump). 0 or -errno.
//  * dump(type, family_header, on_message): sends one request of `type` (RTM_GETLINK, ...)
//    with NLM_F_REQUEST | NLM_F_DUMP, a sequence number one more than the last and the table's
//    family header (ifinfomsg, tcmsg: at most kMaxFamilyHeader bytes), then reads datagrams
//    until its NLMSG_DONE (walk_rtnl_datagram). 0 when the dump completed, else -errno: of
//    send/recv (-EMSGSIZE: a datagram did not fit), of the kernel (NLMSG_ERROR, a failed
//    NLMSG_DONE), of on_message, -EBADMSG (malformed), -EINVAL (header too long), -EBADF when
//    not opened. on_message may have been called for part of the table before a failure.
//    A failed dump closes the socket and the next dump() opens a new one: a dump left half
//    read would leave the kernel's dump state on the socket (a new request answers EBUSY)
//    and its unread datagrams queued. Never allocates.
//  * close(): closes the io and frees the buffer; idempotent; also on destruction.
class RtnlDumper {
 public:
  static constexpr std::size_t kBufferBytes = 64 * 1024;
  static constexpr std::size_t kMaxFamilyHeader = 32;

  RtnlDumper();                                   // the live kernel (make_system_rtnl_io)
  explicit RtnlDumper(RtnlIo& io) : io_(&io) {}   // a double (tests); must outlive this
  ~RtnlDumper();
  RtnlDumper(const RtnlDumper&) = delete;
  RtnlDumper& operator=(const RtnlDumper&) = delete;

  int open();
  void close();
  bool is_open() const { return buf_ != nullptr; }
  int dump(std::uint16_t type, std::span<const std::uint8_t> family_header, RtnlMessageVisitor on_message);

 private:
  std::unique_ptr<RtnlIo> owned_;
  RtnlIo* io_ = nullptr;
  bool io_open_ = false;
  std::uint32_t seq_ = 0;
  std::unique_ptr<std::uint64_t[]> buf_;  // kBufferBytes, 8-byte aligned
};

}  // namespace reveal::telemetry
