// Server-sent events framing for OpenAI streaming responses: each chunk is one
// `data: <json>\n\n` event; the stream ends with `data: [DONE]\n\n`.
// Reference: OpenAI streaming API; vLLM serving_completion / serving_chat generators.
#pragma once

#include <string>
#include <string_view>

namespace tandem::server {

// `data: <payload>\n\n`. `payload` must not contain a newline (compact JSON never does).
std::string SseEvent(std::string_view payload);

// The terminating event, `data: [DONE]\n\n`.
std::string SseDone();

// One HTTP/1.1 chunk of chunked transfer encoding: "<hex size>\r\n<data>\r\n".
std::string HttpChunk(std::string_view data);

// The last chunk, "0\r\n\r\n".
std::string HttpLastChunk();

}  // namespace tandem::server
