// GgufReader's typed metadata getters.
#include "model/loader/gguf_reader.h"

namespace tandem::model {
namespace {

bool IsInt(GgufType t) {
  switch (t) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kU16:
    case GgufType::kI16:
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kU64:
    case GgufType::kI64:
      return true;
    default:
      return false;
  }
}
bool IsFloat(GgufType t) { return t == GgufType::kF32 || t == GgufType::kF64; }

const char* TypeName(GgufType t) {
  static const char* kNames[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                 "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = static_cast<uint32_t>(t);
  return i < 13 ? kNames[i] : "?";
}

}  // namespace

Result<const GgufValue*> GgufReader::Lookup(const std::string& key, GgufType type) const {
  auto it = metadata_.find(key);
  if (it == metadata_.end()) {
    return NotFound("GGUF file '" + path() + "' has no metadata key '" + key + "'");
  }
  const GgufType found = it->second.type;
  const bool matches = found == type || (type == GgufType::kI64 && IsInt(found)) ||
                       (type == GgufType::kF64 && (IsFloat(found) || IsInt(found)));
  if (!matches) {
    return InvalidArgument("GGUF metadata '" + key + "' in '" + path() + "' is " + TypeName(found) +
                           "; expected " + TypeName(type));
  }
  return &it->second;
}

Result<std::string> GgufReader::GetString(const std::string& key) const {
  TANDEM_ASSIGN_OR_RETURN(const GgufValue* v, Lookup(key, GgufType::kString));
  return v->s;
}

Result<int64_t> GgufReader::GetInt(const std::string& key) const {
  TANDEM_ASSIGN_OR_RETURN(const GgufValue* v, Lookup(key, GgufType::kI64));
  return v->i;
}

Result<double> GgufReader::GetFloat(const std::string& key) const {
  TANDEM_ASSIGN_OR_RETURN(const GgufValue* v, Lookup(key, GgufType::kF64));
  return IsInt(v->type) ? static_cast<double>(v->i) : v->f;
}

Result<bool> GgufReader::GetBool(const std::string& key) const {
  TANDEM_ASSIGN_OR_RETURN(const GgufValue* v, Lookup(key, GgufType::kBool));
  return v->b;
}

Result<int64_t> GgufReader::GetIntOr(const std::string& key, int64_t fallback) const {
  if (!Has(key)) return fallback;
  return GetInt(key);
}

Result<double> GgufReader::GetFloatOr(const std::string& key, double fallback) const {
  if (!Has(key)) return fallback;
  return GetFloat(key);
}

Result<std::vector<std::string>> GgufReader::GetStringArray(const std::string& key) const {
  TANDEM_ASSIGN_OR_RETURN(const GgufValue* v, Lookup(key, GgufType::kArray));
  if (v->array_type != GgufType::kString) {
    return InvalidArgument("GGUF metadata '" + key + "' is an array of " + TypeName(v->array_type) +
                           "; expected strings");
  }
  std::vector<std::string> out;
  out.reserve(v->array.size());
  for (const GgufValue& e : v->array) out.push_back(e.s);
  return out;
}

Result<std::vector<float>> GgufReader::GetFloatArray(const std::string& key) const {
  TANDEM_ASSIGN_OR_RETURN(const GgufValue* v, Lookup(key, GgufType::kArray));
  if (!IsFloat(v->array_type) && !IsInt(v->array_type)) {
    return InvalidArgument("GGUF metadata '" + key + "' is an array of " + TypeName(v->array_type) +
                           "; expected numbers");
  }
  std::vector<float> out;
  out.reserve(v->array.size());
  for (const GgufValue& e : v->array) {
    out.push_back(IsInt(e.type) ? static_cast<float>(e.i) : static_cast<float>(e.f));
  }
  return out;
}

Result<std::vector<int64_t>> GgufReader::GetIntArray(const std::string& key) const {
  TANDEM_ASSIGN_OR_RETURN(const GgufValue* v, Lookup(key, GgufType::kArray));
  if (!IsInt(v->array_type) && v->array_type != GgufType::kBool) {
    return InvalidArgument("GGUF metadata '" + key + "' is an array of " + TypeName(v->array_type) +
                           "; expected integers");
  }
  std::vector<int64_t> out;
  out.reserve(v->array.size());
  for (const GgufValue& e : v->array) out.push_back(e.type == GgufType::kBool ? e.b : e.i);
  return out;
}

}  // namespace tandem::model
