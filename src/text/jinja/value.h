// Jinja runtime values: ordered JSON plus "undefined", and the Python semantics the templates
// rely on (truthiness, str(), ==, json.dumps).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "text/jinja/ast.h"

namespace tandem::text::jinja {

// A value is immutable once made and shared by reference count, so naming a variable (or
// passing it to a filter) costs O(1) whatever its size: `messages|length` inside a loop over
// 10,000 messages must not copy them all each time. Only namespace() attributes are assigned
// in place (MutableData), copying first when the value is shared.
class Value {
 public:
  Value() : data_(Null()) {}
  static Value Undefined() {
    Value value;
    value.undefined_ = true;
    return value;
  }
  static Value Of(Json data) { return Value(std::make_shared<const Json>(std::move(data))); }

  const Json& data() const { return *data_; }  // null = Python None (and for undefined)
  bool undefined() const {
    return undefined_;
  }  // a missing variable/attribute: falsy, prints
     // as "", iterates empty
  // The data for in-place assignment; copied first unless this Value is its only owner.
  Json& MutableData();

 private:
  explicit Value(std::shared_ptr<const Json> data) : data_(std::move(data)) {}
  static const std::shared_ptr<const Json>& Null();

  std::shared_ptr<const Json> data_;
  bool undefined_ = false;
};

// Python bool(): undefined, None, false, 0, "", [] and {} are false.
bool IsTruthy(const Value& value);

// Python str() as Jinja prints it: None -> "None", True -> "True", lists/dicts in repr form
// (['a', 1]), undefined -> "".
std::string ToOutputString(const Value& value);

// Python ==: 1 == 1.0; containers compared element-wise.
bool ValuesEqual(const Value& a, const Value& b);

// json.dumps(value, ensure_ascii=False, indent=indent) with Python's separators
// (", " and ": " without indent; "," and ": " with it). indent < 0 = no indent.
// Values come from request JSON (at most kMaxJsonDepth deep) or from a render that bounds
// what it builds (kMaxValueDepth), so this recursion is bounded.
std::string ToJsonText(const Json& value, int indent);
// The same, nullopt once the text would pass `max_bytes` (checked as it is written).
std::optional<std::string> ToJsonText(const Json& value, int indent, int64_t max_bytes);

// "str", "int", "float", "bool", "NoneType", "list", "dict", "undefined": for error messages.
std::string TypeName(const Value& value);

}  // namespace tandem::text::jinja
