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
// The bytes of the values one render holds (every value made while it runs, alive), kept by
// the Interpreter: Value::Of charges what it wraps (strings by length, other scalars as 8,
// walked) while a meter is installed on the thread, and the value's last owner gives it back.
class RenderMeter {
 public:
  int64_t live_bytes() const { return *live_; }
  // Installs `meter` for this thread while the guard lives (nullptr: none).
  class Scope {
   public:
    explicit Scope(RenderMeter* meter);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    RenderMeter* previous_;
  };
  // Adds `delta` bytes (a namespace attribute replaced in place: new minus old); given back
  // when the render ends.
  void Adjust(int64_t delta) { *live_ += delta; }

 private:
  friend class Value;
  // Shared with the deleters of the values it charged, which may outlive the meter.
  std::shared_ptr<int64_t> live_ = std::make_shared<int64_t>(0);
};

// Bytes of `value` as the meter counts them: strings and keys by length, every value 8 more.
int64_t JsonBytes(const Json& value);

class Value {
 public:
  Value() : data_(Null()) {}
  static Value Undefined() {
    Value value;
    value.undefined_ = true;
    return value;
  }
  static Value Of(Json data) { return Value(Make(std::move(data))); }

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
  // The shared data, charged to this thread's RenderMeter (if any) until its last owner goes.
  static std::shared_ptr<const Json> Make(Json data);

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
