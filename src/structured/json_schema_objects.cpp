// JSON Schema compiler: "type": "object". Compiler::ObjectProperties lists the properties in the
// schema's order (required names missing from "properties" after them, with the
// additionalProperties schema); CheckObjectExtras refuses the object keywords the grammar cannot
// express unless they are trivially satisfied; Compiler::AssembleObject builds a grammar in which
// required properties appear, optional ones may be left out and the commas are right in every
// combination, linear in the number of properties.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "structured/json_schema_compiler_internal.h"

namespace tandem::structured::json_schema_detail {
namespace {

// The object keywords other than properties/required/additionalProperties: refused unless
// trivially satisfied by the object grammar built from `props` (`open`: further keys allowed).
Status CheckObjectExtras(const json& s, const std::string& ptr, const std::vector<Property>& props,
                         bool open) {
  const auto required_count = static_cast<double>(
      std::count_if(props.begin(), props.end(), [](const Property& p) { return p.required; }));
  const auto is_required = [&](const json& name) {
    return std::any_of(props.begin(), props.end(), [&](const Property& p) {
      return p.required && name.is_string() && p.name == name.get<std::string>();
    });
  };
  const auto can_appear = [&](const std::string& name) {
    return open || std::any_of(props.begin(), props.end(),
                               [&](const Property& p) { return p.name == name; });
  };
  if (const auto it = s.find("minProperties"); it != s.end()) {
    if (!it->is_number() || it->get<double>() > required_count) {
      return Unsupported("minProperties", ptr, "above the number of required properties");
    }
  }
  if (const auto it = s.find("maxProperties"); it != s.end()) {
    if (open || !it->is_number() || it->get<double>() < static_cast<double>(props.size())) {
      return Unsupported("maxProperties", ptr, "below the number of possible properties");
    }
  }
  if (const auto it = s.find("patternProperties"); it != s.end()) {
    if (!it->is_object() || !it->empty()) {
      return Unsupported("patternProperties", ptr);
    }
  }
  if (const auto it = s.find("propertyNames"); it != s.end()) {
    if (!IsTrivialSchema(*it)) {
      return Unsupported("propertyNames", ptr);
    }
  }
  if (const auto it = s.find("dependentSchemas"); it != s.end()) {
    if (!it->is_object() || !std::all_of(it->begin(), it->end(), IsTrivialSchema)) {
      return Unsupported("dependentSchemas", ptr);
    }
  }
  if (const auto it = s.find("dependentRequired"); it != s.end()) {
    if (!it->is_object()) {
      return BadKeyword("dependentRequired", ptr, "must be an object");
    }
    for (auto dep = it->begin(); dep != it->end(); ++dep) {
      if (!can_appear(dep.key())) {
        continue;
      }
      if (!dep->is_array() || !std::all_of(dep->begin(), dep->end(), is_required)) {
        return Unsupported("dependentRequired", ptr,
                           fmt::format("'{}' needs properties that are not required", dep.key()));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<Property>> Compiler::ObjectProperties(const json& s, const std::string& ptr,
                                                         const json* additional,
                                                         const std::string& additional_ptr) {
  std::set<std::string> required;
  if (const auto it = s.find("required"); it != s.end()) {
    if (!it->is_array()) {
      return BadKeyword("required", ptr, "must be an array of names");
    }
    for (const json& r : *it) {
      if (!r.is_string()) {
        return BadKeyword("required", ptr, "must be an array of names");
      }
      required.insert(r.get<std::string>());
    }
  }
  // In the schema's order (xgrammar and OpenAI keep it: a model writes "reasoning" before
  // "answer" when the schema says so); required names missing from properties come after.
  std::vector<std::string> order;
  std::map<std::string, Property> by_name;
  if (const auto it = s.find("properties"); it != s.end()) {
    if (!it->is_object()) {
      return BadKeyword("properties", ptr, "must be an object");
    }
    const std::string properties_ptr = Child(ptr, "properties");
    for (auto p = it->begin(); p != it->end(); ++p) {
      if (!by_name.count(p.key())) {
        order.push_back(p.key());
      }
      by_name[p.key()] = Property{p.key(), &p.value(), Child(properties_ptr, p.key()),
                                  required.count(p.key()) > 0};
    }
  }
  for (const std::string& r : required) {
    if (by_name.count(r) > 0) {
      continue;
    }
    if (additional == nullptr) {
      return BadKeyword("required", ptr,
                        fmt::format("lists '{}', which is not in 'properties' while no "
                                    "additional properties are allowed",
                                    r));
    }
    by_name[r] = Property{r, additional, additional_ptr, true};
    order.push_back(r);
  }
  std::vector<Property> out;
  for (const std::string& key : order) {
    Property& property = by_name.at(key);
    if (property.schema->is_boolean() && !property.schema->get<bool>()) {
      if (property.required) {
        return BadKeyword("required", ptr, fmt::format("lists '{}', whose schema is false", key));
      }
      continue;  // can never appear
    }
    out.push_back(std::move(property));
  }
  return out;
}

Result<Expr> Compiler::ObjectSchema(const json& s, const std::string& ptr, const std::string& name,
                                    int depth) {
  // Further keys: additionalProperties, else unevaluatedProperties (the same here); none when
  // both are absent (strict).
  const json* additional = nullptr;
  std::string additional_ptr;
  for (const char* key : {"additionalProperties", "unevaluatedProperties"}) {
    const auto it = s.find(key);
    if (it == s.end()) {
      continue;
    }
    if (!it->is_boolean() && !it->is_object()) {
      return BadKeyword(key, ptr, "must be a schema");
    }
    if (!it->is_boolean() || it->get<bool>()) {
      additional = &*it;
      additional_ptr = Child(ptr, key);
    }
    break;
  }
  TANDEM_ASSIGN_OR_RETURN(std::vector<Property> props,
                          ObjectProperties(s, ptr, additional, additional_ptr));
  TANDEM_RETURN_IF_ERROR(CheckObjectExtras(s, ptr, props, additional != nullptr));
  std::vector<Expr> members;  // "\"name\":" ws value, one per property
  for (const Property& p : props) {
    const std::string rule = name + "-" + RuleToken(p.name);
    TANDEM_ASSIGN_OR_RETURN(Expr value, Nested(*p.schema, p.ptr, rule, depth + 1));
    TANDEM_ASSIGN_OR_RETURN(std::string key, CompactText(json(p.name), "properties", ptr));
    members.push_back(Sequence({Literal(key + ":"), Shared("ws"), Named(rule, std::move(value))}));
  }
  std::optional<Expr> extra;
  if (additional != nullptr) {
    const std::string rule = name + "-additional";
    TANDEM_ASSIGN_OR_RETURN(Expr value, Nested(*additional, additional_ptr, rule, depth + 1));
    extra = Sequence({Shared("string"), Literal(":"), Shared("ws"), Named(rule, std::move(value))});
  }
  return AssembleObject(props, std::move(members), std::move(extra), name);
}

Expr Compiler::AssembleObject(const std::vector<Property>& props, std::vector<Expr> members,
                              std::optional<Expr> extra, const std::string& name) {
  const Expr ws = Shared("ws");
  const auto after_comma = [&](const Expr& e) { return Sequence({Literal(","), ws, e}); };
  const size_t n = props.size();
  size_t first_required = n;
  for (size_t i = 0; i < n && first_required == n; ++i) {
    if (props[i].required) {
      first_required = i;
    }
  }
  // rest[k]: the members k.. (required ones, optional ones or not) and then the further keys,
  // each after a comma. rest[1..first_required] are rules shared by the alternatives below, so
  // the grammar stays linear in the number of properties; rest[tail] (tail = first_required + 1,
  // at most n) is one flat sequence built front to back, as nesting rest[k] in rest[k - 1]
  // would copy the tail once per property (quadratic: 10,000 required properties took 24 GB).
  std::vector<Expr> rest(n + 1);
  const size_t tail = std::min(first_required + 1, n);
  std::vector<Expr> tail_items;
  for (size_t k = tail; k < n; ++k) {
    Expr item = after_comma(members[k]);
    tail_items.push_back(props[k].required ? std::move(item) : Optional(std::move(item)));
  }
  tail_items.push_back(extra ? Star(after_comma(*extra)) : Empty());
  rest[tail] = Sequence(std::move(tail_items));
  for (size_t k = tail; k-- > 1;) {
    Expr item = after_comma(members[k]);
    rest[k] = Named(
        name + "-after-" + RuleToken(props[k - 1].name),
        Sequence({props[k].required ? std::move(item) : Optional(std::move(item)), rest[k + 1]}));
  }
  // One alternative per possible first member: the optional ones up to the first required one.
  std::vector<Expr> alternatives;
  for (size_t j = 0; j < n && j <= first_required; ++j) {
    alternatives.push_back(Sequence({members[j], rest[j + 1]}));
  }
  const bool can_be_empty = first_required == n;
  if (can_be_empty && extra) {
    alternatives.push_back(Sequence({*extra, rest[n]}));
  }
  if (alternatives.empty()) {
    return Sequence({Literal("{"), ws, Literal("}")});
  }
  Expr inside = Sequence({Choice(std::move(alternatives)), ws});
  return Sequence({Literal("{"), ws, can_be_empty ? Optional(std::move(inside)) : std::move(inside),
                   Literal("}")});
}

}  // namespace tandem::structured::json_schema_detail
