#include "server/openai/structured_outputs.h"

#include <fmt/format.h>

#include <vector>

#include "core/logging.h"
#include "server/openai/request_parsing.h"
#include "structured/automaton.h"
#include "structured/gbnf_parser.h"
#include "structured/json_schema_compiler.h"
#include "structured/regex_compiler.h"
#include "text/bounded_json.h"

namespace tandem::server::openai {

using OJson = nlohmann::ordered_json;  // schemas keep their key order (property order)

namespace {

// One requested constraint before compilation.
struct Constraint {
  std::string field;  // where it came from, for messages ("response_format", "guided_regex")
  enum class Kind { kJsonSchema, kJsonObject, kRegex, kChoice, kGrammar } kind;
  OJson value;
};

bool Present(const OJson& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && !it->is_null();
}

// Builds the grammar of one constraint and checks that it compiles into an automaton.
ApiResult<std::string> Compile(const Constraint& c, bool any_whitespace) {
  Result<structured::Grammar> grammar = structured::Grammar{};
  switch (c.kind) {
    case Constraint::Kind::kJsonSchema: {
      OJson schema = c.value;
      if (schema.is_string()) {  // vLLM accepts the schema as JSON text too
        text::BoundedJsonError error;
        if (!text::ParseBoundedJson(c.value.get<std::string>(), kMaxJsonDepth, &schema, &error)) {
          return BadParam(c.field, fmt::format("'{}' is a string that is not JSON: {}", c.field,
                                               error.message));
        }
      }
      grammar = structured::CompileJsonSchema(schema);
      break;
    }
    case Constraint::Kind::kJsonObject:
      grammar = structured::JsonObjectGrammar();
      break;
    case Constraint::Kind::kRegex: {
      auto expr = structured::CompileRegex(c.value.get<std::string>());
      if (!expr.ok()) {
        return BadParam(c.field, expr.status().message());
      }
      structured::Grammar g;
      g.Add("root", std::move(expr).value());
      grammar = std::move(g);
      break;
    }
    case Constraint::Kind::kChoice: {
      std::vector<structured::Expr> literals;
      for (const OJson& choice : c.value) {
        literals.push_back(structured::Literal(choice));
      }
      structured::Grammar g;
      g.Add("root", structured::Choice(std::move(literals)));
      grammar = std::move(g);
      break;
    }
    case Constraint::Kind::kGrammar:
      grammar = structured::ParseGbnf(c.value.get<std::string>());
      break;
  }
  if (!grammar.ok()) {
    return BadParam(c.field, grammar.status().message());
  }
  if (!any_whitespace) {
    for (auto& [name, body] : grammar.value().rules) {
      if (name == "ws" && c.kind != Constraint::Kind::kGrammar) {
        body = structured::Empty();
      }
    }
  }
  // Checked exactly as the workers will compile it: from the GBNF text, so a grammar near a
  // limit cannot pass here and fail there.
  std::string gbnf = structured::ToGbnf(*grammar);
  auto reparsed = structured::ParseGbnf(gbnf);
  if (!reparsed.ok()) {
    return ApiError{Internal("structured output grammar does not round-trip through GBNF: " +
                             reparsed.status().message()),
                    c.field};
  }
  auto automaton = structured::Automaton::Compile(*reparsed);
  if (!automaton.ok()) {
    return BadParam(c.field, automaton.status().message());
  }
  return gbnf;
}

ApiResult<bool> CheckString(const OJson& value, const std::string& field) {
  if (!value.is_string()) {
    return BadParam(
        field, fmt::format("'{}' must be a string; found {}", field, JsonTypeWithArticle(value)));
  }
  return true;
}

ApiResult<bool> CheckChoices(const OJson& value, const std::string& field) {
  if (!value.is_array() || value.empty()) {
    return BadParam(field, fmt::format("'{}' must be a non-empty array of strings", field));
  }
  for (const OJson& v : value) {
    if (!v.is_string()) {
      return BadParam(field, fmt::format("'{}' must be a non-empty array of strings; found {} "
                                         "in it",
                                         field, JsonTypeWithArticle(v)));
    }
  }
  return true;
}

// Adds the constraint of one field holding a schema, regex, choice list or grammar.
ApiResult<bool> AddField(const OJson& object, const char* key, const std::string& field,
                         Constraint::Kind kind, std::vector<Constraint>* out) {
  if (!Present(object, key)) {
    return true;
  }
  const OJson& value = object.at(key);
  if (kind == Constraint::Kind::kRegex || kind == Constraint::Kind::kGrammar) {
    TANDEM_API_ASSIGN_OR_RETURN(bool ok, CheckString(value, field));
    (void)ok;
  } else if (kind == Constraint::Kind::kChoice) {
    TANDEM_API_ASSIGN_OR_RETURN(bool ok, CheckChoices(value, field));
    (void)ok;
  } else if (!value.is_object() && !value.is_string() && !value.is_boolean()) {
    return BadParam(field, fmt::format("'{}' must be a JSON schema (an object); found {}", field,
                                       JsonTypeWithArticle(value)));
  }
  out->push_back({field, kind, value});
  return true;
}

ApiResult<bool> ParseResponseFormat(const OJson& body, std::vector<Constraint>* out) {
  if (!Present(body, "response_format")) {
    return true;
  }
  const OJson& format = body["response_format"];
  if (!format.is_object()) {
    return BadParam("response_format", fmt::format("'response_format' must be an object; found {}",
                                                   JsonTypeWithArticle(format)));
  }
  if (!format.contains("type") || !format["type"].is_string()) {
    return BadParam("response_format",
                    fmt::format("'response_format.type' must be a string (text, json_object or "
                                "json_schema); found {}",
                                format.contains("type") ? JsonTypeWithArticle(format["type"])
                                                        : std::string("none")));
  }
  const std::string type = format["type"].get<std::string>();
  if (type == "text") {
    return true;
  }
  if (type == "json_object") {
    out->push_back({"response_format", Constraint::Kind::kJsonObject, nullptr});
    return true;
  }
  if (type == "structural_tag") {
    return BadParam("response_format",
                    "'response_format' type 'structural_tag' is not "
                    "supported by tandem; use json_schema");
  }
  if (type != "json_schema") {
    return BadParam("response_format",
                    fmt::format("unknown 'response_format' type '{}'; expected text, json_object "
                                "or json_schema",
                                type));
  }
  if (!Present(format, "json_schema") || !format["json_schema"].is_object()) {
    return BadParam("response_format",
                    "'response_format.json_schema' must be an object with "
                    "the schema under 'schema'");
  }
  const OJson& spec = format["json_schema"];
  // OpenAI names the field "schema"; vLLM also reads "json_schema" (older clients).
  const char* key = Present(spec, "schema") ? "schema" : "json_schema";
  if (!Present(spec, key)) {
    return BadParam("response_format", "'response_format.json_schema.schema' is required");
  }
  return AddField(spec, key, "response_format", Constraint::Kind::kJsonSchema, out);
}

struct Options {
  bool any_whitespace = true;
};

ApiResult<bool> ParseStructuredOutputsField(const OJson& body, std::vector<Constraint>* out,
                                            Options* options) {
  if (!Present(body, "structured_outputs")) {
    return true;
  }
  const OJson& so = body["structured_outputs"];
  if (!so.is_object()) {
    return BadParam("structured_outputs", fmt::format("'structured_outputs' must be an object; "
                                                      "found {}",
                                                      JsonTypeWithArticle(so)));
  }
  for (const char* refused : {"structural_tag", "whitespace_pattern"}) {
    if (Present(so, refused)) {
      return BadParam("structured_outputs",
                      fmt::format("'structured_outputs.{}' is not supported by tandem", refused));
    }
  }
  using K = Constraint::Kind;
  for (auto [key, kind] : {std::pair{"json", K::kJsonSchema}, std::pair{"regex", K::kRegex},
                           std::pair{"choice", K::kChoice}, std::pair{"grammar", K::kGrammar}}) {
    TANDEM_API_ASSIGN_OR_RETURN(
        bool ok, AddField(so, key, std::string("structured_outputs.") + key, kind, out));
    (void)ok;
  }
  if (Present(so, "json_object")) {
    if (!so["json_object"].is_boolean()) {
      return BadParam("structured_outputs", "'structured_outputs.json_object' must be a boolean");
    }
    if (so["json_object"].get<bool>()) {
      out->push_back({"structured_outputs.json_object", K::kJsonObject, nullptr});
    }
  }
  for (const char* flag :
       {"disable_any_whitespace", "disable_fallback", "disable_additional_properties"}) {
    if (Present(so, flag) && !so[flag].is_boolean()) {
      return BadParam("structured_outputs",
                      fmt::format("'structured_outputs.{}' must be a boolean", flag));
    }
  }
  if (Present(so, "disable_any_whitespace")) {
    options->any_whitespace = !so["disable_any_whitespace"].get<bool>();
  }
  if (Present(so, "backend")) {
    TLOG_WARN(
        "request field 'structured_outputs.backend' has no effect: tandem has one "
        "structured-output backend");
  }
  return true;
}

}  // namespace

ApiResult<std::string> ParseStructuredOutputs(const nlohmann::ordered_json& body) {
  std::vector<Constraint> constraints;
  Options options;
  TANDEM_API_ASSIGN_OR_RETURN(bool ok, ParseResponseFormat(body, &constraints));
  TANDEM_API_ASSIGN_OR_RETURN(ok, ParseStructuredOutputsField(body, &constraints, &options));
  using K = Constraint::Kind;
  for (auto [key, kind] :
       {std::pair{"guided_json", K::kJsonSchema}, std::pair{"guided_regex", K::kRegex},
        std::pair{"guided_choice", K::kChoice}, std::pair{"guided_grammar", K::kGrammar}}) {
    TANDEM_API_ASSIGN_OR_RETURN(ok, AddField(body, key, key, kind, &constraints));
  }
  (void)ok;
  if (Present(body, "guided_whitespace_pattern")) {
    return BadParam("guided_whitespace_pattern",
                    "'guided_whitespace_pattern' is not supported by tandem");
  }
  if (Present(body, "guided_decoding_backend")) {
    TLOG_WARN(
        "request field 'guided_decoding_backend' has no effect: tandem has one "
        "structured-output backend");
  }
  if (constraints.empty()) {
    return std::string();
  }
  if (constraints.size() > 1) {
    std::string fields;
    for (const Constraint& c : constraints) {
      fields += (fields.empty() ? "'" : ", '") + c.field + "'";
    }
    return BadParam(
        constraints[1].field,
        fmt::format("only one kind of structured output may be requested; found {}", fields));
  }
  return Compile(constraints.front(), options.any_whitespace);
}

ApiResult<std::string> ForcedToolCallGrammar(const nlohmann::ordered_json& tools, bool required,
                                             const std::string& named_function, int32_t max_calls) {
  OJson alternatives = OJson::array();
  OJson named_parameters;  // ordered: the tool's own property order
  for (const auto& tool : tools) {
    const auto& function = tool["function"];
    const std::string name = function["name"].get<std::string>();
    OJson parameters = function.contains("parameters") && !function["parameters"].is_null()
                           ? OJson(function["parameters"])
                           : OJson{{"type", "object"}, {"properties", OJson::object()}};
    if (name == named_function) {
      named_parameters = parameters;
    }
    alternatives.push_back(
        {{"type", "object"},
         {"properties",
          {{"name", {{"type", "string"}, {"enum", {name}}}}, {"parameters", parameters}}},
         {"required", {"name", "parameters"}}});
  }
  if (!required && named_function.empty()) {
    return std::string();
  }
  OJson schema = named_parameters;
  if (required) {
    schema = {
        {"type", "array"},
        {"minItems", 1},
        {"items", alternatives.size() == 1 ? alternatives[0] : OJson{{"anyOf", alternatives}}}};
    if (max_calls > 0) {
      schema["maxItems"] = max_calls;
    }
  }
  auto gbnf = Compile({"tools", Constraint::Kind::kJsonSchema, schema}, true);
  if (!gbnf.ok()) {
    return BadParam("tools",
                    "tool_choice \"required\" or a named function compiles the tools' "
                    "parameters into a grammar, which failed: " +
                        gbnf.error().status.message());
  }
  return gbnf;
}

}  // namespace tandem::server::openai
