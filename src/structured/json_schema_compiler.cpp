// JSON Schema -> Grammar: the driver. The mapping and its sources are in the header. This file
// holds the public entry points and the Compiler's core: the shared rules ("ws", "char",
// "string", "integer", "number", "value", "object", "array"), rule naming, Schema() (one schema
// at a time, recursively, depth- and count-bounded), the dispatch by keyword, enum/const and the
// choice between types. Each part of the schema language has its own file (listed in
// json_schema_compiler_internal.h, which holds the helpers they share).
#include "structured/json_schema_compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "structured/json_schema_compiler_internal.h"

namespace tandem::structured {
namespace json_schema_detail {

std::string Compiler::Unique(const std::string& base) {
  std::string name = base;
  for (int i = 2; names_.count(name) > 0; ++i) {
    name = fmt::format("{}-{}", base, i);
  }
  names_.insert(name);
  return name;
}

Expr Compiler::Named(const std::string& base, Expr e) {
  switch (e.kind) {
    case Expr::Kind::kEmpty:
    case Expr::Kind::kLiteral:
    case Expr::Kind::kCharClass:
    case Expr::Kind::kRuleRef:
      return e;
    default:
      break;
  }
  const std::string name = Unique(base);
  grammar_.Add(name, std::move(e));
  return RuleRef(name);
}

Expr Compiler::Shared(const std::string& name) {
  if (grammar_.Find(name) != nullptr) {
    return RuleRef(name);
  }
  if (name == "ws") {
    grammar_.Add(name, WsBody());
  } else if (name == "char") {
    grammar_.Add(name, CharBody());
  } else if (name == "string") {
    Expr ch = Shared("char");
    grammar_.Add(name, Sequence({Literal("\""), Star(std::move(ch)), Literal("\"")}));
  } else if (name == "integer") {
    grammar_.Add(name, IntegerBody());
  } else if (name == "number") {
    grammar_.Add(name, NumberBody());
  } else {
    AddAnyValueRules();
  }
  return RuleRef(name);
}

void Compiler::AddAnyValueRules() {
  const Expr ws = Shared("ws");
  const Expr member = Sequence({Shared("string"), Literal(":"), ws, RuleRef("value")});
  grammar_.Add("value",
               Choice({RuleRef("object"), RuleRef("array"), Shared("string"), Shared("number"),
                       Literal("true"), Literal("false"), Literal("null")}));
  grammar_.Add(
      "object",
      Sequence({Literal("{"), ws,
                Optional(Sequence({member, Star(Sequence({Literal(","), ws, member})), ws})),
                Literal("}")}));
  grammar_.Add(
      "array",
      Sequence({Literal("["), ws,
                Optional(Sequence(
                    {RuleRef("value"), Star(Sequence({Literal(","), ws, RuleRef("value")})), ws})),
                Literal("]")}));
}

Result<Expr> Compiler::Schema(const json& s, const std::string& ptr, const std::string& name,
                              int depth) {
  if (++schemas_compiled_ > kMaxSchemas) {
    return InvalidArgument(
        fmt::format("JSON schema is too large to compile: more than {} subschemas (keywords beside "
                    "anyOf/oneOf are compiled once per alternative)",
                    kMaxSchemas));
  }
  if (depth > kMaxDepth) {
    return InvalidArgument(
        fmt::format("JSON schema at {} nests deeper than {} levels", Where(ptr), kMaxDepth));
  }
  if (s.is_boolean()) {
    if (s.get<bool>()) {
      return Shared("value");
    }
    return InvalidArgument(
        fmt::format("JSON schema at {} is false: it matches nothing", Where(ptr)));
  }
  if (!s.is_object()) {
    return InvalidArgument(
        fmt::format("JSON schema at {} must be an object or a boolean", Where(ptr)));
  }
  for (const auto& [key, value] : s.items()) {
    if (!KeywordGroup(key).has_value()) {
      return Unsupported(key, ptr);
    }
  }
  for (const char* key : {"$defs", "definitions"}) {
    if (s.contains(key) && !s[key].is_object()) {
      return BadKeyword(key, ptr, "must be an object");
    }
  }
  bool nullable = false;
  if (const auto it = s.find("nullable"); it != s.end()) {
    if (!it->is_boolean()) {
      return BadKeyword("nullable", ptr, "must be a boolean");
    }
    nullable = it->get<bool>();
  }
  TANDEM_ASSIGN_OR_RETURN(Expr e, Dispatch(s, ptr, name, depth));
  if (nullable) {
    e = Choice({std::move(e), Literal("null")});
  }
  return e;
}

Result<Expr> Compiler::Dispatch(const json& s, const std::string& ptr, const std::string& name,
                                int depth) {
  if (s.contains("$ref")) {
    return RefSchema(s, ptr, depth);
  }
  if (s.contains("allOf")) {
    return AllOfSchema(s, ptr, name, depth);
  }
  if (s.contains("anyOf") || s.contains("oneOf")) {
    return AnyOfSchema(s, ptr, name, depth);
  }
  if (s.contains("enum") || s.contains("const")) {
    return EnumSchema(s, ptr);
  }
  return TypedSchema(s, ptr, name, depth);
}

Result<Expr> Compiler::Nested(const json& s, const std::string& ptr, const std::string& name,
                              int depth) {
  // A `{` or `[` precedes: a $ref cycle from here on is not left-recursive.
  std::set<std::string> saved;
  saved.swap(unguarded_);
  Result<Expr> result = Schema(s, ptr, name, depth);
  unguarded_.swap(saved);
  return result;
}

Result<Expr> Compiler::EnumSchema(const json& s, const std::string& ptr) {
  const std::vector<std::string> beside = ConstraintKeys(s, {"enum", "const", "type"});
  if (!beside.empty()) {
    return Unsupported(beside.front(), ptr, "beside 'enum' or 'const'");
  }
  std::vector<const json*> values;
  if (const auto it = s.find("enum"); it != s.end()) {
    if (!it->is_array()) {
      return BadKeyword("enum", ptr, "must be an array");
    }
    for (const json& v : *it) {
      values.push_back(&v);
    }
  }
  if (const auto it = s.find("const"); it != s.end()) {
    if (!s.contains("enum")) {
      values.push_back(&*it);
    } else {
      std::erase_if(values, [&](const json* v) {
        return DeeperThan(*v, kMaxValueDepth) || DeeperThan(*it, kMaxValueDepth) || *v != *it;
      });
    }
  }
  if (const auto it = s.find("type"); it != s.end()) {
    TANDEM_ASSIGN_OR_RETURN(std::vector<std::string> types, ParseTypes(*it, ptr));
    std::erase_if(values, [&](const json* v) {
      return std::none_of(types.begin(), types.end(),
                          [&](const std::string& t) { return ValueHasType(*v, t); });
    });
  }
  const char* keyword = s.contains("enum") ? "enum" : "const";
  std::vector<std::string> texts;
  std::unordered_set<std::string> seen;  // a repeated value once (a set: 100k values were 8 s)
  for (const json* v : values) {
    TANDEM_ASSIGN_OR_RETURN(std::string text, CompactText(*v, keyword, ptr));
    if (seen.insert(text).second) {
      texts.push_back(std::move(text));
    }
  }
  if (texts.empty()) {
    return BadKeyword(keyword, ptr, "admits no value (of the schema's type)");
  }
  std::vector<Expr> choices;
  for (std::string& text : texts) {
    choices.push_back(Literal(std::move(text)));
  }
  return Choice(std::move(choices));
}

Result<Expr> Compiler::TypedSchema(const json& s, const std::string& ptr, const std::string& name,
                                   int depth) {
  std::vector<std::string> types;
  if (const auto it = s.find("type"); it != s.end()) {
    TANDEM_ASSIGN_OR_RETURN(types, ParseTypes(*it, ptr));
  } else {
    std::set<Group> groups;
    for (const auto& [key, value] : s.items()) {
      groups.insert(*KeywordGroup(key));
    }
    if (groups.count(Group::kObject)) {
      types.push_back("object");
    }
    if (groups.count(Group::kArray)) {
      types.push_back("array");
    }
    if (groups.count(Group::kString)) {
      types.push_back("string");
    }
    if (groups.count(Group::kNumeric)) {
      types.push_back("number");
    }
    if (types.empty()) {
      return Shared("value");
    }
  }
  if (HasType(types, "number")) {
    std::erase(types, "integer");
  }
  std::vector<Expr> choices;
  for (const std::string& type : types) {
    TANDEM_ASSIGN_OR_RETURN(Expr e, OfType(type, s, ptr, name, depth));
    choices.push_back(std::move(e));
  }
  return Choice(std::move(choices));
}

Result<Expr> Compiler::OfType(const std::string& type, const json& s, const std::string& ptr,
                              const std::string& name, int depth) {
  if (type == "string") {
    return StringSchema(s, ptr);
  }
  if (type == "integer") {
    return IntegerSchema(s, ptr);
  }
  if (type == "number") {
    return NumberSchema(s, ptr);
  }
  if (type == "boolean") {
    return Choice({Literal("true"), Literal("false")});
  }
  if (type == "null") {
    return Literal("null");
  }
  if (type == "object") {
    return ObjectSchema(s, ptr, name, depth);
  }
  return ArraySchema(s, ptr, name, depth);
}

}  // namespace json_schema_detail

Result<Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema) {
  json_schema_detail::Compiler compiler(schema);
  return compiler.CompileRoot();
}

Grammar JsonObjectGrammar() {
  const nlohmann::ordered_json unused;
  json_schema_detail::Compiler compiler(unused);
  return compiler.AnyObject();
}

}  // namespace tandem::structured
