#include "server/openai/request_log.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/logging.h"

namespace tandem::server::openai {
namespace {

// Python's repr of a float: the shortest digits that read back, with ".0" when integral.
std::string PyFloat(float v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";  // n: inf, nan
  return s;
}

const char* PyBool(bool v) { return v ? "True" : "False"; }

// Python's repr of a str: single quotes, backslash escapes for quotes and control bytes.
std::string PyStr(const std::string& s) {
  std::string out = "'";
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "'";
}

std::string PyStrList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + PyStr(items[i]);
  return out + "]";
}

template <typename Int>
std::string PyIntList(const std::vector<Int>& items) {
  return fmt::format("[{}]", fmt::join(items, ", "));
}

// The first `max_chars` characters (UTF-8 code points, as Python counts) of `text`.
std::string FirstChars(const std::string& text, int32_t max_chars) {
  int32_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool starts_char = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_char && chars++ == max_chars) return text.substr(0, i);
  }
  return text;
}

}  // namespace

std::string SamplingParamsRepr(const GenerationRequest& request) {
  const protocol::SamplingParams& s = request.sampling;
  return fmt::format(
      "SamplingParams(n={}, presence_penalty={}, frequency_penalty={}, repetition_penalty={}, "
      "temperature={}, top_p={}, top_k={}, min_p={}, seed={}, stop={}, stop_token_ids={}, "
      "bad_words={}, include_stop_str_in_output={}, ignore_eos={}, max_tokens={}, "
      "min_tokens={}, logprobs={}, skip_special_tokens={}, truncate_prompt_tokens={}, "
      "structured_outputs={})",
      request.n, PyFloat(s.presence_penalty), PyFloat(s.frequency_penalty),
      PyFloat(s.repetition_penalty), PyFloat(s.temperature), PyFloat(s.top_p), s.top_k,
      PyFloat(s.min_p), s.has_seed ? std::to_string(s.seed) : "None", PyStrList(request.stop),
      PyIntList(s.stop_token_ids), PyStrList(request.bad_words),
      PyBool(request.include_stop_str_in_output), PyBool(s.ignore_eos), s.max_tokens, s.min_tokens,
      s.logprobs >= 0 ? std::to_string(s.logprobs) : "None", PyBool(request.skip_special_tokens),
      request.truncate_prompt_tokens != 0 ? std::to_string(request.truncate_prompt_tokens) : "None",
      s.structured_grammar.empty()
          ? "None"
          : fmt::format("StructuredOutputsParams(grammar=<{} bytes of GBNF>)",
                        s.structured_grammar.size()));
}

void LogReceivedRequest(const ServerContext& context, const std::string& request_id,
                        const std::vector<int32_t>& prompt_token_ids,
                        const GenerationRequest& request) {
  if (!context.config.enable_log_requests) return;
  if (spdlog::should_log(spdlog::level::debug)) {
    const int32_t max_log_len = context.config.max_log_len;  // < 0: unlimited
    std::string prompt = context.tokenizer->Decode(prompt_token_ids, /*skip_special_tokens=*/false);
    std::vector<int32_t> ids = prompt_token_ids;
    if (max_log_len >= 0) {
      prompt = FirstChars(prompt, max_log_len);
      if (static_cast<int32_t>(ids.size()) > max_log_len) ids.resize(max_log_len);
    }
    TLOG_DEBUG("Request {} details: prompt: {}, prompt_token_ids: {}, prompt_embeds shape: None.",
               request_id, PyStr(prompt), PyIntList(ids));
  }
  TLOG_INFO("Received request {}: params: {}, lora_request: None.", request_id,
            SamplingParamsRepr(request));
}

}  // namespace tandem::server::openai
