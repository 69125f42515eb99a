// The agent's bounded HTTP/1.1 server: see http_server.h.
#include "agent/http_server.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace reveal::agent {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr std::string_view kBusy =
    "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Type: text/plain\r\n"
    "Content-Length: 27\r\n\r\ntoo many open connections\r\n";

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

struct Counters {
  std::atomic<std::size_t> open{0};
  std::atomic<std::size_t> requests{0};
  std::atomic<std::size_t> rejected{0};
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const HttpHandler& handler, const HttpPathFilter& serves, const HttpLimits& limits,
          Counters& counters)
      : stream_(std::move(socket)), buffer_(limits.header_bytes + 4096), handler_(handler), serves_(serves),
        limits_(limits), counters_(counters) {
    ++counters_.open;
  }
  ~Session() { --counters_.open; }

  void start() { read(limits_.request_deadline); }

 private:
  void read(std::chrono::milliseconds deadline) {
    parser_.emplace();
    parser_->header_limit(std::uint32_t(limits_.header_bytes));
    // No body is ever read (a request with one is refused below), so the body limit must not
    // turn a declared length into a parse error before the method is known.
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    stream_.expires_after(deadline);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted ||
        ec == net::error::connection_reset || ec == net::error::eof)
      return close();
    if (ec == http::error::header_limit) return refuse(431, "request line and headers too large\n");
    if (ec) return refuse(400, "bad request\n");
    const auto& req = parser_->get();
    const http::verb method = req.method();
    HttpRequest r;
    r.method = sv(req.method_string());
    r.target = sv(req.target());
    r.path = r.target.substr(0, r.target.find('?'));
    if (method != http::verb::get && method != http::verb::head) {
      if (serves_ && !serves_(r.path)) return refuse(404, "not found\n");
      return refuse(405, "method not allowed: use GET\n", true);
    }
    const auto length = parser_->content_length();
    if (parser_->chunked() || (length && *length > 0)) return refuse(413, "a request body is not accepted\n");

    HttpResponse out;
    try {
      out = handler_(r);
    } catch (const std::exception&) {
      out = HttpResponse{500, "text/plain; charset=utf-8", "internal error\n", {}};
    }
    ++counters_.requests;
    ++served_;
    keep_alive_ = req.keep_alive() && served_ < limits_.max_requests_per_connection;
    respond(out, method == http::verb::head, req.version());
  }

  // A refusal before the handler: answered, then the connection closes (any body left unread).
  void refuse(int status, std::string body, bool allow = false) {
    ++counters_.rejected;
    keep_alive_ = false;
    linger_ = true;
    HttpResponse out{status, "text/plain; charset=utf-8", std::move(body), {}};
    if (allow) out.headers.emplace_back("Allow", "GET, HEAD");
    respond(out, false, 11);
  }

  void respond(const HttpResponse& out, bool head, unsigned version) {
    res_ = {};
    res_.version(version == 10 ? 10 : 11);
    res_.result(unsigned(out.status));
    res_.set(http::field::content_type, out.content_type);
    for (const auto& [name, value] : out.headers) res_.set(name, value);
    res_.keep_alive(keep_alive_);
    if (head) {
      res_.content_length(out.body.size());
    } else {
      res_.body() = out.body;
      res_.prepare_payload();
    }
    stream_.expires_after(limits_.write_deadline);
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      if (self->linger_) return self->linger();
      if (!self->keep_alive_) return self->close();
      self->read(self->limits_.idle_deadline);
    });
  }

  // After a refusal the client may still be sending a body: closing with unread data makes the
  // kernel send a reset, which can discard the answer before the client reads it. So: stop
  // sending, then read and drop what comes for a short while (at most kDrainBytes), then close.
  static constexpr std::size_t kDrainBytes = 1 << 20;
  void linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::milliseconds(500));
    drain();
  }
  void drain() {
    stream_.async_read_some(net::buffer(discard_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      self->drained_ += n;
      if (ec || self->drained_ >= kDrainBytes) return self->close();
      self->drain();
    });
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::string_body> res_;
  const HttpHandler& handler_;
  const HttpPathFilter& serves_;
  const HttpLimits& limits_;
  Counters& counters_;
  std::size_t served_ = 0;
  bool keep_alive_ = false;
  bool linger_ = false;
  std::size_t drained_ = 0;
  std::array<char, 4096> discard_{};
};

}  // namespace

struct HttpServer::Impl {
  Impl(HttpHandler h, HttpLimits l, HttpPathFilter s)
      : handler(std::move(h)), serves(std::move(s)), limits(l), acceptor(ioc) {}

  void accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) {
        if (counters.open.load() >= limits.max_connections) {
          ++counters.rejected;
          beast::error_code ignored;
          net::write(socket, net::buffer(kBusy.data(), kBusy.size()), ignored);
          socket.shutdown(tcp::socket::shutdown_both, ignored);
          socket.close(ignored);
        } else {
          std::make_shared<Session>(std::move(socket), handler, serves, limits, counters)->start();
        }
      }
      accept();  // errors such as EMFILE: keep accepting (the next try may succeed)
    });
  }

  // Declared before the io_context: its destruction destroys the sessions still pending, which
  // use these.
  Counters counters;
  HttpHandler handler;
  HttpPathFilter serves;
  HttpLimits limits;
  net::io_context ioc{1};
  tcp::acceptor acceptor;
};

HttpServer::HttpServer(HttpHandler handler, HttpLimits limits, HttpPathFilter serves)
    : impl_(std::make_unique<Impl>(std::move(handler), limits, std::move(serves))) {}

HttpServer::~HttpServer() = default;

void HttpServer::bind(const std::string& host, int port, const std::string& listen) {
  beast::error_code ec;
  tcp::resolver resolver(impl_->ioc);
  const auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || results.empty())
    throw std::runtime_error("cannot listen on " + listen + ": address '" + host + "' does not resolve (" +
                             (ec ? ec.message() : std::string("no address")) + ")");
  const tcp::endpoint ep = results.begin()->endpoint();
  tcp::acceptor& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    beast::error_code ignored;
    a.close(ignored);
    throw std::runtime_error("cannot listen on " + listen + ": " + ec.message());
  }
}

void HttpServer::serve() {
  if (!impl_->acceptor.is_open()) throw std::logic_error("HttpServer::serve before bind");
  impl_->accept();
  impl_->ioc.run();
}

// io_context::stop() is thread-safe, and a later run() returns at once: stop() before serve()
// works too. The acceptor and the sessions close when the server is destroyed.
void HttpServer::stop() { impl_->ioc.stop(); }

int HttpServer::port() const {
  beast::error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : int(ep.port());
}

std::size_t HttpServer::open_connections() const { return impl_->counters.open.load(); }
std::size_t HttpServer::requests_total() const { return impl_->counters.requests.load(); }
std::size_t HttpServer::rejected_total() const { return impl_->counters.rejected.load(); }

}  // namespace reveal::agent
