// JSON Schema compiler: the keyword table (which keywords are known, and to which type each
// belongs), the error messages that name a keyword and its JSON pointer, JSON pointer and
// rule-name building, compact value texts, and the "type" keyword's names (parsing, intersecting,
// testing a value). Shared by all json_schema_*.cpp files through json_schema_compiler_internal.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "structured/json_schema_compiler_internal.h"

namespace tandem::structured::json_schema_detail {

// ---------------------------------------------------------------------------------------------
// Keywords and messages.

std::optional<Group> KeywordGroup(std::string_view keyword) {
  // clang-format off
  static const std::map<std::string_view, Group> kGroups = {
      {"title", Group::kAnnotation},           {"description", Group::kAnnotation},
      {"default", Group::kAnnotation},         {"examples", Group::kAnnotation},
      {"$schema", Group::kAnnotation},         {"$id", Group::kAnnotation},
      {"$anchor", Group::kAnnotation},         {"$comment", Group::kAnnotation},
      {"deprecated", Group::kAnnotation},      {"readOnly", Group::kAnnotation},
      {"writeOnly", Group::kAnnotation},       {"contentEncoding", Group::kAnnotation},
      {"contentMediaType", Group::kAnnotation},
      {"$defs", Group::kStructure},            {"definitions", Group::kStructure},
      {"nullable", Group::kStructure},
      {"type", Group::kGeneral},               {"enum", Group::kGeneral},
      {"const", Group::kGeneral},              {"anyOf", Group::kGeneral},
      {"oneOf", Group::kGeneral},              {"allOf", Group::kGeneral},
      {"$ref", Group::kGeneral},
      {"minLength", Group::kString},           {"maxLength", Group::kString},
      {"pattern", Group::kString},             {"format", Group::kString},
      {"minimum", Group::kNumeric},            {"maximum", Group::kNumeric},
      {"exclusiveMinimum", Group::kNumeric},   {"exclusiveMaximum", Group::kNumeric},
      {"multipleOf", Group::kNumeric},
      {"properties", Group::kObject},          {"required", Group::kObject},
      {"additionalProperties", Group::kObject},
      {"unevaluatedProperties", Group::kObject},
      {"minProperties", Group::kObject},       {"maxProperties", Group::kObject},
      {"patternProperties", Group::kObject},   {"propertyNames", Group::kObject},
      {"dependentRequired", Group::kObject},   {"dependentSchemas", Group::kObject},
      {"items", Group::kArray},                {"prefixItems", Group::kArray},
      {"additionalItems", Group::kArray},      {"unevaluatedItems", Group::kArray},
      {"minItems", Group::kArray},             {"maxItems", Group::kArray},
      {"uniqueItems", Group::kArray},          {"contains", Group::kArray},
      {"minContains", Group::kArray},          {"maxContains", Group::kArray},
  };
  // clang-format on
  const auto it = kGroups.find(keyword);
  if (it == kGroups.end()) return std::nullopt;
  return it->second;
}

std::string Where(const std::string& ptr) { return ptr.empty() ? "the root" : ptr; }

Status Unsupported(std::string_view keyword, const std::string& ptr, std::string_view why) {
  std::string message =
      fmt::format("JSON schema keyword '{}' at {} is not supported", keyword, Where(ptr));
  if (!why.empty()) message += fmt::format(" ({})", why);
  return InvalidArgument(std::move(message));
}

Status BadKeyword(std::string_view keyword, const std::string& ptr, std::string_view what) {
  return InvalidArgument(
      fmt::format("JSON schema keyword '{}' at {} {}", keyword, Where(ptr), what));
}

std::string Child(const std::string& ptr, std::string_view token) {
  std::string out = ptr + "/";
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Child(const std::string& ptr, std::string_view token, size_t index) {
  return Child(ptr, token) + "/" + std::to_string(index);
}

std::string RuleToken(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '-';
  }
  return out.empty() ? "x" : out;
}

bool DeeperThan(const json& value, int limit) {
  if (!value.is_structured()) return false;
  if (limit <= 0) return true;
  for (const json& child : value) {
    if (DeeperThan(child, limit - 1)) return true;
  }
  return false;
}

Result<std::string> CompactText(const json& value, std::string_view keyword,
                                const std::string& ptr) {
  if (DeeperThan(value, kMaxValueDepth)) return BadKeyword(keyword, ptr, "nests too deep");
  try {
    return value.dump();
  } catch (const json::exception&) {
    return BadKeyword(keyword, ptr, "holds a string that is not valid UTF-8");
  }
}

std::vector<std::string> ConstraintKeys(const json& schema,
                                        std::initializer_list<std::string_view> except) {
  std::vector<std::string> out;
  for (const auto& [key, value] : schema.items()) {
    const std::optional<Group> group = KeywordGroup(key);
    if (group == Group::kAnnotation || group == Group::kStructure) continue;
    if (std::find(except.begin(), except.end(), key) != except.end()) continue;
    out.push_back(key);
  }
  return out;
}

bool IsTrivialSchema(const json& schema) {
  if (schema.is_boolean()) return schema.get<bool>();
  return schema.is_object() && ConstraintKeys(schema, {}).empty();
}

// ---------------------------------------------------------------------------------------------
// Type names.

namespace {

const std::vector<std::string>& TypeNames() {
  static const std::vector<std::string> kNames = {"string", "integer", "number", "boolean",
                                                  "null",   "object",  "array"};
  return kNames;
}

}  // namespace

Result<std::vector<std::string>> ParseTypes(const json& type, const std::string& ptr) {
  std::vector<std::string> types;
  if (type.is_string()) {
    types.push_back(type.get<std::string>());
  } else if (type.is_array() && !type.empty()) {
    for (const json& t : type) {
      if (!t.is_string()) return BadKeyword("type", ptr, "must hold type names (strings)");
      types.push_back(t.get<std::string>());
    }
  } else {
    return BadKeyword("type", ptr, "must be a type name or a non-empty array of them");
  }
  std::vector<std::string> unique;
  for (const std::string& t : types) {
    if (std::find(TypeNames().begin(), TypeNames().end(), t) == TypeNames().end()) {
      return BadKeyword("type", ptr, fmt::format("names an unknown type '{}'", t));
    }
    if (std::find(unique.begin(), unique.end(), t) == unique.end()) unique.push_back(t);
  }
  return unique;
}

bool HasType(const std::vector<std::string>& types, std::string_view t) {
  return std::find(types.begin(), types.end(), t) != types.end();
}

std::vector<std::string> IntersectTypes(const std::vector<std::string>& a,
                                        const std::vector<std::string>& b) {
  std::vector<std::string> out;
  for (const std::string& t : a) {
    if (HasType(b, t)) {
      out.push_back(t);
    } else if ((t == "integer" && HasType(b, "number")) ||
               (t == "number" && HasType(b, "integer"))) {
      out.push_back("integer");
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool ValueHasType(const json& v, std::string_view t) {
  if (t == "string") return v.is_string();
  if (t == "number") return v.is_number();
  if (t == "integer") {
    if (v.is_number_integer()) return true;
    return v.is_number_float() && std::isfinite(v.get<double>()) &&
           std::floor(v.get<double>()) == v.get<double>();
  }
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "object") return v.is_object();
  return v.is_array();
}

Result<std::optional<int32_t>> GetCount(const json& schema, std::string_view keyword,
                                        const std::string& ptr) {
  const auto it = schema.find(keyword);
  if (it == schema.end()) return std::optional<int32_t>();
  const json& v = *it;
  const bool integral = v.is_number_integer() ||
                        (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (!integral || v.get<double>() < 0) {
    return BadKeyword(keyword, ptr, "must be a non-negative integer");
  }
  if (v.get<double>() > static_cast<double>(kMaxCount)) {
    return Unsupported(keyword, ptr, fmt::format("above {}", kMaxCount));
  }
  return std::optional<int32_t>(static_cast<int32_t>(v.get<double>()));
}

}  // namespace tandem::structured::json_schema_detail
