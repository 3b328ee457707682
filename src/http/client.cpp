#include "http/client.h"

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <chrono>
#include <exception>
#include <limits>

#include "http/types.h"

namespace tandem::http {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
namespace beast = boost::beast;
using net::ip::tcp;

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  const auto bad = [&](std::string_view why) {
    return InvalidArgument(fmt::format("'{}' is not an http:// URL: {}", url, why));
  };
  if (url.substr(0, kScheme.size()) != kScheme) return bad("it must start with http://");
  std::string_view rest = url.substr(kScheme.size());
  const size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  HttpUrl out;
  if (slash != std::string_view::npos) {
    out.target = std::string(rest.substr(slash));
    if (out.target[0] == '?') out.target = "/" + out.target;
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {  // [IPv6]:port
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("an unclosed '[' in the host");
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return bad("junk after ']'");
      port = authority.substr(close + 2);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return bad("no host");
  out.host = std::string(host);
  if (!port.empty() || authority.back() == ':') {
    uint32_t value = 0;
    if (port.empty() || port.size() > 5) return bad("a bad port");
    for (char c : port) {
      if (c < '0' || c > '9') return bad("a bad port");
      value = value * 10 + static_cast<uint32_t>(c - '0');
    }
    if (value == 0 || value > 65535) return bad("the port must be 1..65535");
    out.port = static_cast<uint16_t>(value);
  }
  return out;
}

std::string_view ClientResponse::Header(std::string_view name) const {
  return FindHeader(headers, name);
}

HttpCall::HttpCall(ClientRequest request) : request_(std::move(request)) {}

HttpCall::~HttpCall() = default;

void HttpCall::Cancel() {
  cancelled_ = true;
  std::lock_guard lock(mutex_);
  if (close_) close_();
}

namespace {

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

}  // namespace

Status HttpCall::Run(const OnHead& on_head, const OnBody& on_body) {
  Status result = Status::Ok();
  io_context_.restart();
  net::co_spawn(io_context_, RunAsync(io_context_.get_executor(), on_head, on_body),
                [&result](std::exception_ptr error, Status status) {
                  result = error ? Unavailable("the HTTP call failed unexpectedly") : status;
                });
  io_context_.run();
  return result;
}

// GCC 12 pairs the coroutine frame's allocation with Asio's sized operator delete and warns
// (a false positive: both are Asio's awaitable_frame_base operators).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
net::awaitable<Status> HttpCall::RunAsync(net::any_io_executor executor, OnHead on_head,
                                          OnBody on_body) {
  auto url = ParseHttpUrl(request_.url);
  if (!url.ok()) co_return url.status();
  // Shared with close_, which Cancel() may call from another thread while we run.
  auto stream = std::make_shared<beast::tcp_stream>(executor);
  {
    std::lock_guard lock(mutex_);
    close_ = [executor, stream] { net::post(executor, [stream] { stream->socket().close(); }); };
  }
  // Cancel() sets the flag before taking the lock: either it saw close_ or we see the flag.
  if (cancelled_) {
    std::lock_guard lock(mutex_);
    close_ = nullptr;
    co_return Unavailable("cancelled");
  }
  const std::string where = fmt::format("{}:{}", url->host, url->port);
  Status result = Status::Ok();
  // Phase names which step failed, for the error message.
  const char* phase = "resolve";
  try {
    stream->expires_after(Seconds(request_.connect_timeout_s));
    boost::system::error_code not_numeric;
    const auto address = net::ip::make_address(url->host, not_numeric);
    if (!not_numeric) {
      // An IP address (the cluster's usual case): no resolver, whose asynchronous lookup
      // starts a thread of its own per io_context.
      phase = "connect to";
      co_await stream->async_connect(tcp::endpoint(address, url->port), net::use_awaitable);
    } else {
      tcp::resolver resolver(executor);
      auto endpoints =
          co_await resolver.async_resolve(url->host, std::to_string(url->port), net::use_awaitable);
      phase = "connect to";
      co_await stream->async_connect(endpoints, net::use_awaitable);
    }
    stream->socket().set_option(tcp::no_delay(true));
    phase = "send the request to";
    bhttp::request<bhttp::string_body> req;
    req.method_string(request_.method);
    req.target(url->target);
    req.version(11);
    for (const auto& [name, value] : request_.headers) req.set(name, value);
    req.set(bhttp::field::host, where);
    req.body() = request_.body;
    if (!request_.body.empty() || request_.method == "POST" || request_.method == "PUT") {
      req.prepare_payload();
    }
    stream->expires_after(Seconds(request_.idle_timeout_s));
    co_await bhttp::async_write(*stream, req, net::use_awaitable);

    phase = "read the response from";
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::buffer_body> parser;
    // No limit (the caller bounds what it keeps). Not boost::none: Boost 1.74 compares
    // `len > body_limit_` with an empty optional as true and fails every sized body.
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    stream->expires_after(Seconds(request_.idle_timeout_s));
    co_await bhttp::async_read_header(*stream, buffer, parser, net::use_awaitable);
    HeaderList headers;
    for (const auto& field : parser.get()) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      headers.emplace_back(std::move(name), std::string(field.value()));
    }
    head_received_ = true;
    if (on_head(static_cast<int>(parser.get().result_int()), headers)) {
      char chunk[16384];
      while (!parser.is_done()) {
        parser.get().body().data = chunk;
        parser.get().body().size = sizeof(chunk);
        stream->expires_after(Seconds(request_.idle_timeout_s));
        beast::error_code ec;
        co_await bhttp::async_read_some(*stream, buffer, parser,
                                        net::redirect_error(net::use_awaitable, ec));
        if (ec && ec != bhttp::error::need_buffer) throw beast::system_error(ec);
        const size_t got = sizeof(chunk) - parser.get().body().size;
        if (got > 0 && !on_body(std::string_view(chunk, got))) break;
      }
    }
  } catch (const beast::system_error& e) {
    const std::string why = cancelled_                          ? "cancelled"
                            : e.code() == beast::error::timeout ? "timed out"
                                                                : e.code().message();
    result = Unavailable(fmt::format("cannot {} {}: {}", phase, where, why));
  } catch (const std::exception& e) {
    result = Unavailable(fmt::format("cannot {} {}: {}", phase, where, e.what()));
  }
  {
    std::lock_guard lock(mutex_);
    close_ = nullptr;
  }
  beast::error_code ignored;
  stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream->socket().close(ignored);
  if (cancelled_ && result.ok() && !head_received_) co_return Unavailable("cancelled");
  co_return result;
}
#pragma GCC diagnostic pop

Result<ClientResponse> Fetch(ClientRequest request, size_t max_body_bytes) {
  ClientResponse response;
  bool too_large = false;
  HttpCall call(std::move(request));
  Status status = call.Run(
      [&](int code, const HeaderList& headers) {
        response.status = code;
        response.headers = headers;
        return true;
      },
      [&](std::string_view bytes) {
        if (response.body.size() + bytes.size() > max_body_bytes) {
          too_large = true;
          return false;
        }
        response.body.append(bytes);
        return true;
      });
  if (!status.ok()) return status;
  if (too_large) {
    return Unavailable(fmt::format("the response body is larger than {} bytes", max_body_bytes));
  }
  return response;
}

}  // namespace tandem::http
