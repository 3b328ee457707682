// Connection: one accepted TCP socket, plain or wrapped in TLS, as one Asio stream
// (AsyncReadStream + AsyncWriteStream) so that HttpSession's Beast reads and Asio writes run
// unchanged over either. The TLS branch is Asio's ssl::stream; the choice is made per
// connection at accept time (HttpListener's TlsContextProvider).
// Reference: Boost.Beast example advanced_server_flex (a stream chosen per connection).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <memory>
#include <optional>
#include <utility>

namespace tandem::http {

class Connection {
 public:
  using executor_type = boost::asio::ip::tcp::socket::executor_type;

  // `tls` null: plain TCP. Otherwise the connection speaks TLS with that context (kept alive
  // by the connection) once HandshakeThen has run.
  Connection(boost::asio::ip::tcp::socket socket, std::shared_ptr<boost::asio::ssl::context> tls)
      : context_(std::move(tls)) {
    if (context_) {
      tls_.emplace(std::move(socket), *context_);
    } else {
      plain_.emplace(std::move(socket));
    }
  }

  bool is_tls() const { return tls_.has_value(); }
  executor_type get_executor() { return socket().get_executor(); }
  // The TCP socket under any TLS (peer address, shutdown, close).
  boost::asio::ip::tcp::socket& socket() { return tls_ ? tls_->next_layer() : *plain_; }

  // Completion handlers are plain callbacks (void(error_code, size_t)): both branches return
  // void, so the stream meets Asio's stream requirements for Beast's and Asio's algorithms.
  template <typename MutableBuffers, typename Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_read_some(buffers, std::forward<Handler>(handler));
    }
  }
  template <typename ConstBuffers, typename Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_write_some(buffers, std::forward<Handler>(handler));
    }
  }

  // Sends TLS close_notify and waits for the peer's, then handler(error_code); a plain
  // connection calls handler({}) at once. Bound the wait (a peer may never answer).
  template <typename Handler>
  void AsyncShutdownThen(Handler&& handler) {
    if (tls_) {
      tls_->async_shutdown(std::forward<Handler>(handler));
    } else {
      std::forward<Handler>(handler)(boost::system::error_code{});
    }
  }

  // Runs the server side of the TLS handshake, then handler(error_code); a plain connection
  // calls handler({}) at once.
  template <typename Handler>
  void HandshakeThen(Handler&& handler) {
    if (tls_) {
      tls_->async_handshake(boost::asio::ssl::stream_base::server, std::forward<Handler>(handler));
    } else {
      std::forward<Handler>(handler)(boost::system::error_code{});
    }
  }

 private:
  std::shared_ptr<boost::asio::ssl::context> context_;  // before tls_: it outlives it
  std::optional<boost::asio::ip::tcp::socket> plain_;
  std::optional<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls_;
};

}  // namespace tandem::http
