#include "cluster/manager/resources.h"

#include <cctype>

#include <fmt/format.h>

#include <set>
#include <vector>

#include "cluster/manager/rest_util.h"

namespace tandem::cluster::manager {

using nlohmann::json;

namespace {

enum class Kind { kString, kInt, kBool, kStringArray, kStringMap, kObject };

struct Field {
  const char* name;
  Kind kind;
  json default_value;                     // null = required
  std::vector<std::string> allowed = {};  // for kString: the only values accepted
};

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kString:
      return "a string";
    case Kind::kInt:
      return "an integer";
    case Kind::kBool:
      return "a boolean";
    case Kind::kStringArray:
      return "an array of strings";
    case Kind::kStringMap:
      return "an object of strings";
    case Kind::kObject:
      return "an object";
  }
  return "?";
}

bool HasKind(const json& value, Kind kind) {
  switch (kind) {
    case Kind::kString:
      return value.is_string();
    case Kind::kInt:
      return value.is_number_integer();
    case Kind::kBool:
      return value.is_boolean();
    case Kind::kObject:
      return value.is_object();
    case Kind::kStringArray:
      if (!value.is_array()) return false;
      for (const json& v : value) {
        if (!v.is_string()) return false;
      }
      return true;
    case Kind::kStringMap:
      if (!value.is_object()) return false;
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) return false;
      }
      return true;
  }
  return false;
}

const std::set<std::string> kCommonReadOnly = {"id", "created_at", "updated_at",
                                               "resource_version"};

// Checks `body` against `fields`: every field present has its kind (null = default), required
// ones are present, nothing unknown (read-only ones are dropped). `what` names the resource.
Result<json> CheckFields(const json& body, const std::vector<Field>& fields,
                         const std::set<std::string>& read_only, const std::string& what) {
  if (!body.is_object()) return InvalidArgument(fmt::format("the {} must be a JSON object", what));
  json out = json::object();
  for (const auto& [key, value] : body.items()) {
    if (kCommonReadOnly.count(key) || read_only.count(key)) continue;
    const Field* field = nullptr;
    for (const Field& f : fields) {
      if (key == f.name) field = &f;
    }
    if (!field) {
      std::string known;
      for (const Field& f : fields) known += (known.empty() ? "" : ", ") + std::string(f.name);
      return InvalidArgument(fmt::format("{}: unknown field '{}' (known: {})", what, key, known));
    }
    if (value.is_null() && !field->default_value.is_null()) continue;  // default below
    if (!HasKind(value, field->kind)) {
      return InvalidArgument(fmt::format("{}: field '{}' must be {}, not {}", what, key,
                                         KindName(field->kind), Shown(value)));
    }
    if (!field->allowed.empty() && std::find(field->allowed.begin(), field->allowed.end(),
                                             value.get<std::string>()) == field->allowed.end()) {
      std::string allowed;
      for (const std::string& a : field->allowed) allowed += (allowed.empty() ? "" : ", ") + a;
      return InvalidArgument(fmt::format("{}: field '{}' must be one of {}, not {}", what, key,
                                         allowed, Shown(value)));
    }
    out[key] = value;
  }
  for (const Field& f : fields) {
    if (out.contains(f.name)) continue;
    if (f.default_value.is_null()) {
      return InvalidArgument(fmt::format("{}: field '{}' is required", what, f.name));
    }
    out[f.name] = f.default_value;
  }
  return out;
}

}  // namespace

Status ValidateName(const std::string& field, const std::string& name) {
  const auto ok_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  };
  bool ok = !name.empty() && name.size() <= 63 && ok_char(name[0]) && name[0] != '.' &&
            name[0] != '_' && name[0] != '-';
  for (char c : name) ok = ok && ok_char(c);
  if (!ok) {
    return InvalidArgument(fmt::format(
        "field '{}': '{}' is not a valid name (1-63 characters of letters, digits, '.', '_', "
        "'-', starting with a letter or digit)",
        field, name));
  }
  return Status::Ok();
}

Result<json> ValidateModel(const json& body) {
  static const std::vector<Field> kFields = {
      {"name", Kind::kString, nullptr},
      {"description", Kind::kString, ""},
      {"source", Kind::kString, "local_path", {"local_path"}},
      {"local_path", Kind::kString, nullptr},
      {"replicas", Kind::kInt, 1},
      {"backend", Kind::kString, kBuiltinBackend},
      {"backend_version", Kind::kString, ""},
      {"backend_parameters", Kind::kStringArray, json::array()},
      {"env", Kind::kStringMap, json::object()},
      {"placement_strategy", Kind::kString, "spread", {"spread", "binpack"}},
      {"worker_selector", Kind::kStringMap, json::object()},
      {"gpu_selector", Kind::kObject, json::object()},
      {"restart_on_error", Kind::kBool, true},
      {"distributed_inference_across_workers", Kind::kBool, false},
  };
  auto out = CheckFields(body, kFields, {"ready_replicas"}, "model");
  if (!out.ok()) return out;
  json& m = *out;
  TANDEM_RETURN_IF_ERROR(ValidateName("name", m["name"]));
  if (m["local_path"].get<std::string>().empty()) {
    return InvalidArgument("model: field 'local_path' must not be empty");
  }
  if (m["replicas"].get<int64_t>() < 0 || m["replicas"].get<int64_t>() > 64) {
    return InvalidArgument(
        fmt::format("model: field 'replicas' must be 0..64, not {}", Shown(m["replicas"])));
  }
  static const std::vector<Field> kSelector = {
      {"gpu_ids", Kind::kStringArray, json::array()},
      {"gpus_per_replica", Kind::kInt, 0},
  };
  auto selector = CheckFields(m["gpu_selector"], kSelector, {}, "model gpu_selector");
  if (!selector.ok()) return selector.status();
  std::set<std::string> seen;
  for (const json& id : (*selector)["gpu_ids"]) {
    const std::string s = id.get<std::string>();
    // WORKER:TYPE:INDEX, the worker name itself free of ':'.
    const size_t a = s.find(':');
    const size_t b = a == std::string::npos ? a : s.find(':', a + 1);
    bool ok = a != std::string::npos && b != std::string::npos && a > 0 && b > a + 1 &&
              b + 1 < s.size() && s.find(':', b + 1) == std::string::npos;
    for (size_t i = b + 1; ok && i < s.size(); ++i) ok = s[i] >= '0' && s[i] <= '9';
    if (!ok) {
      return InvalidArgument(fmt::format(
          "model: gpu_selector.gpu_ids entry '{}' is not WORKER:TYPE:INDEX (e.g. node-a:cpu:0)",
          s));
    }
    if (!seen.insert(s).second) {
      return InvalidArgument(fmt::format("model: gpu_selector.gpu_ids lists '{}' twice", s));
    }
  }
  if ((*selector)["gpus_per_replica"].get<int64_t>() < 0) {
    return InvalidArgument("model: gpu_selector.gpus_per_replica must be >= 0");
  }
  m["gpu_selector"] = std::move(selector).value();
  for (const auto& [key, value] : m["env"].items()) {
    bool ok = !key.empty() && key.size() <= 256 && !(key[0] >= '0' && key[0] <= '9');
    for (char c : key) {
      ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    }
    if (!ok) {
      return InvalidArgument(fmt::format(
          "model: env name {} is not valid (letters, digits and '_', not starting with a digit)",
          Shown(json(key))));
    }
  }
  return out;
}

json BuiltinBackend() {
  return {
      {"backend_name", kBuiltinBackend},
      {"description", "tandem's own engine: tandem serve with vLLM's flags"},
      {"version_configs", json::object()},
      {"default_version", ""},
      {"default_run_command",
       "{{model_path}} --host {{worker_ip}} --port {{port}} --served-model-name {{model_name}}"},
      {"default_entrypoint", "tandem serve"},
      {"default_env", json::object()},
      {"default_backend_param", json::array()},
      {"health_check_path", "/v1/models"},
      {"parameter_format", "space"},
      {"is_built_in", true}};
}

Result<json> ValidateBackend(const json& body) {
  static const std::vector<Field> kFields = {
      {"backend_name", Kind::kString, nullptr},
      {"description", Kind::kString, ""},
      {"version_configs", Kind::kObject, json::object()},
      {"default_version", Kind::kString, ""},
      {"default_run_command", Kind::kString, ""},
      {"default_entrypoint", Kind::kString, ""},
      {"default_env", Kind::kStringMap, json::object()},
      {"default_backend_param", Kind::kStringArray, json::array()},
      {"health_check_path", Kind::kString, "/v1/models"},
      {"parameter_format", Kind::kString, "space", {"space", "equal"}},
  };
  auto out = CheckFields(body, kFields, {"is_built_in"}, "inference backend");
  if (!out.ok()) return out;
  json& b = *out;
  const std::string name = b["backend_name"];
  TANDEM_RETURN_IF_ERROR(ValidateName("backend_name", name));
  if (name == kBuiltinBackend) {
    return InvalidArgument(
        "inference backend: 'tandem' is the built-in backend and cannot be "
        "created or replaced; name a custom one '<name>-custom'");
  }
  if (name.size() < 8 || name.compare(name.size() - 7, 7, "-custom") != 0) {
    return InvalidArgument(fmt::format(
        "inference backend: custom backend names end in '-custom' (as GPUStack's), not '{}'",
        name));
  }
  static const std::vector<Field> kVersion = {
      {"run_command", Kind::kString, ""},
      {"entrypoint", Kind::kString, ""},
      {"env", Kind::kStringMap, json::object()},
      {"custom_framework", Kind::kString, ""},
  };
  json versions = json::object();
  for (const auto& [version, config] : b["version_configs"].items()) {
    if (version.empty()) return InvalidArgument("inference backend: an empty version name");
    auto checked = CheckFields(config, kVersion, {},
                               fmt::format("inference backend version_configs['{}']", version));
    if (!checked.ok()) return checked.status();
    if ((*checked)["entrypoint"].get<std::string>().empty() &&
        b["default_entrypoint"].get<std::string>().empty()) {
      return InvalidArgument(
          fmt::format("inference backend: version '{}' has no entrypoint and there is no "
                      "default_entrypoint: the agent would not know what to run",
                      version));
    }
    versions[version] = std::move(checked).value();
  }
  b["version_configs"] = std::move(versions);
  const std::string default_version = b["default_version"];
  if (!default_version.empty() && !b["version_configs"].contains(default_version)) {
    return InvalidArgument(fmt::format(
        "inference backend: default_version '{}' is not one of version_configs", default_version));
  }
  if (b["version_configs"].empty() && b["default_entrypoint"].get<std::string>().empty()) {
    return InvalidArgument(
        "inference backend: give version_configs or a default_entrypoint (what to run)");
  }
  const std::string health = b["health_check_path"];
  if (health.empty() || health[0] != '/') {
    return InvalidArgument(
        fmt::format("inference backend: health_check_path must start with '/', not '{}'", health));
  }
  b["is_built_in"] = false;
  return out;
}

Result<json> ValidateApiKeyRequest(const json& body) {
  static const std::vector<Field> kFields = {
      {"name", Kind::kString, nullptr},
      {"description", Kind::kString, ""},
      {"expires_in", Kind::kInt, 0},
      {"scope", Kind::kStringArray, json::array({"*"})},
      {"allowed_model_names", Kind::kStringArray, json::array()},
  };
  auto out = CheckFields(
      body, kFields,
      {"value", "masked_value", "expires_at", "user_id", "access_key", "last_used_at"}, "api key");
  if (!out.ok()) return out;
  json& k = *out;
  const std::string name = k["name"];
  if (name.empty() || name.size() > 128) {
    return InvalidArgument("api key: field 'name' must be 1..128 characters");
  }
  if (k["scope"].empty()) return InvalidArgument("api key: field 'scope' must not be empty");
  constexpr int64_t kTenYears = 10LL * 366 * 24 * 3600;
  if (k["expires_in"].get<int64_t>() > kTenYears) {
    return InvalidArgument(fmt::format(
        "api key: field 'expires_in' must be at most {} seconds (10 years); <= 0 never expires",
        kTenYears));
  }
  for (const json& s : k["scope"]) {
    const std::string scope = s;
    if (scope != "*" && scope != "management" && scope != "inference") {
      return InvalidArgument(
          fmt::format("api key: scope '{}' is not one of *, management, inference", scope));
    }
  }
  return out;
}

Result<json> ValidateUserRequest(const json& body, bool create) {
  static const std::vector<Field> kCreate = {
      {"username", Kind::kString, nullptr},
      {"password", Kind::kString, nullptr},
      {"is_admin", Kind::kBool, false},
      {"full_name", Kind::kString, ""},
  };
  static const std::vector<Field> kUpdate = {
      {"username", Kind::kString, nullptr},
      {"password", Kind::kString, ""},  // "" = unchanged
      {"is_admin", Kind::kBool, false},
      {"full_name", Kind::kString, ""},
  };
  auto out = CheckFields(body, create ? kCreate : kUpdate, {"require_password_change"}, "user");
  if (!out.ok()) return out;
  TANDEM_RETURN_IF_ERROR(ValidateName("username", (*out)["username"]));
  const std::string password = (*out)["password"];
  if ((create || !password.empty()) && (password.size() < 6 || password.size() > 256)) {
    return InvalidArgument("user: field 'password' must be 6..256 characters");
  }
  return out;
}

Result<json> ValidateWorkerUpdate(const json& body, const json& current) {
  static const std::vector<Field> kFields = {
      {"labels", Kind::kStringMap, json::object()},
      {"maintenance", Kind::kBool, false},
  };
  static const std::set<std::string> kReadOnly = {
      "name",           "ip",     "port",        "state",    "state_message", "heartbeat_time",
      "heartbeat_unix", "status", "gpu_devices", "hostname", "cluster_id"};
  auto out = CheckFields(body, kFields, kReadOnly, "worker");
  if (!out.ok()) return out;
  json merged = current;
  merged["labels"] = (*out)["labels"];
  merged["maintenance"] = (*out)["maintenance"];
  return merged;
}

}  // namespace tandem::cluster::manager
