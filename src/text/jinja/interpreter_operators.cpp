// Interpreter::EvalBinary: Jinja's binary operators with Python semantics.
#include <cmath>

#include <algorithm>
#include <climits>

#include "text/jinja/builtins.h"
#include "text/jinja/error.h"
#include "text/jinja/interpreter.h"
#include "text/string_search.h"

namespace tandem::text::jinja {
namespace {

bool Contains(const Value& container, const Value& item, const Expr& at) {
  const Json& c = container.data();
  if (c.is_string() && item.data().is_string()) {
    return FindFirst(c.get_ref<const std::string&>(), item.data().get_ref<const std::string&>()) !=
           std::string::npos;
  }
  if (c.is_array()) {
    for (const Json& element : c) {
      if (ValuesEqual(Value::Of(element), item)) return true;
    }
    return false;
  }
  if (c.is_object()) return item.data().is_string() && c.contains(item.data().get<std::string>());
  if (container.undefined()) return false;
  Fail("argument of type '" + TypeName(container) + "' is not a container for 'in'", at);
}

// -1, 0, 1 like Python's ordering of two numbers or two strings.
int Compare(const Value& a, const Value& b, const Expr& at) {
  if (a.data().is_number() && b.data().is_number()) {
    double x = a.data().get<double>();
    double y = b.data().get<double>();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.data().is_string() && b.data().is_string()) {
    int c = a.data().get_ref<const std::string&>().compare(b.data().get_ref<const std::string&>());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  Fail("'" + at.name + "' not supported between '" + TypeName(a) + "' and '" + TypeName(b) + "'",
       at);
}

Value Arithmetic(const std::string& op, const Value& a, const Value& b, const Expr& at,
                 const RenderLimits& limits) {
  const Json& x = a.data();
  const Json& y = b.data();
  if (op == "+" && x.is_string() && y.is_string()) {
    return Value::Of(x.get<std::string>() + y.get<std::string>());
  }
  if (op == "+" && x.is_array() && y.is_array()) {
    Json joined = x;
    for (const Json& e : y) joined.push_back(e);
    return Value::Of(std::move(joined));
  }
  if (op == "*" && x.is_string() && y.is_number_integer()) {
    const std::string& unit = x.get_ref<const std::string&>();
    const int64_t times = std::max<int64_t>(0, y.get<int64_t>());
    // The size first (the product may not fit in int64), then the string.
    CheckStringSize(unit.empty() ? 0
                    : times > limits.max_output_bytes / static_cast<int64_t>(unit.size())
                        ? limits.max_output_bytes + 1
                        : times * static_cast<int64_t>(unit.size()),
                    limits, at);
    std::string repeated;
    repeated.reserve(unit.size() * times);
    for (int64_t i = 0; i < times; ++i) repeated += unit;
    return Value::Of(std::move(repeated));
  }
  if (!x.is_number() || !y.is_number() || x.is_boolean() || y.is_boolean()) {
    Fail(
        "unsupported operand types for " + op + ": '" + TypeName(a) + "' and '" + TypeName(b) + "'",
        at);
  }
  bool integers = x.is_number_integer() && y.is_number_integer();
  if (integers && op != "/") {
    int64_t i = x.get<int64_t>();
    int64_t j = y.get<int64_t>();
    if ((op == "//" || op == "%") && j == 0) Fail("integer division or modulo by zero", at);
    int64_t result = 0;
    // Python's ints do not overflow; ours are int64 and refuse to (INT64_MIN // -1 included).
    const bool overflow = op == "+"   ? __builtin_add_overflow(i, j, &result)
                          : op == "-" ? __builtin_sub_overflow(i, j, &result)
                          : op == "*" ? __builtin_mul_overflow(i, j, &result)
                                      : (i == INT64_MIN && j == -1);
    if (overflow) Fail("integer overflow in " + op + " (the template's numbers exceed int64)", at);
    if (op == "+" || op == "-" || op == "*") return Value::Of(result);
    int64_t q = i / j;
    if ((i % j != 0) && ((i < 0) != (j < 0))) --q;  // Python floors
    if (op == "//") return Value::Of(q);
    return Value::Of(i - q * j);
  }
  double i = x.get<double>();
  double j = y.get<double>();
  if ((op == "/" || op == "//" || op == "%") && j == 0.0) Fail("division by zero", at);
  if (op == "+") return Value::Of(i + j);
  if (op == "-") return Value::Of(i - j);
  if (op == "*") return Value::Of(i * j);
  if (op == "/") return Value::Of(i / j);
  if (op == "//") return Value::Of(std::floor(i / j));
  return Value::Of(i - std::floor(i / j) * j);
}

}  // namespace

Value Interpreter::EvalBinary(const Expr& expr) {
  const std::string& op = expr.name;
  Value left = Eval(*expr.args[0]);
  // and/or short-circuit and return an operand, as in Python.
  if (op == "and") return IsTruthy(left) ? Eval(*expr.args[1]) : left;
  if (op == "or") return IsTruthy(left) ? left : Eval(*expr.args[1]);
  Value right = Eval(*expr.args[1]);
  if (op == "==") return Value::Of(ValuesEqual(left, right));
  if (op == "!=") return Value::Of(!ValuesEqual(left, right));
  if (op == "in") return Value::Of(Contains(right, left, expr));
  if (op == "not in") return Value::Of(!Contains(right, left, expr));
  if (op == "~") return Value::Of(ToOutputString(left) + ToOutputString(right));
  if (op == "<") return Value::Of(Compare(left, right, expr) < 0);
  if (op == ">") return Value::Of(Compare(left, right, expr) > 0);
  if (op == "<=") return Value::Of(Compare(left, right, expr) <= 0);
  if (op == ">=") return Value::Of(Compare(left, right, expr) >= 0);
  Value result = Arithmetic(op, left, right, expr, limits_);
  if (result.data().is_array()) CheckBuilt(result.data(), expr.line, expr.column);  // list + list
  return result;
}

}  // namespace tandem::text::jinja
