// ForcedToolCallStream: the tool calls that tool_choice "required" or a named function forces
// (structured_outputs.h ForcedToolCallGrammar), streamed while they are generated, as vLLM's
// chat stream sends them: a call starts (index, id, name) as soon as its name is known, and its
// arguments follow in pieces as their text arrives.
// - named function: the output is the arguments JSON itself;
// - "required": the output is [{"name": "<f>", "parameters": <arguments>}, ...]; the arguments
//   are the raw text of each "parameters" value (valid JSON: the grammar made it so).
// Reference: vLLM entrypoints/openai/serving_chat.py, chat_completion_stream_generator
// (tool_choice_function_name / tool_choice "required" branches).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::server::openai {

// New output of one call since the last Feed. `name` non-empty: the call starts here (send its
// id, type and name with these arguments).
struct ToolCallStreamDelta {
  int32_t index = 0;  // the call's index in the choice's tool_calls
  std::string name;
  std::string arguments;  // text to append to the call's arguments
};

class ForcedToolCallStream {
 public:
  // `named_function` non-empty: the named-function shape; empty: the "required" array shape.
  explicit ForcedToolCallStream(std::string named_function);

  // Consumes the next piece of the output; returns the calls' new pieces, one entry per call
  // that changed, in order.
  std::vector<ToolCallStreamDelta> Feed(std::string_view text);

  int32_t num_calls() const { return num_calls_; }

 private:
  enum class Phase { kKey, kColon, kValue, kInValue, kAfterValue };
  enum class ValueKind { kContainer, kString, kLiteral };

  void Char(char c, std::vector<ToolCallStreamDelta>* out);
  void EndValue(std::vector<ToolCallStreamDelta>* out);
  void Emit(std::string_view arguments, std::vector<ToolCallStreamDelta>* out);
  static void Append(ToolCallStreamDelta delta, std::vector<ToolCallStreamDelta>* out);

  const std::string named_function_;
  int32_t num_calls_ = 0;

  // "required" shape: a small JSON scanner over the array of call objects.
  int32_t depth_ = 0;  // 1 in the array, 2 in a call object, more inside a value
  bool in_string_ = false;
  bool escape_ = false;
  Phase phase_ = Phase::kKey;
  ValueKind value_kind_ = ValueKind::kLiteral;
  std::string key_;        // the call object's key whose value is being read
  std::string collected_;  // raw JSON text of the key or name string being read
  bool collecting_ = false;
  bool streaming_ = false;  // inside the "parameters" value
  std::string name_;        // the current call's name, once known
  std::string pending_;     // arguments that came before the name
};

}  // namespace tandem::server::openai
