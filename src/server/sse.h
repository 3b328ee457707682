// Server-sent events framing for OpenAI streaming responses: each chunk is one
// `data: <json>\n\n` event; the stream ends with `data: [DONE]\n\n`.
// Reference: OpenAI streaming API; vLLM serving_completion / serving_chat generators.
#pragma once

#include <string>
#include <string_view>

namespace tandem::server {

// `data: <payload>\n\n`. `payload` must not contain a newline (compact JSON never does).
inline std::string SseEvent(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 8);
  out += "data: ";
  out += payload;
  out += "\n\n";
  return out;
}

// The terminating event, `data: [DONE]\n\n`.
inline std::string SseDone() { return "data: [DONE]\n\n"; }

}  // namespace tandem::server
