// ToolCallParser: finds tool calls in generated text, incrementally, for
// `--tool-call-parser hermes|qwen3_coder`. Both formats wrap each call in a
// "<tool_call>…</tool_call>" block; what is inside differs:
//   hermes (Qwen2.5/Qwen3):        <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>
//   qwen3_coder (Qwen3-Coder/3.5): <tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n
//                                  </function>\n</tool_call>
// qwen3_coder values are text; they are converted by the type the tool's JSON schema gives the
// parameter (integer, number, boolean, object, array; anything else stays a string).
//
// Text outside blocks is content. A block is reported once whole (its closing tag seen, or at
// Finish for an unterminated one); a block that does not parse comes back verbatim as content,
// never as an error. After the first call, whitespace-only content between/after calls is
// dropped. A trailing partial "<tool_call>" is held back until the next Feed or Finish.
// Reference: vLLM entrypoints/openai/tool_parsers/hermes_tool_parser.py and
// qwen3coder_tool_parser.py.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace tandem::text {

struct ToolCall {
  std::string name;
  std::string arguments;  // a JSON object as text, json.dumps spacing ({"a": 1})
};

struct ToolCallDelta {
  std::string content;          // new content text
  std::vector<ToolCall> calls;  // calls completed by this Feed/Finish, in order
};

class ToolCallParser {
 public:
  virtual ~ToolCallParser() = default;

  // `name`: "hermes" or "qwen3_coder". `tools`: the request's OpenAI `tools` array (may be
  // null/empty), read for parameter types. Errors: kInvalidArgument for an unknown name.
  static Result<std::unique_ptr<ToolCallParser>> Create(std::string_view name,
                                                        const nlohmann::ordered_json& tools);

  ToolCallDelta Feed(std::string_view text);
  ToolCallDelta Finish();

  // Parses a whole output at once (Feed + Finish).
  ToolCallDelta ParseAll(std::string_view text);

  int32_t num_calls() const { return num_calls_; }

 protected:
  // The calls in one block's inner text (between the tags); nullopt when it does not parse.
  virtual std::optional<std::vector<ToolCall>> ParseBlock(std::string_view body) const = 0;

 private:
  void EmitContent(ToolCallDelta* out, std::string_view text);
  void CloseBlock(ToolCallDelta* out, bool terminated);

  bool in_block_ = false;
  std::string buffer_;      // outside: held partial tag; inside: the block's text so far
  std::string pending_ws_;  // whitespace after a call, dropped unless content follows
  int32_t num_calls_ = 0;
};

// The parameter-typed parser behind "qwen3_coder" and the JSON one behind "hermes"; exposed
// for tests.
std::unique_ptr<ToolCallParser> MakeHermesToolCallParser();
std::unique_ptr<ToolCallParser> MakeQwen3CoderToolCallParser(nlohmann::ordered_json tools);

}  // namespace tandem::text
