#include "server/http_server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/strand.hpp>
#include <fmt/format.h>
#include <sys/socket.h>

#include "core/logging.h"
#include "server/http_session.h"
#include "server/openai/chat_prompt.h"

namespace tandem::server {

namespace net = boost::asio;
using net::ip::tcp;

HttpServer::HttpServer(ServerConfig config, std::shared_ptr<router::EngineClient> engine,
                       std::shared_ptr<const text::Tokenizer> tokenizer)
    : acceptor_(io_context_) {
  context_.config = std::move(config);
  context_.engine = std::move(engine);
  context_.tokenizer = std::move(tokenizer);
}

HttpServer::~HttpServer() {
  Stop();
  if (pool_) pool_->Join();  // before router_ goes: a running task uses its handlers
}

Status HttpServer::Start() {
  TANDEM_RETURN_IF_ERROR(context_.config.Validate());
  if (context_.config.chat_template) {
    auto chat_template = openai::LoadChatTemplate(context_.config, *context_.tokenizer);
    if (!chat_template.ok()) return chat_template.status();
    context_.chat_template = std::move(chat_template).value();
  }
  pool_ = std::make_unique<PreprocessPool>(context_.config.num_preprocess_threads,
                                           context_.config.max_queued_preprocess);
  context_.config.chat_template_limits.cancelled = &pool_->cancelled();
  router_ = std::make_unique<ApiRouter>(context_, pool_.get());
  handler_ = [this](HttpRequest request, std::shared_ptr<ResponseSink> sink) {
    router_->Handle(std::move(request), std::move(sink));
  };

  const ServerConfig& c = context_.config;
  boost::system::error_code ec;
  const auto address = net::ip::make_address(c.host, ec);
  if (ec) return InvalidArgument(fmt::format("--host '{}' is not an IP address: {}", c.host, ec.message()));
  const tcp::endpoint endpoint(address, c.port);
  const std::string where = fmt::format("{}:{}", c.host, c.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (ec) return Unavailable(fmt::format("cannot open a socket for {}: {}", where, ec.message()));
  acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (c.reuse_port) {
    using ReusePort = net::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
    acceptor_.set_option(ReusePort(true), ec);
    if (ec) return Unavailable(fmt::format("cannot set SO_REUSEPORT on {}: {}", where, ec.message()));
  }
  acceptor_.bind(endpoint, ec);
  if (ec) {
    acceptor_.close();
    return Unavailable(fmt::format("cannot bind {}: {} (is another server using the port?)",
                                   where, ec.message()));
  }
  acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return Unavailable(fmt::format("cannot listen on {}: {}", where, ec.message()));
  bound_port_ = acceptor_.local_endpoint().port();
  TLOG_INFO("HTTP server listening on {}:{}", c.host, bound_port_);
  DoAccept();
  return Status::Ok();
}

void HttpServer::DoAccept() {
  acceptor_.async_accept(net::make_strand(io_context_),
                         [this](boost::system::error_code ec, tcp::socket socket) {
                           if (ec) {
                             if (ec == net::error::operation_aborted) return;
                             TLOG_WARN("accept failed: {}", ec.message());
                           } else {
                             boost::system::error_code ignored;
                             socket.set_option(tcp::no_delay(true), ignored);
                             std::make_shared<HttpSession>(std::move(socket), context_.config,
                                                           handler_)
                                 ->Run();
                           }
                           if (acceptor_.is_open()) DoAccept();
                         });
}

void HttpServer::Run() {
  auto guard = net::make_work_guard(io_context_);
  std::vector<std::thread> threads;
  for (int32_t i = 1; i < context_.config.num_io_threads; ++i) {
    threads.emplace_back([this] { io_context_.run(); });
  }
  io_context_.run();
  for (std::thread& t : threads) t.join();
  if (pool_) {
    pool_->Stop();
    pool_->Join();
  }
}

void HttpServer::Stop() {
  if (pool_) pool_->Stop();
  net::post(io_context_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
  io_context_.stop();
}

}  // namespace tandem::server
