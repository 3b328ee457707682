// qwen3_coder: <function=NAME><parameter=P>VALUE</parameter>…</function> inside <tool_call>,
// values converted by the tool's JSON schema type.
// Reference: vLLM entrypoints/openai/tool_parsers/qwen3coder_tool_parser.py
// (_convert_param_value).
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "text/bounded_json.h"
#include "text/jinja/value.h"
#include "text/tool_call_parser.h"

namespace tandem::text {
namespace {

using OJson = nlohmann::ordered_json;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool StartsWith(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The schema "type" of parameter `param` of function `function` in the OpenAI tools array;
// "" when the tool or the parameter is not declared.
std::string ParamType(const OJson& tools, const std::string& function, const std::string& param) {
  if (!tools.is_array()) return "";
  for (const OJson& tool : tools) {
    if (!tool.is_object() || !tool.contains("function")) continue;
    const OJson& f = tool["function"];
    if (!f.is_object() || f.value("name", "") != function) continue;
    if (!f.contains("parameters") || !f["parameters"].is_object()) return "";
    const OJson& params = f["parameters"];
    if (!params.contains("properties") || !params["properties"].is_object()) return "";
    const OJson& props = params["properties"];
    if (!props.contains(param) || !props[param].is_object()) return "";
    const OJson& type = props[param].contains("type") ? props[param]["type"] : OJson();
    if (type.is_string()) return Lower(type.get<std::string>());
    return "object";  // no/compound type: try JSON
  }
  return "";
}

OJson ConvertValue(const std::string& value, const std::string& type) {
  if (Lower(value) == "null") return nullptr;
  if (type.empty() || type == "string" || type == "str" || type == "text" || type == "varchar" ||
      type == "char" || type == "enum") {
    return value;
  }
  const std::string_view v = Trim(value);
  if (StartsWith(type, "int") || StartsWith(type, "uint") || StartsWith(type, "long") ||
      StartsWith(type, "short") || StartsWith(type, "unsigned")) {
    int64_t n = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec == std::errc() && ptr == v.data() + v.size()) return n;
    return value;
  }
  if (StartsWith(type, "num") || StartsWith(type, "float") || type == "double") {
    const std::string s(v);
    char* end = nullptr;
    const double d = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d)) return value;
    if (d == std::trunc(d) && std::fabs(d) < 9e15) return static_cast<int64_t>(d);
    return d;
  }
  if (type == "boolean" || type == "bool" || type == "binary")
    return Lower(std::string(v)) == "true";
  OJson parsed = ParseBoundedOrderedOrDiscarded(v);
  if (!parsed.is_discarded()) return parsed;
  return value;
}

// One "<function=NAME>…" segment (without the closing tag) → a call; nullopt when malformed.
std::optional<ToolCall> ParseFunction(std::string_view segment, const OJson& tools) {
  const size_t name_end = segment.find('>');
  if (name_end == std::string_view::npos) return std::nullopt;
  ToolCall call;
  call.name = std::string(Trim(segment.substr(0, name_end)));
  if (call.name.empty()) return std::nullopt;
  OJson arguments = OJson::object();
  std::string_view rest = segment.substr(name_end + 1);
  constexpr std::string_view kParam = "<parameter=";
  constexpr std::string_view kParamEnd = "</parameter>";
  for (size_t at = rest.find(kParam); at != std::string_view::npos; at = rest.find(kParam)) {
    rest.remove_prefix(at + kParam.size());
    const size_t pname_end = rest.find('>');
    if (pname_end == std::string_view::npos) return std::nullopt;
    const std::string param(Trim(rest.substr(0, pname_end)));
    rest.remove_prefix(pname_end + 1);
    size_t value_end = std::min(rest.find(kParamEnd), rest.find(kParam));
    if (value_end == std::string_view::npos) value_end = rest.size();
    std::string_view value = rest.substr(0, value_end);
    if (!value.empty() && value.front() == '\n') value.remove_prefix(1);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    arguments[param] = ConvertValue(std::string(value), ParamType(tools, call.name, param));
    rest.remove_prefix(value_end);
    if (rest.substr(0, kParamEnd.size()) == kParamEnd) rest.remove_prefix(kParamEnd.size());
  }
  call.arguments = jinja::ToJsonText(arguments, -1);
  return call;
}

class Qwen3CoderToolCallParser : public ToolCallParser {
 public:
  explicit Qwen3CoderToolCallParser(OJson tools) : tools_(std::move(tools)) {}

 protected:
  std::optional<std::vector<ToolCall>> ParseBlock(std::string_view body) const override {
    constexpr std::string_view kFunction = "<function=";
    constexpr std::string_view kFunctionEnd = "</function>";
    std::vector<ToolCall> calls;
    std::string_view rest = body;
    for (size_t at = rest.find(kFunction); at != std::string_view::npos;
         at = rest.find(kFunction)) {
      if (!Trim(rest.substr(0, at)).empty()) return std::nullopt;  // stray text in the block
      rest.remove_prefix(at + kFunction.size());
      size_t end = rest.find(kFunctionEnd);
      const std::string_view segment = rest.substr(0, end);
      std::optional<ToolCall> call = ParseFunction(segment, tools_);
      if (!call) return std::nullopt;
      calls.push_back(std::move(*call));
      rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + kFunctionEnd.size());
    }
    if (calls.empty() || !Trim(rest).empty()) return std::nullopt;
    return calls;
  }

 private:
  OJson tools_;
};

}  // namespace

std::unique_ptr<ToolCallParser> MakeQwen3CoderToolCallParser(nlohmann::ordered_json tools) {
  return std::make_unique<Qwen3CoderToolCallParser>(std::move(tools));
}

}  // namespace tandem::text
