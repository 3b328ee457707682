#include "cluster/manager/gateway.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "cluster/manager/rest_util.h"
#include "core/clock.h"
#include "core/logging.h"
#include "http/client.h"
#include "http/sse_splitter.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>

namespace tandem::cluster::manager {

using nlohmann::json;
namespace net = boost::asio;

namespace {

constexpr int kMaxAttempts = 3;
const std::vector<double> kLatencyBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                            1,     2.5,  5,     10,   30,  60,   300};

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:04}-{:02}-{:02}", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday);
}

// The JSON of a `data: {...}` event, or null.
json EventJson(const std::string& event) {
  if (event.rfind("data: {", 0) != 0) return nullptr;
  return json::parse(event.substr(6), nullptr, false);
}

// Whether an event may carry a usage object: `"usage"` followed by ':' and '{'. Token chunks
// carry none or `"usage": null`, so only the final chunk is parsed.
bool MayCarryUsage(const std::string& event) {
  for (size_t pos = event.find("\"usage\""); pos != std::string::npos;
       pos = event.find("\"usage\"", pos + 7)) {
    size_t i = pos + 7;
    while (i < event.size() && (event[i] == ' ' || event[i] == ':')) ++i;
    if (i < event.size() && event[i] == '{') return true;
  }
  return false;
}

}  // namespace

Gateway::Gateway(store::Store& store) : store_(store), routes_(store) {}

Gateway::~Gateway() {
  Stop();
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return active_ == 0; });
  lock.unlock();
  if (background_.joinable()) background_.join();
  FlushUsage();
}

Status Gateway::Start() {
  TANDEM_RETURN_IF_ERROR(routes_.Start());
  background_ = std::thread([this] { BackgroundLoop(); });
  return Status::Ok();
}

void Gateway::Stop() {
  std::vector<std::shared_ptr<http::HttpCall>> calls;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [id, weak] : calls_) {
      if (auto call = weak.lock()) calls.push_back(std::move(call));
    }
  }
  cv_.notify_all();
  for (auto& call : calls) call->Cancel();
}

bool Gateway::WaitForResponses(double max_wait_s) {
  std::unique_lock lock(open_responses_->mutex);
  return open_responses_->cv.wait_for(
      lock, std::chrono::milliseconds(static_cast<int64_t>(max_wait_s * 1000)),
      [this] { return open_responses_->count == 0; });
}

void Gateway::BackgroundLoop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    routes_.PollLoads();
    FlushUsage();
    lock.lock();
    cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
  }
}

void Gateway::FlushUsage() {
  std::map<std::tuple<int64_t, std::string, std::string>, Usage> pending;
  {
    std::lock_guard lock(mutex_);
    pending.swap(pending_usage_);
  }
  for (const auto& [key, u] : pending) {
    Status s = store_.AddUsage({std::get<0>(key), std::get<1>(key), std::get<2>(key),
                                u.prompt_tokens, u.completion_tokens, u.requests});
    if (!s.ok()) TLOG_WARN("gateway: recording usage: {}", s.ToString());
  }
}

void Gateway::RecordUsage(const Principal& who, const std::string& model, const json& usage) {
  std::lock_guard lock(mutex_);
  Usage& u = pending_usage_[{who.api_key_id, model, Today()}];
  u.requests += 1;
  if (usage.is_object()) {
    u.prompt_tokens += usage.value("prompt_tokens", int64_t{0});
    u.completion_tokens += usage.value("completion_tokens", int64_t{0});
  }
}

void Gateway::Observe(const std::string& model, int code, double seconds, double first_byte) {
  std::lock_guard lock(mutex_);
  ++requests_[{model, code}];
  for (auto [by_model, value] :
       {std::pair{&latency_, seconds}, std::pair{&first_byte_, first_byte}}) {
    if (value < 0) continue;  // before the lookup: an empty histogram would be exported
    Histogram* histogram = &(*by_model)[model];
    if (histogram->buckets.empty()) histogram->buckets.assign(kLatencyBounds.size(), 0);
    for (size_t b = 0; b < kLatencyBounds.size(); ++b) {
      if (value <= kLatencyBounds[b]) ++histogram->buckets[b];
    }
    ++histogram->count;
    histogram->sum += value;
  }
}

std::string Gateway::MetricsText() const {
  std::lock_guard lock(mutex_);
  std::string out =
      "# HELP tandem_manager_gateway_requests_total Requests through the gateway by deployment "
      "and HTTP status.\n# TYPE tandem_manager_gateway_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    out +=
        fmt::format("tandem_manager_gateway_requests_total{{model_name=\"{}\",code=\"{}\"}} {}\n",
                    key.first, key.second, n);
  }
  const auto histograms = [&](const char* name, const char* help,
                              const std::map<std::string, Histogram>& by_model) {
    out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
    for (const auto& [model, h] : by_model) {
      for (size_t b = 0; b < kLatencyBounds.size(); ++b) {
        out += fmt::format("{}_bucket{{model_name=\"{}\",le=\"{}\"}} {}\n", name, model,
                           kLatencyBounds[b], h.buckets[b]);
      }
      out += fmt::format("{}_bucket{{model_name=\"{}\",le=\"+Inf\"}} {}\n", name, model, h.count);
      out += fmt::format("{}_sum{{model_name=\"{}\"}} {}\n{}_count{{model_name=\"{}\"}} {}\n", name,
                         model, h.sum, name, model, h.count);
    }
  };
  out +=
      "# HELP tandem_manager_gateway_instance_load The load least-loaded routing sees per "
      "RUNNING instance: requests in flight through the gateway plus the instance's own "
      "running and waiting requests beyond those.\n"
      "# TYPE tandem_manager_gateway_instance_load gauge\n";
  for (const auto& [model, id, load] : routes_.Loads()) {
    out += fmt::format(
        "tandem_manager_gateway_instance_load{{model_name=\"{}\",instance_id=\"{}\"}} {}\n", model,
        id, load);
  }
  histograms("tandem_manager_gateway_request_duration_seconds",
             "Gateway request latency, first byte of the request to the last of the response.",
             latency_);
  histograms("tandem_manager_gateway_time_to_first_byte_seconds",
             "Gateway time from the request to the first response byte (TTFT for streams).",
             first_byte_);
  return out;
}

bool Gateway::Stopping() const {
  std::lock_guard lock(mutex_);
  return stopping_;
}

std::string Gateway::CutMessage(const Status& result) const {
  if (Stopping()) {
    return "the manager is shutting down: this stream ends before its answer is complete; "
           "retry the request";
  }
  return "the instance serving this stream failed: " + result.message();
}

void Gateway::Handle(const http::HttpRequest& request, const Principal& who,
                     std::shared_ptr<http::ResponseSink> sink) {
  if (!who.authenticated()) {
    return SendOpenAiError(*sink, 401,
                           who.failure.empty() ? "missing API key: send 'Authorization: Bearer "
                                                 "<api key>'"
                                               : who.failure);
  }
  if (!who.HasScope("inference")) {
    return SendOpenAiError(*sink, 403, "this API key's scope does not include inference");
  }
  if (request.path == "/v1/models") {
    if (request.method != "GET" && request.method != "HEAD") {  // HEAD: the session drops the body
      sink->AddResponseHeader("Allow", "GET, HEAD");
      return SendOpenAiError(*sink, 405, "use GET /v1/models");
    }
    json data = json::array();
    for (const std::string& name : routes_.ModelNames()) {
      if (!who.MayUseModel(name)) continue;
      data.push_back({{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "tandem"}});
    }
    return SendJson(*sink, {{"object", "list"}, {"data", data}});
  }
  if (request.path != "/v1/chat/completions" && request.path != "/v1/completions") {
    return SendOpenAiError(*sink, 404, fmt::format("no route {} on the gateway", request.path));
  }
  if (request.method != "POST") {
    sink->AddResponseHeader("Allow", "POST");
    return SendOpenAiError(*sink, 405, fmt::format("use POST {}", request.path));
  }
  // The body's checks and their words are `tandem serve`'s (nesting limit included), so that a
  // client reads the same 400 through the gateway as from an instance.
  Result<json> parsed = ParseJsonBody(request.body);
  if (!parsed.ok()) return SendOpenAiError(*sink, 400, parsed.status().message());
  json body = std::move(parsed).value();
  if (!body.contains("model") || !body["model"].is_string()) {
    return SendOpenAiError(*sink, 400, "'model' (the deployment's name) is required");
  }
  if (body.contains("stream") && !body["stream"].is_boolean() && !body["stream"].is_null()) {
    return SendOpenAiError(*sink, 400, "'stream' must be a boolean");
  }
  if (body.contains("stream_options") && !body["stream_options"].is_object() &&
      !body["stream_options"].is_null()) {
    return SendOpenAiError(*sink, 400, "'stream_options' must be an object");
  }
  const std::string model = body["model"];
  if (!routes_.HasModel(model) || !who.MayUseModel(model)) {
    return SendOpenAiError(*sink, 404, fmt::format("The model `{}` does not exist.", model));
  }
  const bool stream = body.value("stream", json(false)) == true;
  bool injected = false;
  if (stream) {
    json& options = body["stream_options"];
    if (!options.is_object()) options = json::object();
    if (!(options.contains("include_usage") && options["include_usage"] == true)) {
      options["include_usage"] = true;
      injected = true;
    }
  }
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return SendOpenAiError(*sink, 503, "the manager is shutting down");
    ++active_;
  }
  // The proxy runs on the client session's strand: upstream reads and client writes share one
  // thread, so relaying a token costs no thread hop. Without a session (it has gone), a
  // private io_context on a thread of its own finishes the bookkeeping.
  net::any_io_executor executor = sink->Executor();
  // The coroutine's frame owns the count: it drops when the proxy ends, and also when its
  // io_context is destroyed with the proxy unfinished (the manager stopping), so the
  // destructor's wait for active_ == 0 always ends.
  auto in_flight = std::shared_ptr<void>(nullptr, [this](void*) {
    std::lock_guard lock(mutex_);
    --active_;
    cv_.notify_all();
  });
  // The response's count drops when its sink goes: once the session has written it all (or the
  // client left), which is what a shutdown waits for (WaitForResponses).
  {
    std::lock_guard lock(open_responses_->mutex);
    ++open_responses_->count;
  }
  auto response_open = std::shared_ptr<void>(nullptr, [open = open_responses_](void*) {
    std::lock_guard lock(open->mutex);
    --open->count;
    open->cv.notify_all();
  });
  auto proxy = Proxy(request, who, model, std::move(body), stream, injected, sink,
                     std::move(in_flight), std::move(response_open));
  auto done = [](std::exception_ptr error) {
    if (error) TLOG_ERROR("gateway: a proxied request failed unexpectedly");
  };
  if (executor) {
    net::co_spawn(executor, std::move(proxy), std::move(done));
    return;
  }
  std::thread([proxy = std::move(proxy), done = std::move(done)]() mutable {
    net::io_context io_context;
    net::co_spawn(io_context, std::move(proxy), std::move(done));
    io_context.run();
  }).detach();
}

net::awaitable<void> Gateway::Proxy(http::HttpRequest request, Principal who, std::string model,
                                    json body, bool stream, bool usage_injected,
                                    std::shared_ptr<http::ResponseSink> sink,
                                    std::shared_ptr<void> in_flight,
                                    std::shared_ptr<void> response_open) {
  const net::any_io_executor executor = co_await net::this_coro::executor;
  const double start = MonotonicSeconds();
  double first_byte = -1;
  const std::string payload = body.dump();
  std::vector<int64_t> tried;
  std::string last_error = "No running instances available";
  // The call in progress, shared with the disconnect callback (which may run after we return).
  struct Current {
    std::mutex mutex;
    std::shared_ptr<http::HttpCall> call;
    bool client_gone = false;
  };
  auto current = std::make_shared<Current>();
  // The callback lives as long as the sink: it holds the response's count.
  sink->SetOnDisconnect([current, response_open = std::move(response_open)] {
    std::lock_guard lock(current->mutex);
    current->client_gone = true;
    if (current->call) current->call->Cancel();
  });
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    auto upstream = routes_.Pick(model, tried);
    if (!upstream) break;
    tried.push_back(upstream->instance_id);
    http::ClientRequest up;
    up.method = "POST";
    up.url = upstream->base_url + request.path;
    up.body = payload;
    up.headers = {{"Content-Type", "application/json"}};
    if (auto accept = request.Header("accept"); !accept.empty())
      up.headers.emplace_back("Accept", std::string(accept));
    up.connect_timeout_s = 3;
    up.idle_timeout_s = 600;  // a long prefill or queue before the first token
    auto call = std::make_shared<http::HttpCall>(up);
    int64_t call_id;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) {
        upstream->in_flight->fetch_sub(1);
        SendOpenAiError(*sink, 503, "the manager is shutting down");
        co_return;
      }
      call_id = next_call_++;
      calls_[call_id] = call;
    }
    bool client_gone;
    {
      std::lock_guard lock(current->mutex);
      client_gone = current->client_gone;
      if (!client_gone) current->call = call;
    }
    if (client_gone) {
      upstream->in_flight->fetch_sub(1);
      std::lock_guard lock(mutex_);
      calls_.erase(call_id);
      co_return;
    }
    int status = 0;
    bool streaming = false;  // the upstream answered with an event stream we relay
    bool retry = false;
    std::string whole;  // a non-streamed response, relayed at its end
    std::string content_type;
    json usage;
    http::SseSplitter splitter;
    Status result = co_await call->RunAsync(
        executor,
        [&](int code, const http::HeaderList& headers) {
          status = code;
          for (const auto& [k, v] : headers) {
            if (k == "content-type") content_type = v;
          }
          if (code >= 500 && attempt + 1 < kMaxAttempts) {
            retry = true;  // nothing reached the client yet
            last_error = fmt::format("instance answered HTTP {}", code);
            return false;
          }
          first_byte = MonotonicSeconds() - start;
          streaming =
              stream && code == 200 && content_type.find("text/event-stream") != std::string::npos;
          if (streaming) sink->StartStream(content_type, 200);
          return true;
        },
        [&](std::string_view bytes) {
          if (!streaming) {
            whole.append(bytes);
            return whole.size() < (64u << 20);
          }
          // Every whole event of this read goes out in one write.
          std::string out;
          splitter.Feed(bytes, [&](std::string_view whole_event) {
            const std::string event(whole_event);
            if (MayCarryUsage(event)) {
              json data = EventJson(event);
              if (data.is_object() && data.contains("usage") && data["usage"].is_object()) {
                usage = data["usage"];
                if (usage_injected && data.value("choices", json::array()).empty()) return;
              }
            }
            out += event;
          });
          if (!out.empty()) sink->SendStreamData(std::move(out));
          return true;
        });
    upstream->in_flight->fetch_sub(1);
    {
      std::lock_guard lock(mutex_);
      calls_.erase(call_id);
    }
    if (retry) continue;
    if (!result.ok() && !call->head_received()) {
      last_error = result.message();
      std::lock_guard lock(current->mutex);
      if (current->client_gone) co_return;
      continue;  // connect failure: the next instance
    }
    if (streaming) {
      if (result.ok()) {
        std::string rest = splitter.Rest();
        if (!rest.empty()) sink->SendStreamData(std::move(rest));
      } else {
        // Cut mid-stream (the instance went away, or the manager stops): the partial event is
        // dropped and the client told in the stream's own terms (vLLM's in-stream error, which
        // the OpenAI clients raise), with no [DONE]: the answer is incomplete.
        sink->SendStreamData("data: " + OpenAiErrorBody(503, CutMessage(result)) + "\n\n");
      }
      sink->EndStream();
    } else {
      if (!result.ok()) {
        if (Stopping()) {
          SendOpenAiError(*sink, 503, "the manager is shutting down");
        } else {
          SendOpenAiError(*sink, 502, "the instance failed while answering: " + result.message());
        }
        co_return;
      }
      json parsed = json::parse(whole, nullptr, false);
      if (parsed.is_object() && parsed.contains("usage")) usage = parsed["usage"];
      sink->SendResponse(status, content_type.empty() ? "application/json" : content_type,
                         std::move(whole));
    }
    if (status == 200) RecordUsage(who, model, usage);
    Observe(model, status, MonotonicSeconds() - start, first_byte);
    timeline_.Record(WallSeconds(), model,
                     usage.is_object() ? usage.value("completion_tokens", int64_t{0}) : 0,
                     status == 200 ? first_byte : -1);
    co_return;
  }
  Observe(model, 503, MonotonicSeconds() - start, -1);
  timeline_.Record(WallSeconds(), model, 0, -1);
  SendOpenAiError(*sink, 503,
                  tried.empty() ? "No running instances available"
                                : "No running instance answered: " + last_error);
}

}  // namespace tandem::cluster::manager
