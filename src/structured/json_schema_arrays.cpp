// JSON Schema compiler: "type": "array". FindArrayKeywords finds the tuple (prefixItems, or
// draft-7 items as an array) and the schema of the items after it (items, additionalItems or
// unevaluatedItems); Compiler::ArraySchema applies minItems/maxItems and refuses uniqueItems and
// contains; Compiler::AssembleArray builds the element list with its commas, each tuple member
// optional from minItems on.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "structured/json_schema_compiler_internal.h"

namespace tandem::structured::json_schema_detail {
namespace {

// Where an array schema keeps its tuple (prefixItems, or draft-7 items as an array) and the
// schema of the items after it (items, draft-7 additionalItems, else unevaluatedItems).
struct ArrayKeywords {
  const json* prefix = nullptr;
  const char* prefix_key = "prefixItems";
  const json* items = nullptr;
  const char* items_key = "items";
};

Result<ArrayKeywords> FindArrayKeywords(const json& s, const std::string& ptr) {
  ArrayKeywords out;
  if (const auto it = s.find("prefixItems"); it != s.end()) out.prefix = &*it;
  if (const auto it = s.find("items"); it != s.end() && !it->is_array()) out.items = &*it;
  if (const auto it = s.find("items"); it != s.end() && it->is_array()) {
    if (out.prefix != nullptr) return BadKeyword("items", ptr, "is an array beside 'prefixItems'");
    out.prefix = &*it;
    out.prefix_key = "items";
    if (const auto add = s.find("additionalItems"); add != s.end()) {
      out.items = &*add;
      out.items_key = "additionalItems";
    }
  }
  if (const auto it = s.find("unevaluatedItems"); it != s.end() && out.items == nullptr) {
    out.items = &*it;
    out.items_key = "unevaluatedItems";
  }
  if (out.prefix != nullptr && !out.prefix->is_array()) {
    return BadKeyword(out.prefix_key, ptr, "must be an array of schemas");
  }
  if (out.items != nullptr && !out.items->is_boolean() && !out.items->is_object()) {
    return BadKeyword(out.items_key, ptr, "must be a schema");
  }
  static const json kAnything = true;
  if (out.items == nullptr && out.prefix == nullptr) out.items = &kAnything;  // any values
  return out;
}

}  // namespace

Result<Expr> Compiler::ArraySchema(const json& s, const std::string& ptr, const std::string& name,
                                   int depth) {
  if (const auto it = s.find("uniqueItems"); it != s.end()) {
    if (!it->is_boolean()) return BadKeyword("uniqueItems", ptr, "must be a boolean");
    if (it->get<bool>()) return Unsupported("uniqueItems", ptr, "true");
  }
  if (s.contains("contains")) return Unsupported("contains", ptr);
  TANDEM_ASSIGN_OR_RETURN(const ArrayKeywords keywords, FindArrayKeywords(s, ptr));
  TANDEM_ASSIGN_OR_RETURN(std::optional<int32_t> min_items, GetCount(s, "minItems", ptr));
  TANDEM_ASSIGN_OR_RETURN(std::optional<int32_t> max_items, GetCount(s, "maxItems", ptr));
  ArrayShape shape;
  shape.min = min_items.value_or(0);
  shape.max = max_items.value_or(-1);
  if (shape.max >= 0 && shape.min > shape.max) {
    return BadKeyword("minItems", ptr, "exceeds maxItems");
  }
  // Tuple members past maxItems or from a `false` one on never appear.
  const json* prefix = keywords.prefix;
  int64_t k = prefix != nullptr ? static_cast<int64_t>(prefix->size()) : 0;
  if (shape.max >= 0) k = std::min<int64_t>(k, shape.max);
  for (int64_t i = 0; i < k; ++i) {
    if ((*prefix)[i].is_boolean() && !(*prefix)[i].get<bool>()) k = i;
  }
  const json* items = keywords.items;
  const bool items_allowed = items != nullptr && !(items->is_boolean() && !items->get<bool>()) &&
                             (shape.max < 0 || shape.max > k);
  if (!items_allowed && shape.min > k) {
    return BadKeyword("minItems", ptr, "asks for more items than the schema allows");
  }
  for (int64_t i = 0; i < k; ++i) {
    TANDEM_ASSIGN_OR_RETURN(Expr e, Nested((*prefix)[i], Child(ptr, keywords.prefix_key, i),
                                           fmt::format("{}-item-{}", name, i), depth + 1));
    shape.tuple.push_back(std::move(e));
  }
  if (items_allowed) {
    const std::string rule = name + "-item";
    TANDEM_ASSIGN_OR_RETURN(Expr e,
                            Nested(*items, Child(ptr, keywords.items_key), rule, depth + 1));
    shape.item = Named(rule, std::move(e));
  }
  return AssembleArray(shape);
}

Expr Compiler::AssembleArray(const ArrayShape& shape) {
  const Expr ws = Shared("ws");
  const auto k = static_cast<int64_t>(shape.tuple.size());
  const int64_t min = shape.min;
  const int64_t max = shape.max;
  // The items after the first `before` elements, each after a comma.
  const auto further = [&](int64_t before) {
    return Repeat(Sequence({Literal(","), ws, *shape.item}),
                  static_cast<int32_t>(std::max<int64_t>(min - before, 0)),
                  max < 0 ? -1 : static_cast<int32_t>(max - before));
  };
  Expr elements;
  if (k == 0) {
    if (!shape.item) return Sequence({Literal("["), ws, Literal("]")});
    elements = Sequence({*shape.item, further(1)});
  } else {
    // The tuple members in order, each optional from minItems on, then the further items.
    elements = shape.item ? further(k) : Empty();
    for (int64_t i = k; i-- > 0;) {
      Expr member = i == 0 ? shape.tuple[0] : Sequence({Literal(","), ws, shape.tuple[i]});
      const bool next_optional = i + 1 < k && i + 1 >= min;
      elements = Sequence(
          {std::move(member), next_optional ? Optional(std::move(elements)) : std::move(elements)});
    }
  }
  Expr inside = Sequence({std::move(elements), ws});
  return Sequence(
      {Literal("["), ws, min == 0 ? Optional(std::move(inside)) : std::move(inside), Literal("]")});
}

}  // namespace tandem::structured::json_schema_detail
