// Jinja runtime values: ordered JSON plus "undefined", and the Python semantics the templates
// rely on (truthiness, str(), ==, json.dumps).
#pragma once

#include <string>

#include "text/jinja/ast.h"

namespace tandem::text::jinja {

struct Value {
  Json data;               // null = Python None
  bool undefined = false;  // a missing variable/attribute: falsy, prints as "", iterates empty

  static Value Undefined() {
    Value value;
    value.undefined = true;
    return value;
  }
  static Value Of(Json data) { return Value{std::move(data), false}; }
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
std::string ToJsonText(const Json& value, int indent);

// "str", "int", "float", "bool", "NoneType", "list", "dict", "undefined": for error messages.
std::string TypeName(const Value& value);

}  // namespace tandem::text::jinja
