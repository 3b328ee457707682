// Fuzzes the chat-template engine (text/jinja: lexer, parser, interpreter, builtins) through
// text::ChatTemplate: the input is a template, parsed, then rendered with a chat request's
// variables under tight RenderLimits (the limits are what stop a template program that loops,
// recurses or grows).
// Invariants beyond "no crash, no UB, no leak, no hang": a render ends within its limits (the
// output is at most max_output_bytes) and rendering the same template twice gives the same
// text (no state leaks between renders).
// Seeds: ../shared/models/chat-templates/*.jinja and the chat_template of each
// tokenizer_config.json under ../shared/models.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_util.h"
#include "text/chat_template.h"

namespace {

nlohmann::ordered_json MakeContext() {
  return nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "Hi <b>there</b> \u00e9"},
      {"role": "assistant", "content": "<think>\nhm\n</think>\n\nHello",
       "tool_calls": [{"type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "content": "{\"temp\": 21}"},
      {"role": "user", "content": [{"type": "text", "text": "and tomorrow?"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather",
      "description": "Weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
    "add_generation_prompt": true, "enable_thinking": false,
    "bos_token": "<s>", "eos_token": "</s>"
  })");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlohmann::ordered_json context = MakeContext();
  auto parsed =
      tandem::text::ChatTemplate::Parse(std::string(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  tandem::text::ChatTemplateLimits limits;
  limits.max_recursion_depth = 32;
  limits.max_loop_iterations = 20000;
  limits.max_output_bytes = 1 << 16;
  limits.timeout_s = 2.0;
  auto first = parsed->Render(context, limits);
  auto second = parsed->Render(context, limits);
  // strftime_now reads the clock, and a render near its timeout may end either way.
  const bool clock_free = parsed->source().find("strftime_now") == std::string::npos;
  if (clock_free && first.ok() && second.ok() && *first != *second) {
    tandem::fuzz::Fail("two renders of one template differ");
  }
  if (first.ok() && first->size() > static_cast<size_t>(limits.max_output_bytes)) {
    tandem::fuzz::Fail("render output exceeds max_output_bytes");
  }
  return 0;
}
