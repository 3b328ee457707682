#include "http/listener.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/logging.h"

namespace tandem::http {

namespace net = boost::asio;
using net::ip::tcp;

HttpListener::HttpListener(SessionOptions options, RequestHandler handler)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      acceptor_(io_context_),
      accept_backoff_(io_context_),
      drain_timer_(io_context_) {
  options_.active_exchanges = std::make_shared<std::atomic<int64_t>>(0);
  options_.open_connections = std::make_shared<std::atomic<int64_t>>(0);
  options_.draining = std::make_shared<std::atomic<bool>>(false);
  options_.sessions = std::make_shared<SessionRegistry>();
  options_.listener_alive = std::make_shared<ListenerAlive>();
}

HttpListener::~HttpListener() {
  {
    // From here no sink reaches a session from another thread (ListenerAlive), so every
    // session ends with the io_context below: its pending handlers are destroyed there.
    std::lock_guard lock(options_.listener_alive->mutex);
    options_.listener_alive->alive = false;
  }
  Stop();
}

Status HttpListener::Open(const std::string& host, uint16_t port, bool reuse_port) {
  boost::system::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (ec) {
    // A name ("localhost", the machine's hostname), as uvicorn takes: its first IPv4 address,
    // else its first address.
    tcp::resolver resolver(io_context_);
    const auto results = resolver.resolve(host, "", ec);
    if (ec || results.empty()) {
      return InvalidArgument(
          fmt::format("--host '{}' is neither an IP address nor a name that "
                      "resolves: {}",
                      host, ec ? ec.message() : "no address"));
    }
    address = results.begin()->endpoint().address();
    for (const auto& entry : results) {
      if (entry.endpoint().address().is_v4()) {
        address = entry.endpoint().address();
        break;
      }
    }
  }
  const tcp::endpoint endpoint(address, port);
  const std::string where = fmt::format("{}:{}", host, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (ec) {
    return Unavailable(fmt::format("cannot open a socket for {}: {}", where, ec.message()));
  }
  acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (reuse_port) {
    using ReusePort = net::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
    acceptor_.set_option(ReusePort(true), ec);
    if (ec) {
      return Unavailable(fmt::format("cannot set SO_REUSEPORT on {}: {}", where, ec.message()));
    }
  }
  acceptor_.bind(endpoint, ec);
  if (ec) {
    acceptor_.close();
    return Unavailable(
        fmt::format("cannot bind {}: {} (is another server using the port?)", where, ec.message()));
  }
  acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Unavailable(fmt::format("cannot listen on {}: {}", where, ec.message()));
  }
  bound_port_ = acceptor_.local_endpoint().port();
  const std::string resolved = address.to_string();
  TLOG_INFO("HTTP server listening on {}:{}{}{}", host, bound_port_,
            resolved == host ? "" : " (" + resolved + ")",
            options_.tls ? " (HTTPS: " + options_.tls->Describe() + ")" : "");
  DoAccept();
  return Status::Ok();
}

void HttpListener::DoAccept() {
  acceptor_.async_accept(net::make_strand(io_context_), [this](boost::system::error_code ec,
                                                               tcp::socket socket) {
    if (ec == net::error::operation_aborted) {
      return;
    }
    if (ec) {
      return OnAcceptError(ec);
    }
    accept_failures_ = 0;
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    if (options_.max_connections > 0 && *options_.open_connections >= options_.max_connections) {
      RefuseConnection(std::move(socket));
    } else {
      std::make_shared<HttpSession>(std::move(socket), options_, handler_)->Run();
    }
    if (acceptor_.is_open()) {
      DoAccept();
    }
  });
}

namespace {

// A connection answered with a canned response and closed: the response is written, the
// sending side shut, and what the client still sends is read and dropped until it closes or
// kLingerSeconds pass, so that it reads the response instead of a connection reset.
class RefusedConnection : public std::enable_shared_from_this<RefusedConnection> {
 public:
  RefusedConnection(tcp::socket socket, std::string response)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        response_(std::move(response)) {}

  void Start() {
    net::async_write(
        socket_, net::buffer(response_),
        [self = shared_from_this()](boost::system::error_code ec, size_t) {
          if (ec) {
            return;
          }
          boost::system::error_code ignored;
          self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
          self->timer_.expires_after(std::chrono::seconds(HttpSession::kLingerSeconds));
          self->timer_.async_wait([self](boost::system::error_code) {
            boost::system::error_code ignored_close;
            self->socket_.close(ignored_close);
          });
          self->Drain();
        });
  }

 private:
  void Drain() {
    socket_.async_read_some(net::buffer(sink_),
                            [self = shared_from_this()](boost::system::error_code ec, size_t) {
                              if (ec) {
                                self->timer_.cancel();  // the client closed: close now
                              } else {
                                self->Drain();
                              }
                            });
  }

  tcp::socket socket_;
  net::steady_timer timer_;
  std::string response_;
  std::array<char, 4096> sink_{};
};

}  // namespace

// Past the connection cap: a 503 in plain HTTP (a TLS client sees the connection close), then
// close. The refusal is written without reading the request: the client may still be sending
// it, so the socket is closed after a short wait for the client to close first.
void HttpListener::RefuseConnection(tcp::socket socket) {
  const double now = MonotonicSeconds();
  ++refused_connections_;
  if (now - last_refusal_warning_s_ >= 10) {
    TLOG_WARN(
        "{} connection(s) refused since the last warning: {} are open, the limit "
        "(--limit-concurrency)",
        refused_connections_, options_.max_connections);
    refused_connections_ = 0;
    last_refusal_warning_s_ = now;
  }
  if (options_.tls) {
    return;  // the socket closes here: no HTTP can be spoken before a handshake
  }
  const std::string body = fmt::format(
      "{{\"error\":{{\"message\":\"the server has {} open connections, its limit; retry "
      "later\",\"type\":\"ServiceUnavailableError\",\"param\":null,\"code\":503}}}}",
      options_.max_connections);
  auto response = std::make_shared<std::string>(fmt::format(
      "HTTP/1.1 503 Service Unavailable\r\nServer: tandem\r\nContent-Type: application/json\r\n"
      "Content-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{}",
      body.size(), body));
  std::make_shared<RefusedConnection>(std::move(socket), std::move(*response))->Start();
}

// Out of file descriptors (EMFILE/ENFILE) or memory, accept fails at once again: retrying
// at once spins a core and floods the log. Back off (10 ms doubling to 1 s) until an accept
// succeeds, with one log line per 10 s that says how many failed.
void HttpListener::OnAcceptError(const boost::system::error_code& ec) {
  ++accept_failures_;
  const double now = MonotonicSeconds();
  if (now - last_accept_warning_s_ >= 10) {
    TLOG_WARN(
        "accept failed {} time(s) since the last success: {}; backing off (open files: "
        "raise `ulimit -n`, or fewer connections)",
        accept_failures_, ec.message());
    last_accept_warning_s_ = now;
  }
  const int64_t backoff_ms =
      std::min<int64_t>(1000, int64_t{10} << std::min<int64_t>(accept_failures_ - 1, 7));
  accept_backoff_.expires_after(std::chrono::milliseconds(backoff_ms));
  accept_backoff_.async_wait([this](boost::system::error_code wait_ec) {
    if (!wait_ec && acceptor_.is_open()) {
      DoAccept();
    }
  });
}

void HttpListener::Run(int32_t num_threads) {
  auto guard = net::make_work_guard(io_context_);
  std::vector<std::thread> threads;
  for (int32_t i = 1; i < num_threads; ++i) {
    threads.emplace_back([this] { io_context_.run(); });
  }
  io_context_.run();
  for (std::thread& t : threads) {
    t.join();
  }
}

void HttpListener::StopWhenIdle(double max_wait_s, std::string abort_message) {
  net::post(io_context_, [this, max_wait_s, abort_message = std::move(abort_message)]() mutable {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    accept_backoff_.cancel();
    options_.draining->store(true);
    abort_message_ = std::move(abort_message);
    PollIdle(MonotonicSeconds() + max_wait_s, /*aborted=*/false);
  });
}

// Waits for the exchanges in progress; past the deadline, answers those still open (503, or
// their stream's last piece) and waits a little more for those answers to be written.
void HttpListener::PollIdle(double deadline_s, bool aborted) {
  const int64_t active = options_.active_exchanges->load();
  const double now = MonotonicSeconds();
  if (active > 0 && now >= deadline_s && !aborted) {
    TLOG_WARN("shutting down: answering {} request(s) still in flight with an error", active);
    options_.sessions->ForEach([this](const std::shared_ptr<HttpSession>& session) {
      session->AbortForShutdown(abort_message_);
    });
    aborted = true;
    deadline_s = now + kAbortWriteSeconds;
  }
  if (active <= 0 || now >= deadline_s) {
    if (active > 0) {
      TLOG_WARN("stopping with {} response(s) still being written", active);
    }
    Stop();
    return;
  }
  drain_timer_.expires_after(std::chrono::milliseconds(10));
  drain_timer_.async_wait([this, deadline_s, aborted](boost::system::error_code ec) {
    if (!ec) {
      PollIdle(deadline_s, aborted);
    }
  });
}

void HttpListener::Stop() {
  net::post(io_context_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    accept_backoff_.cancel();
  });
  io_context_.stop();
}

}  // namespace tandem::http
