#include "server/http_server.h"

#include "server/anthropic/messages_response.h"
#include "server/errors.h"
#include "server/metrics.h"
#include "server/openai/chat_prompt.h"
#include "server/sse.h"

namespace tandem::server {

HttpServer::HttpServer(ServerConfig config, std::shared_ptr<router::EngineClient> engine,
                       std::shared_ptr<const text::Tokenizer> tokenizer) {
  context_.config = std::move(config);
  context_.engine = std::move(engine);
  context_.tokenizer = std::move(tokenizer);
}

HttpServer::~HttpServer() {
  Stop();
  listener_.reset();         // no session may call into the router after this
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

  const ServerConfig& c = context_.config;
  http::SessionOptions options;
  options.max_body_bytes = c.max_body_bytes;
  options.keep_alive_timeout_s = c.keep_alive_timeout_s;
  options.stalled_client_timeout_s = c.stalled_client_timeout_s;
  options.on_stalled_client = [] { Metrics::Global().AddStalledClientAbort(); };
  options.disable_access_log_for_endpoints = c.disable_access_log_for_endpoints;
  options.max_connections = c.limit_concurrency;
  options.body_budget =
      std::make_shared<http::BodyBudget>(c.max_held_body_bytes, c.max_held_body_bytes_per_address);
  if (c.tls.enabled()) {
    TANDEM_ASSIGN_OR_RETURN(options.tls, http::TlsContextProvider::Create(c.tls));
  }
  options.error_body = [](int http_status, const std::string& message, const std::string&) {
    return ErrorBody({Status(StatusCode::kInvalidArgument, message), ""}, http_status);
  };
  // A stream still open when shutdown's wait ends gets one last event saying so, in the shape
  // its clients read: Anthropic's `event: error` under /v1/messages, else OpenAI's data event.
  options.shutdown_stream_tail = [](const std::string& path) {
    const ApiError error{Unavailable("the server is shutting down: this stream ends before its "
                                     "answer is complete; retry the request"),
                         ""};
    if (anthropic::IsMessagesPath(path)) {
      return "event: error\ndata: " + anthropic::AnthropicErrorBody(error) + "\n\n";
    }
    return SseEvent(ErrorBody(error, 503));
  };
  options.answers_without_body = [this](const HttpRequest& head) {
    return router_->AnswersWithoutBody(head);
  };
  listener_ = std::make_unique<http::HttpListener>(
      std::move(options), [this](HttpRequest request, std::shared_ptr<ResponseSink> sink) {
        router_->Handle(std::move(request), std::move(sink));
      });
  return listener_->Open(c.host, c.port, c.reuse_port);
}

void HttpServer::Run() {
  if (listener_) listener_->Run(context_.config.num_io_threads);
  if (pool_) {
    pool_->Stop();
    pool_->Join();
  }
}

void HttpServer::StopWhenIdle(double max_wait_s) {
  if (listener_) {
    listener_->StopWhenIdle(max_wait_s, "the server is shutting down; retry the request");
  } else {
    Stop();
  }
}

void HttpServer::Stop() {
  if (pool_) pool_->Stop();
  if (listener_) listener_->Stop();
}

}  // namespace tandem::server
