#include "apps/bench/http_client.h"

#include <fmt/format.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <limits>

#include "core/clock.h"

namespace tandem::apps::bench {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Runs the async operation started by `start` to completion on `ioc`; async operations are used
// only because beast::tcp_stream timeouts apply to them, not to blocking calls.
template <typename Start>
beast::error_code RunToCompletion(asio::io_context& ioc, Start&& start) {
  beast::error_code result;
  start([&result](beast::error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run();
  return result;
}

Status SocketError(const HttpTarget& target, const std::string& what, beast::error_code ec) {
  return Unavailable(fmt::format("{} {}: {}", what, target.ToString(), ec.message()));
}

}  // namespace

Result<int> HttpExchange(const HttpTarget& target, const HttpRequestSpec& spec,
                         const BodyPieceFn& on_piece) {
  asio::io_context ioc;
  const auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(spec.idle_timeout_s));

  tcp::resolver resolver(ioc);
  beast::error_code ec;
  auto endpoints = resolver.resolve(target.host, target.port, ec);
  if (ec) return SocketError(target, "resolve", ec);

  beast::tcp_stream stream(ioc);
  stream.expires_after(timeout);
  ec = RunToCompletion(ioc, [&](auto handler) { stream.async_connect(endpoints, handler); });
  if (ec) return SocketError(target, "connect to", ec);

  http::request<http::string_body> req(spec.method == "GET" ? http::verb::get : http::verb::post,
                                       target.path_prefix + spec.path, 11);
  req.set(http::field::host, target.host + ":" + target.port);
  req.set(http::field::user_agent, "tandem-bench");
  req.set(http::field::accept, "application/json, text/event-stream");
  if (!spec.api_key.empty()) req.set(http::field::authorization, "Bearer " + spec.api_key);
  if (spec.method != "GET") {
    req.set(http::field::content_type, "application/json");
    req.body() = spec.body;
  }
  req.prepare_payload();
  stream.expires_after(timeout);
  ec = RunToCompletion(ioc, [&](auto handler) { http::async_write(stream, req, handler); });
  if (ec) return SocketError(target, "send request to", ec);

  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  stream.expires_after(timeout);
  ec = RunToCompletion(
      ioc, [&](auto handler) { http::async_read_header(stream, buffer, parser, handler); });
  if (ec) return SocketError(target, "read response header from", ec);

  char piece[16384];
  while (!parser.is_done()) {
    parser.get().body().data = piece;
    parser.get().body().size = sizeof(piece);
    stream.expires_after(timeout);
    ec = RunToCompletion(
        ioc, [&](auto handler) { http::async_read_some(stream, buffer, parser, handler); });
    if (ec == http::error::need_buffer) ec = {};
    const size_t num_bytes = sizeof(piece) - parser.get().body().size;
    if (num_bytes > 0) on_piece(std::string_view(piece, num_bytes), MonotonicSeconds());
    if (ec == http::error::end_of_stream && parser.is_done()) break;
    if (ec) return SocketError(target, "read response body from", ec);
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return static_cast<int>(parser.get().result_int());
}

}  // namespace tandem::apps::bench
