#include "apps/bench/openai_stream_request.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "apps/bench/http_client.h"
#include "apps/bench/sse_event_parser.h"
#include "core/clock.h"

namespace tandem::apps::bench {
namespace {

using nlohmann::json;

// The server's error message from an OpenAI error body, else the start of the raw body.
std::string ErrorFromBody(const std::string& body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && parsed.contains("error")) {
    const json& err = parsed["error"];
    if (err.is_object() && err.contains("message") && err["message"].is_string()) {
      return err["message"].get<std::string>();
    }
    if (err.is_string()) return err.get<std::string>();
  }
  return body.substr(0, 300);
}

// Text generated in one stream chunk ("" when none).
std::string ChunkText(const json& choice, bool chat) {
  const json* text = nullptr;
  if (chat) {
    if (choice.contains("delta") && choice["delta"].is_object() &&
        choice["delta"].contains("content")) {
      text = &choice["delta"]["content"];
    }
  } else if (choice.contains("text")) {
    text = &choice["text"];
  }
  return text != nullptr && text->is_string() ? text->get<std::string>() : std::string();
}

// Folds one SSE event into `out`; returns true when it was the terminating [DONE].
bool HandleEvent(const std::string& data, double arrival_s, double send_s, bool chat,
                 double& last_token_s, int& num_text_chunks, RequestOutput& out) {
  if (data == "[DONE]") return true;
  json chunk = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (chunk.is_discarded() || !chunk.is_object()) {
    if (out.error.empty()) out.error = "unparsable stream event: " + data.substr(0, 200);
    return false;
  }
  if (chunk.contains("error")) {
    if (out.error.empty()) out.error = "error event: " + ErrorFromBody(data);
    return false;
  }
  if (chunk.contains("choices") && chunk["choices"].is_array() && !chunk["choices"].empty()) {
    std::string text = ChunkText(chunk["choices"][0], chat);
    if (!text.empty()) {
      if (num_text_chunks == 0) {
        out.ttft_s = arrival_s - send_s;
      } else {
        out.itl_s.push_back(arrival_s - last_token_s);
      }
      last_token_s = arrival_s;
      ++num_text_chunks;
      out.generated_text += text;
    }
  }
  if (chunk.contains("usage") && chunk["usage"].is_object()) {
    const json& usage = chunk["usage"];
    if (usage.contains("completion_tokens") && usage["completion_tokens"].is_number_integer()) {
      out.output_len = usage["completion_tokens"].get<int>();
      out.usage_reported = true;
    }
    if (usage.contains("prompt_tokens") && usage["prompt_tokens"].is_number_integer()) {
      out.prompt_len = usage["prompt_tokens"].get<int>();
    }
  }
  return false;
}

}  // namespace

std::string BuildRequestBody(const StreamRequestOptions& options, const BenchRequest& request) {
  json body = {{"model", options.model},
               {"max_tokens", request.max_tokens},
               {"temperature", 0.0},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (options.chat) {
    body["messages"] = json::array({{{"role", "user"}, {"content", request.prompt_text}}});
  } else {
    body["prompt"] = request.prompt_token_ids;
  }
  if (options.ignore_eos) body["ignore_eos"] = true;
  return body.dump();
}

RequestOutput SendStreamRequest(const StreamRequestOptions& options, const BenchRequest& request) {
  RequestOutput out;
  out.prompt_len = request.input_len;
  out.is_long = request.is_long;

  HttpRequestSpec spec;
  spec.path = options.endpoint;
  spec.body = BuildRequestBody(options, request);
  spec.api_key = options.api_key;
  spec.idle_timeout_s = options.idle_timeout_s;

  SseEventParser sse;
  std::string raw_body;  // kept only for error statuses
  bool done = false;
  double last_token_s = 0;
  int num_text_chunks = 0;
  int status_seen = 0;
  const double send_s = MonotonicSeconds();
  out.start_s = send_s - options.bench_start_s;

  Result<int> status = HttpExchange(options.target, spec, [&](std::string_view piece, double t) {
    if (raw_body.size() < 4096) raw_body.append(piece.substr(0, 4096 - raw_body.size()));
    for (const std::string& data : sse.Feed(piece)) {
      done = HandleEvent(data, t, send_s, options.chat, last_token_s, num_text_chunks, out) || done;
    }
  });
  out.latency_s = MonotonicSeconds() - send_s;
  if (!status.ok()) {
    out.error = status.status().message();
    return out;
  }
  status_seen = *status;
  if (status_seen != 200) {
    out.error = fmt::format("HTTP {}: {}", status_seen, ErrorFromBody(raw_body));
    return out;
  }
  if (!out.error.empty()) return out;
  if (!done) {
    out.error = "stream ended before 'data: [DONE]'";
    return out;
  }
  if (!out.usage_reported) out.output_len = num_text_chunks;
  out.success = true;
  return out;
}

Result<std::string> FetchFirstModelId(const HttpTarget& target, const std::string& api_key,
                                      double idle_timeout_s) {
  HttpRequestSpec spec;
  spec.method = "GET";
  spec.path = "/v1/models";
  spec.api_key = api_key;
  spec.idle_timeout_s = idle_timeout_s;
  std::string body;
  Result<int> status =
      HttpExchange(target, spec, [&](std::string_view piece, double) { body.append(piece); });
  if (!status.ok()) return status.status();
  if (*status != 200) {
    return Unavailable(fmt::format("GET {}/v1/models returned HTTP {}: {}", target.ToString(),
                                   *status, ErrorFromBody(body)));
  }
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || !parsed.contains("data") || !parsed["data"].is_array() ||
      parsed["data"].empty() || !parsed["data"][0].contains("id") ||
      !parsed["data"][0]["id"].is_string()) {
    return InvalidArgument(fmt::format(
        "GET {}/v1/models: expected {{\"data\":[{{\"id\":...}}]}}; found '{}'; pass --model",
        target.ToString(), body.substr(0, 200)));
  }
  return parsed["data"][0]["id"].get<std::string>();
}

}  // namespace tandem::apps::bench
