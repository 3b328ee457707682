#include "text/jinja/builtins.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <optional>

#include "text/jinja/error.h"
#include "text/string_search.h"

namespace tandem::text::jinja {
namespace {

const Value* Kwarg(const Kwargs& kwargs, const std::string& name) {
  for (const auto& [key, value] : kwargs) {
    if (key == name) return &value;
  }
  return nullptr;
}

// Positional argument `index` (after the receiver), else keyword `name`, else null.
const Value* Arg(const std::vector<Value>& args, size_t index, const Kwargs& kwargs,
                 const std::string& name) {
  return index < args.size() ? &args[index] : Kwarg(kwargs, name);
}

std::string ExpectString(const Value& value, const std::string& what, const Expr& at) {
  if (!value.data().is_string()) {
    Fail(what + " expects a string, got '" + TypeName(value) + "'", at);
  }
  return value.data().get<std::string>();
}

// Python str.strip/lstrip/rstrip with an optional character set (default: whitespace), by
// byte, with a table lookup so a long set costs nothing per character.
std::string Strip(const std::string& s, const Value* chars, bool left, bool right) {
  const std::string set = chars && chars->data().is_string() ? chars->data().get<std::string>()
                                                             : std::string(" \t\n\r\f\v");
  bool in_set[256] = {};
  for (unsigned char c : set) in_set[c] = true;
  size_t begin = 0;
  size_t end = s.size();
  while (left && begin < end && in_set[static_cast<unsigned char>(s[begin])]) ++begin;
  while (right && end > begin && in_set[static_cast<unsigned char>(s[end - 1])]) --end;
  return s.substr(begin, end - begin);
}

// Python str.split; refused (at `at`) once it would make more parts than a render may iterate.
Json Split(const std::string& s, const Value* sep, const Value* max_split,
           const RenderLimits& limits, const Expr& at) {
  int64_t limit =
      max_split && max_split->data().is_number_integer() ? max_split->data().get<int64_t>() : -1;
  Json parts = Json::array();
  auto add = [&](std::string part) {
    if (static_cast<int64_t>(parts.size()) >= limits.max_loop_iterations) {
      Fail("split() would make more than " + std::to_string(limits.max_loop_iterations) +
               " parts (--chat-template-max-loop-iterations)",
           at);
    }
    parts.push_back(std::move(part));
  };
  if (!sep || sep->data().is_null()) {  // split on runs of whitespace
    size_t pos = 0;
    while (true) {
      while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
      if (pos >= s.size()) break;
      if (limit >= 0 && static_cast<int64_t>(parts.size()) == limit) {
        add(Strip(s.substr(pos), nullptr, false, true));
        break;
      }
      size_t end = pos;
      while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
      add(s.substr(pos, end - pos));
      pos = end;
    }
    return parts;
  }
  std::string separator = sep->data().get<std::string>();
  size_t pos = 0;
  while (limit < 0 || static_cast<int64_t>(parts.size()) < limit) {
    size_t found = separator.empty() ? std::string::npos : FindFirst(s, separator, pos);
    if (found == std::string::npos) break;
    add(s.substr(pos, found - pos));
    pos = found + separator.size();
  }
  add(s.substr(pos));
  return parts;
}

// Python str.replace, linear: count, check the size, then build (replacing in place shifted
// the tail at every hit: quadratic).
std::string Replace(const std::string& s, const std::string& from, const std::string& to,
                    const RenderLimits& limits, const Expr& at) {
  if (from.empty()) return s;
  auto next = [&](size_t p) { return FindFirst(s, from, p); };
  int64_t count = 0;
  for (size_t p = next(0); p != std::string::npos; p = next(p + from.size())) ++count;
  const int64_t growth = static_cast<int64_t>(to.size()) - static_cast<int64_t>(from.size());
  CheckStringSize(static_cast<int64_t>(s.size()) + count * growth, limits, at);
  std::string out;
  out.reserve(static_cast<size_t>(static_cast<int64_t>(s.size()) + count * growth));
  size_t last = 0;
  for (size_t p = next(0); p != std::string::npos; p = next(p + from.size())) {
    out.append(s, last, p - last);
    out += to;
    last = p + from.size();
  }
  out.append(s, last, std::string::npos);
  return out;
}

bool AffixMatches(const std::string& s, const Value& affix, bool prefix) {
  std::vector<Json> candidates = affix.data().is_array()
                                     ? std::vector<Json>(affix.data().begin(), affix.data().end())
                                     : std::vector<Json>{affix.data()};
  for (const Json& c : candidates) {
    if (!c.is_string()) continue;
    const std::string& a = c.get_ref<const std::string&>();
    if (a.size() > s.size()) continue;
    if (prefix ? s.compare(0, a.size(), a) == 0
               : s.compare(s.size() - a.size(), a.size(), a) == 0) {
      return true;
    }
  }
  return false;
}

std::string ChangeCase(std::string s, bool upper) {
  for (char& c : s)
    c = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c))
                                : std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Json Items(const Json& object) {
  Json items = Json::array();
  for (auto it = object.begin(); it != object.end(); ++it) items.push_back({it.key(), it.value()});
  return items;
}

}  // namespace

void CheckStringSize(int64_t bytes, const RenderLimits& limits, const Expr& at) {
  if (bytes > limits.max_output_bytes) {
    Fail("a string built by the template would be " + std::to_string(bytes) +
             " bytes, more than the limit of " + std::to_string(limits.max_output_bytes) +
             " (--chat-template-max-output-bytes)",
         at);
  }
}

Value ApplyFilter(const std::string& name, const std::vector<Value>& args, const Kwargs& kwargs,
                  const Expr& at, const RenderLimits& limits) {
  const Value& input = args[0];
  const Json& d = input.data();
  if (name == "default" || name == "d") {
    const Value* fallback = Arg(args, 1, kwargs, "default_value");
    const Value* boolean = Arg(args, 2, kwargs, "boolean");
    bool use_fallback = input.undefined() || (boolean && IsTruthy(*boolean) && !IsTruthy(input));
    return use_fallback ? (fallback ? *fallback : Value::Of("")) : input;
  }
  if (name == "tojson") {
    const Value* indent = Arg(args, 1, kwargs, "indent");
    int64_t spaces =
        indent && indent->data().is_number_integer() ? indent->data().get<int64_t>() : -1;
    CheckStringSize(spaces, limits, at);  // one level's indent alone
    std::optional<std::string> text =
        ToJsonText(d, static_cast<int>(spaces), limits.max_output_bytes);
    if (!text) CheckStringSize(limits.max_output_bytes + 1, limits, at);
    return Value::Of(std::move(*text));
  }
  if (name == "string") return Value::Of(ToOutputString(input));
  if (name == "safe") return input;
  if (name == "length" || name == "count") {
    if (d.is_string()) return Value::Of(d.get_ref<const std::string&>().size());
    if (d.is_array() || d.is_object()) return Value::Of(d.size());
    if (input.undefined()) return Value::Of(0);
    Fail("object of type '" + TypeName(input) + "' has no length", at);
  }
  if (name == "trim") return Value::Of(Strip(ExpectString(input, "trim", at), nullptr, true, true));
  if (name == "upper" || name == "lower") {
    return Value::Of(ChangeCase(ExpectString(input, name, at), name == "upper"));
  }
  if (name == "capitalize") {
    std::string s = ChangeCase(ExpectString(input, name, at), false);
    if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return Value::Of(s);
  }
  if (name == "replace") {
    if (args.size() < 3) Fail("replace expects (old, new)", at);
    return Value::Of(Replace(ExpectString(input, name, at), ExpectString(args[1], name, at),
                             ExpectString(args[2], name, at), limits, at));
  }
  if (name == "items") {
    if (!d.is_object()) Fail("items expects a dict, got '" + TypeName(input) + "'", at);
    return Value::Of(Items(d));
  }
  if (name == "list") {
    if (d.is_array()) return input;
    if (d.is_object()) return CallMethod(input, "keys", {}, {}, at, limits);
    Fail("list expects a list or dict, got '" + TypeName(input) + "'", at);
  }
  if (name == "first" || name == "last") {
    if (!d.is_array()) Fail(name + " expects a list, got '" + TypeName(input) + "'", at);
    if (d.empty()) return Value::Undefined();
    return Value::Of(name == "first" ? d.front() : d.back());
  }
  if (name == "reverse") {
    if (d.is_string()) {
      std::string s = d.get<std::string>();
      return Value::Of(std::string(s.rbegin(), s.rend()));
    }
    if (!d.is_array()) Fail("reverse expects a list or string", at);
    return Value::Of(Json(std::vector<Json>(d.rbegin(), d.rend())));
  }
  if (name == "join") {
    const Value* sep = Arg(args, 1, kwargs, "d");
    std::string separator = sep ? ExpectString(*sep, "join", at) : "";
    std::string out;
    for (size_t i = 0; i < d.size(); ++i) {
      out += (i ? separator : "") + ToOutputString(Value::Of(d[i]));
      CheckStringSize(static_cast<int64_t>(out.size()), limits, at);
    }
    return Value::Of(out);
  }
  if (name == "int") {
    if (d.is_number_integer()) return input;
    if (d.is_number()) {  // Python truncates toward zero; ours must fit int64
      const double v = std::trunc(d.get<double>());
      if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
        Fail("int() of " + ToOutputString(input) + " does not fit in int64", at);
      }
      return Value::Of(static_cast<int64_t>(v));
    }
    if (d.is_string()) {
      try {
        return Value::Of(std::stoll(d.get<std::string>()));
      } catch (...) {
      }
    }
    return Value::Of(0);
  }
  Fail("unknown filter '" + name + "'", at);
}

bool ApplyTest(const std::string& name, const std::vector<Value>& args, const Expr& at) {
  const Value& v = args[0];
  const Json& d = v.data();
  if (name == "defined") return !v.undefined();
  if (name == "undefined") return v.undefined();
  if (v.undefined() && name != "none") return false;
  if (name == "none") return !v.undefined() && d.is_null();
  if (name == "string") return d.is_string();
  if (name == "number") return d.is_number();
  if (name == "integer") return d.is_number_integer();
  if (name == "float") return d.is_number_float();
  if (name == "boolean") return d.is_boolean();
  if (name == "true") return d.is_boolean() && d.get<bool>();
  if (name == "false") return d.is_boolean() && !d.get<bool>();
  if (name == "mapping") return d.is_object();
  if (name == "sequence") return d.is_array() || d.is_string() || d.is_object();
  if (name == "iterable") return d.is_array() || d.is_string() || d.is_object();
  if (name == "even" || name == "odd") {
    if (!d.is_number_integer()) Fail(name + " expects an integer", at);
    return (d.get<int64_t>() % 2 == 0) == (name == "even");
  }
  if (name == "eq" || name == "equalto" || name == "sameas") {
    if (args.size() < 2) Fail("test '" + name + "' expects one argument", at);
    return ValuesEqual(v, args[1]);
  }
  Fail("unknown test '" + name + "'", at);
}

Value CallMethod(const Value& object, const std::string& method, const std::vector<Value>& args,
                 const Kwargs& kwargs, const Expr& at, const RenderLimits& limits) {
  const Json& d = object.data();
  if (d.is_string()) {
    const std::string& s = d.get_ref<const std::string&>();
    const Value* a0 = Arg(args, 0, kwargs, "chars");
    if (method == "strip") return Value::Of(Strip(s, a0, true, true));
    if (method == "lstrip") return Value::Of(Strip(s, a0, true, false));
    if (method == "rstrip") return Value::Of(Strip(s, a0, false, true));
    if (method == "upper" || method == "lower") return Value::Of(ChangeCase(s, method == "upper"));
    if (method == "startswith" || method == "endswith") {
      if (args.empty()) Fail(method + "() expects an argument", at);
      return Value::Of(AffixMatches(s, args[0], method == "startswith"));
    }
    if (method == "split") {
      return Value::Of(
          Split(s, Arg(args, 0, kwargs, "sep"), Arg(args, 1, kwargs, "maxsplit"), limits, at));
    }
    if (method == "replace" && args.size() >= 2) {
      return Value::Of(Replace(s, ExpectString(args[0], method, at),
                               ExpectString(args[1], method, at), limits, at));
    }
    if (method == "find" && !args.empty()) {
      size_t pos = FindFirst(s, ExpectString(args[0], method, at));
      return Value::Of(pos == std::string::npos ? int64_t{-1} : static_cast<int64_t>(pos));
    }
  }
  if (d.is_object()) {
    if (method == "items") return Value::Of(Items(d));
    if (method == "keys" || method == "values") {
      Json out = Json::array();
      for (auto it = d.begin(); it != d.end(); ++it) {
        out.push_back(method == "keys" ? Json(it.key()) : it.value());
      }
      return Value::Of(std::move(out));
    }
    if (method == "get" && !args.empty() && args[0].data().is_string()) {
      auto it = d.find(args[0].data().get<std::string>());
      if (it != d.end()) return Value::Of(*it);
      return args.size() > 1 ? args[1] : Value::Of(nullptr);
    }
  }
  Fail("'" + TypeName(object) + "' object has no method '" + method + "'", at);
}

bool IsGlobalFunction(const std::string& name) {
  return name == "raise_exception" || name == "namespace" || name == "range" ||
         name == "strftime_now";
}

Value CallFunction(const std::string& name, const std::vector<Value>& args, const Kwargs& kwargs,
                   const Expr& at, const RenderLimits& limits) {
  if (name == "raise_exception") {
    std::string message = args.empty() ? "raise_exception() called" : ToOutputString(args[0]);
    throw TemplateError(message, at.line, at.column, /*raised=*/true);
  }
  if (name == "namespace") {
    Json ns = Json::object();
    for (const auto& [key, value] : kwargs) ns[key] = value.data();
    return Value::Of(std::move(ns));
  }
  if (name == "strftime_now") {  // HF transformers: datetime.now().strftime(format), local time
    if (args.size() != 1 || !args[0].data().is_string()) {
      Fail("strftime_now() expects one format string, e.g. strftime_now('%d %b %Y')", at);
    }
    std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buffer[256];
    const std::string& format = args[0].data().get_ref<const std::string&>();
    size_t size = std::strftime(buffer, sizeof(buffer), format.c_str(), &local);
    return Value::Of(std::string(buffer, size));
  }
  // range(stop) / range(start, stop[, step])
  std::vector<int64_t> bounds;
  for (const Value& arg : args) {
    if (!arg.data().is_number_integer()) Fail("range() expects integers", at);
    bounds.push_back(arg.data().get<int64_t>());
  }
  if (bounds.empty() || bounds.size() > 3) Fail("range() expects 1 to 3 arguments", at);
  const int64_t start = bounds.size() > 1 ? bounds[0] : 0;
  const int64_t stop = bounds.size() > 1 ? bounds[1] : bounds[0];
  const int64_t step = bounds.size() > 2 ? bounds[2] : 1;
  if (step == 0) Fail("range() step must not be zero", at);
  // Its exact length before building it (jinja2's sandbox has MAX_RANGE for the same reason),
  // in 128 bits: start + k·step then stays inside [start, stop) and never wraps.
  const __int128 span =
      step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  const __int128 stride = step > 0 ? static_cast<__int128>(step) : -static_cast<__int128>(step);
  const __int128 length = span <= 0 ? 0 : (span - 1) / stride + 1;
  if (length > limits.max_loop_iterations) {
    const int64_t shown = length > INT64_MAX ? INT64_MAX : static_cast<int64_t>(length);
    Fail("range() of " + std::to_string(shown) + " items is longer than the limit of " +
             std::to_string(limits.max_loop_iterations) +
             " loop iterations per render (--chat-template-max-loop-iterations)",
         at);
  }
  Json out = Json::array();
  for (int64_t k = 0; k < static_cast<int64_t>(length); ++k) {
    out.push_back(static_cast<int64_t>(start + static_cast<__int128>(k) * step));
  }
  return Value::Of(std::move(out));
}

}  // namespace tandem::text::jinja
