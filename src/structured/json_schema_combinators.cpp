// JSON Schema compiler: the applicators allOf, anyOf and oneOf. allOf takes one schema only;
// anyOf/oneOf become a choice (oneOf's exclusivity is not enforced). Constraint keywords beside
// the applicator are merged into each alternative by Compiler::Conjoin ("type" intersected,
// "required" united, any other keyword present on both sides with different values refused), and
// alternatives that cannot match are dropped.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "structured/json_schema_compiler_internal.h"

namespace tandem::structured::json_schema_detail {

Result<json> Compiler::Conjoin(const json& parent, std::string_view applicator, const json& alt,
                               const std::string& alt_ptr) {
  const std::vector<std::string> keys = ConstraintKeys(parent, {applicator});
  if (alt.is_boolean() && !alt.get<bool>()) return json(false);
  if (!alt.is_boolean() && !alt.is_object()) {
    return InvalidArgument(
        fmt::format("JSON schema at {} must be an object or a boolean", Where(alt_ptr)));
  }
  json merged = alt.is_object() ? alt : json::object();
  for (const std::string& key : keys) {
    const json& value = parent[key];
    const auto it = merged.find(key);
    if (it == merged.end()) {
      merged[key] = value;
    } else if (*it == value) {
      continue;
    } else if (key == "type") {
      TANDEM_ASSIGN_OR_RETURN(std::vector<std::string> outer, ParseTypes(value, alt_ptr));
      TANDEM_ASSIGN_OR_RETURN(std::vector<std::string> inner, ParseTypes(*it, alt_ptr));
      const std::vector<std::string> both = IntersectTypes(outer, inner);
      if (both.empty()) return json(false);
      *it = both;
    } else if (key == "required" && value.is_array() && it->is_array()) {
      for (const json& r : value) {
        if (std::find(it->begin(), it->end(), r) == it->end()) it->push_back(r);
      }
    } else {
      return Unsupported(key, alt_ptr,
                         fmt::format("it also appears beside '{}' with another value", applicator));
    }
  }
  return merged;
}

Result<Expr> Compiler::AllOfSchema(const json& s, const std::string& ptr, const std::string& name,
                                   int depth) {
  const json& all = s["allOf"];
  if (!all.is_array() || all.empty()) {
    return BadKeyword("allOf", ptr, "must be a non-empty array of schemas");
  }
  if (all.size() > 1) return Unsupported("allOf", ptr, "with more than one schema");
  const std::string alt_ptr = Child(ptr, "allOf", 0);
  if (ConstraintKeys(s, {"allOf"}).empty()) return Schema(all[0], alt_ptr, name, depth + 1);
  if (DeeperThan(s, kMaxValueDepth)) return BadKeyword("allOf", ptr, "nests too deep");
  TANDEM_ASSIGN_OR_RETURN(json merged, Conjoin(s, "allOf", all[0], alt_ptr));
  return Schema(merged, alt_ptr, name, depth + 1);
}

Result<Expr> Compiler::AnyOfSchema(const json& s, const std::string& ptr, const std::string& name,
                                   int depth) {
  if (s.contains("anyOf") && s.contains("oneOf")) {
    return Unsupported("oneOf", ptr, "beside 'anyOf'");
  }
  const char* keyword = s.contains("anyOf") ? "anyOf" : "oneOf";
  const json& alternatives = s[keyword];
  if (!alternatives.is_array() || alternatives.empty()) {
    return BadKeyword(keyword, ptr, "must be a non-empty array of schemas");
  }
  const bool plain = ConstraintKeys(s, {keyword}).empty();
  if (!plain && DeeperThan(s, kMaxValueDepth)) return BadKeyword(keyword, ptr, "nests too deep");
  std::vector<Expr> choices;
  for (size_t i = 0; i < alternatives.size(); ++i) {
    const std::string alt_ptr = Child(ptr, keyword, i);
    const std::string alt_name = fmt::format("{}-{}", name, i);
    const json& alt = alternatives[i];
    if (alt.is_boolean() && !alt.get<bool>()) continue;  // matches nothing: dropped
    if (plain) {
      TANDEM_ASSIGN_OR_RETURN(Expr e, Schema(alt, alt_ptr, alt_name, depth + 1));
      choices.push_back(std::move(e));
      continue;
    }
    TANDEM_ASSIGN_OR_RETURN(json merged, Conjoin(s, keyword, alt, alt_ptr));
    if (merged.is_boolean() && !merged.get<bool>()) continue;
    TANDEM_ASSIGN_OR_RETURN(Expr e, Schema(merged, alt_ptr, alt_name, depth + 1));
    choices.push_back(std::move(e));
  }
  if (choices.empty()) return BadKeyword(keyword, ptr, "has no alternative that can match");
  return Choice(std::move(choices));
}

}  // namespace tandem::structured::json_schema_detail
