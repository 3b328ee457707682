// hermes: each <tool_call> block holds one JSON object {"name": ..., "arguments": {...}}.
// Reference: vLLM entrypoints/openai/tool_parsers/hermes_tool_parser.py.
#include "text/bounded_json.h"
#include "text/jinja/value.h"
#include "text/tool_call_parser.h"

namespace tandem::text {
namespace {

class HermesToolCallParser : public ToolCallParser {
 protected:
  std::optional<std::vector<ToolCall>> ParseBlock(std::string_view body) const override {
    const nlohmann::ordered_json call = ParseBoundedOrderedOrDiscarded(body);
    if (call.is_discarded() || !call.is_object()) return std::nullopt;
    const auto name = call.find("name");
    if (name == call.end() || !name->is_string() || name->get<std::string>().empty()) {
      return std::nullopt;
    }
    ToolCall out;
    out.name = name->get<std::string>();
    auto arguments = call.find("arguments");
    if (arguments == call.end()) arguments = call.find("parameters");
    if (arguments == call.end() || arguments->is_null()) {
      out.arguments = "{}";
    } else if (arguments->is_string()) {  // already JSON text (some fine-tunes do this)
      out.arguments = arguments->get<std::string>();
    } else {
      out.arguments = jinja::ToJsonText(*arguments, -1);
    }
    return std::vector<ToolCall>{std::move(out)};
  }
};

}  // namespace

std::unique_ptr<ToolCallParser> MakeHermesToolCallParser() {
  return std::make_unique<HermesToolCallParser>();
}

}  // namespace tandem::text
