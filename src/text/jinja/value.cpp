#include "text/jinja/value.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace tandem::text::jinja {
namespace {

// Python repr of a float: shortest round-trip digits, always with a '.' or exponent.
std::string FloatRepr(double value) {
  if (std::isnan(value)) {
    return "nan";
  }
  if (std::isinf(value)) {
    return value > 0 ? "inf" : "-inf";
  }
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, end);
  if (text.find_first_of(".en") == std::string::npos) {
    text += ".0";
  }
  return text;
}

std::string JsonString(const std::string& text) {
  // nlohmann escapes like json.dumps(ensure_ascii=False): \" \\ \n \t and other controls as \uXXXX.
  return Json(text).dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

std::string PythonRepr(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      std::string out = "'";
      for (char c : s) {
        if (c == '\'' || c == '\\') {
          out += '\\';
        }
        if (c == '\n') {
          out += "\\n";
        } else {
          out += c;
        }
      }
      return out + "'";
    }
    case Json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < value.size(); ++i) {
        out += (i ? ", " : "") + PythonRepr(value[i]);
      }
      return out + "]";
    }
    case Json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        out += (first ? "" : ", ") + PythonRepr(Json(it.key())) + ": " + PythonRepr(it.value());
        first = false;
      }
      return out + "}";
    }
    default:
      return ToOutputString(Value::Of(value));
  }
}

// Appends json.dumps(value) to *out; false (output incomplete) once *out passes max_bytes.
// Indents are appended in place (no string per level: depth² · indent bytes at once before).
bool AppendJson(const Json& value, int indent, int depth, int64_t max_bytes, std::string* out) {
  auto line_break = [&](int level) {  // "\n" + level·indent spaces, when indenting
    if (indent < 0) {
      return true;
    }
    if (static_cast<int64_t>(out->size()) + 1 + static_cast<int64_t>(level) * indent > max_bytes) {
      return false;
    }
    out->push_back('\n');
    out->append(static_cast<size_t>(level) * indent, ' ');
    return true;
  };
  const char* separator = indent >= 0 ? "," : ", ";
  if (value.is_array() || value.is_object()) {
    if (value.empty()) {
      *out += value.is_array() ? "[]" : "{}";
      return true;
    }
    *out += value.is_array() ? "[" : "{";
    bool first = true;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!first) {
        *out += separator;
      }
      first = false;
      if (!line_break(depth + 1)) {
        return false;
      }
      if (value.is_object()) {
        *out += JsonString(it.key()) + ": ";
      }
      if (!AppendJson(it.value(), indent, depth + 1, max_bytes, out)) {
        return false;
      }
    }
    if (!line_break(depth)) {
      return false;
    }
    *out += value.is_array() ? "]" : "}";
  } else if (value.is_string()) {
    *out += JsonString(value.get<std::string>());
  } else if (value.is_number_float()) {
    *out += FloatRepr(value.get<double>());
  } else {
    *out += value.dump();  // null, true, false, integers
  }
  return static_cast<int64_t>(out->size()) <= max_bytes;
}

}  // namespace

namespace {
thread_local RenderMeter* t_meter = nullptr;
}  // namespace

RenderMeter::Scope::Scope(RenderMeter* meter) : previous_(t_meter) { t_meter = meter; }
RenderMeter::Scope::~Scope() { t_meter = previous_; }

int64_t JsonBytes(const Json& value) {
  int64_t bytes = 0;
  std::vector<const Json*> stack = {&value};
  while (!stack.empty()) {
    const Json* v = stack.back();
    stack.pop_back();
    bytes += 8;
    if (v->is_string()) {
      bytes += static_cast<int64_t>(v->get_ref<const std::string&>().size());
    } else if (v->is_object()) {
      for (auto it = v->begin(); it != v->end(); ++it) {
        bytes += static_cast<int64_t>(it.key().size());
        stack.push_back(&*it);
      }
    } else if (v->is_array()) {
      for (const Json& item : *v) {
        stack.push_back(&item);
      }
    }
  }
  return bytes;
}

std::shared_ptr<const Json> Value::Make(Json data) {
  if (t_meter == nullptr) {
    return std::make_shared<const Json>(std::move(data));
  }
  const int64_t bytes = JsonBytes(data);
  std::shared_ptr<int64_t> live = t_meter->live_;
  *live += bytes;
  return std::shared_ptr<const Json>(new Json(std::move(data)), [live, bytes](const Json* p) {
    delete p;
    *live -= bytes;
  });
}

const std::shared_ptr<const Json>& Value::Null() {
  static const auto* null = new std::shared_ptr<const Json>(std::make_shared<const Json>());
  return *null;
}

Json& Value::MutableData() {
  if (data_.use_count() != 1 || data_ == Null()) {
    data_ = Make(*data_);
  }
  // Sole owner now: the const is ours to drop (the object was made non-const by make_shared).
  return const_cast<Json&>(*data_);
}

bool IsTruthy(const Value& value) {
  if (value.undefined()) {
    return false;
  }
  const Json& d = value.data();
  switch (d.type()) {
    case Json::value_t::null:
      return false;
    case Json::value_t::boolean:
      return d.get<bool>();
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return d.get<int64_t>() != 0;
    case Json::value_t::number_float:
      return d.get<double>() != 0.0;
    // json::empty() is false for every string, so strings are checked by their size.
    case Json::value_t::string:
      return !d.get_ref<const std::string&>().empty();
    case Json::value_t::array:
    case Json::value_t::object:
      return !d.empty();
    default:
      return false;
  }
}

std::string ToOutputString(const Value& value) {
  if (value.undefined()) {
    return "";
  }
  const Json& d = value.data();
  switch (d.type()) {
    case Json::value_t::null:
      return "None";
    case Json::value_t::boolean:
      return d.get<bool>() ? "True" : "False";
    case Json::value_t::number_float:
      return FloatRepr(d.get<double>());
    case Json::value_t::string:
      return d.get<std::string>();
    case Json::value_t::array:
    case Json::value_t::object:
      return PythonRepr(d);
    default:
      return d.dump();
  }
}

bool ValuesEqual(const Value& a, const Value& b) {
  if (a.undefined() || b.undefined()) {
    return a.undefined() == b.undefined();
  }
  if (a.data().is_number() && b.data().is_number()) {
    if (a.data().is_number_float() || b.data().is_number_float()) {
      return a.data().get<double>() == b.data().get<double>();
    }
    return a.data().get<int64_t>() == b.data().get<int64_t>();
  }
  return a.data() == b.data();
}

std::string ToJsonText(const Json& value, int indent) {
  std::string out;
  AppendJson(value, indent, 0, INT64_MAX, &out);
  return out;
}

std::optional<std::string> ToJsonText(const Json& value, int indent, int64_t max_bytes) {
  std::string out;
  if (!AppendJson(value, indent, 0, max_bytes, &out)) {
    return std::nullopt;
  }
  return out;
}

std::string TypeName(const Value& value) {
  if (value.undefined()) {
    return "undefined";
  }
  switch (value.data().type()) {
    case Json::value_t::null:
      return "NoneType";
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "int";
    case Json::value_t::number_float:
      return "float";
    case Json::value_t::string:
      return "str";
    case Json::value_t::array:
      return "list";
    case Json::value_t::object:
      return "dict";
    default:
      return "unknown";
  }
}

}  // namespace tandem::text::jinja
