#include "server/openai/serving.h"

#include <atomic>

#include "server/json_dump.h"
#include "server/sse.h"

namespace tandem::server::openai {

using nlohmann::json;

void SendError(ResponseSink& sink, const ApiError& error) {
  sink.SendResponse(HttpStatusFor(error.status.code()), "application/json", ErrorBody(error));
}

void SendStreamError(ResponseSink& sink, const ApiError& error) {
  sink.SendStreamData(SseEvent(ErrorBody(error)));
  EndSseStream(sink, nullptr);
}

void EndSseStream(ResponseSink& sink, const json& final_chunk) {
  if (!final_chunk.is_null()) sink.SendStreamData(SseEvent(DumpJson(final_chunk)));
  sink.SendStreamData(SseDone());
  sink.EndStream();
}

json UsageJson(const GenerationUsage& usage) {
  // vLLM: null unless --enable-prompt-tokens-details.
  return {
      {"prompt_tokens", usage.prompt_tokens},
      {"completion_tokens", usage.completion_tokens},
      {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
      {"prompt_tokens_details",
       usage.prompt_tokens_details ? json{{"cached_tokens", usage.cached_tokens}} : json(nullptr)}};
}

json UsageChunk(json envelope, const GenerationUsage& usage) {
  envelope["choices"] = json::array();
  envelope["usage"] = UsageJson(usage);
  return envelope;
}

std::string ResponseId(const char* prefix, const std::string& header_request_id,
                       const GenerationRequest& request) {
  if (!header_request_id.empty()) return prefix + header_request_id;
  if (!request.request_id.empty()) return prefix + request.request_id;
  return RandomRequestId(prefix);
}

std::string EngineIdBase(const std::string& response_id, const std::string& header_request_id,
                         const GenerationRequest& request) {
  if (header_request_id.empty() && request.request_id.empty()) return response_id;
  return RandomRequestId(response_id + "-");
}

void ServeGeneration(const ServerContext& context, const GenerationRequest& request,
                     double arrival_time_s, std::vector<GenerationSpec> generations,
                     const std::shared_ptr<ResponseSink>& sink, const ServeHooks& hooks) {
  if (!context.engine->IsReady()) {
    return hooks.send_error(*sink, {Unavailable(context.engine->NotReadyReason()), ""});
  }
  // Weak: each Generation's callbacks hold the sink, and the sink holds the disconnect callback.
  // Filled before any Generation starts, read-only after.
  auto all = std::make_shared<std::vector<std::weak_ptr<Generation>>>();
  // The first error answers the call. A later one (another prompt failing at the same moment,
  // on another thread) returns at once: it runs under its own Generation's mutex, and locking
  // the others' (Abort) from there while the first holds its own and aborts ours would deadlock.
  auto failed = std::make_shared<std::atomic<bool>>(false);
  std::vector<std::shared_ptr<Generation>> started;
  std::vector<std::function<void(const ApiError&)>> on_errors;  // per Generation
  for (size_t k = 0; k < generations.size(); ++k) {
    GenerationSpec& spec = generations[k];
    // An error of one Generation ends the call: the others are aborted before it is answered.
    spec.callbacks.on_error = [all, failed, k,
                               answer = std::move(spec.callbacks.on_error)](const ApiError& error) {
      if (failed->exchange(true)) return;
      for (size_t j = 0; j < all->size(); ++j) {
        if (auto other = (*all)[j].lock(); other && j != k) other->Abort();
      }
      answer(error);
    };
    on_errors.push_back(spec.callbacks.on_error);
    started.push_back(std::make_shared<Generation>(context, std::move(spec.engine_request_id),
                                                   std::move(spec.prompt_token_ids), request,
                                                   arrival_time_s, std::move(spec.callbacks)));
    all->push_back(started.back());
  }
  sink->SetOnDisconnect([all] {
    for (const std::weak_ptr<Generation>& weak : *all) {
      if (auto generation = weak.lock()) generation->Abort();
    }
  });
  if (request.stream) {
    sink->StartStream("text/event-stream");  // queued before any engine output
    if (hooks.open_stream) hooks.open_stream();
  }
  for (size_t k = 0; k < started.size(); ++k) {
    Status status = started[k]->Start();
    if (!status.ok()) return on_errors[k]({status, ""});
  }
}

}  // namespace tandem::server::openai
