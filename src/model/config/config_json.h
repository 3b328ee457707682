// ConfigJson: typed reads of one Hugging Face config.json (or a nested object of it, such as a
// multimodal model's text_config), with errors naming the file and the field.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace tandem::model {

// Typed reads of one config.json with messages naming the file and the field.
class ConfigJson {
 public:
  ConfigJson(std::string path, nlohmann::json j) : path_(std::move(path)), j_(std::move(j)) {}

  bool Has(const char* key) const { return j_.contains(key) && !j_[key].is_null(); }

  Status Int(const char* key, int32_t* out, std::optional<int32_t> fallback) const {
    if (!Has(key)) {
      if (fallback) {
        *out = *fallback;
        return Status::Ok();
      }
      return InvalidArgument("'" + path_ + "' lacks integer field '" + key + "'");
    }
    if (!j_[key].is_number_integer()) {
      return InvalidArgument("'" + path_ + "': field '" + key + "' is " + j_[key].dump() +
                             "; expected an integer");
    }
    *out = j_[key].get<int32_t>();
    return Status::Ok();
  }
  Status Float(const char* key, float* out) const {  // keeps *out when absent
    if (!Has(key)) return Status::Ok();
    if (!j_[key].is_number()) {
      return InvalidArgument("'" + path_ + "': field '" + key + "' is " + j_[key].dump() +
                             "; expected a number");
    }
    *out = j_[key].get<float>();
    return Status::Ok();
  }
  Status Bool(const char* key, bool* out) const {  // keeps *out when absent
    if (!Has(key)) return Status::Ok();
    if (!j_[key].is_boolean()) {
      return InvalidArgument("'" + path_ + "': field '" + key + "' is " + j_[key].dump() +
                             "; expected true or false");
    }
    *out = j_[key].get<bool>();
    return Status::Ok();
  }
  Status IntList(const char* key, std::vector<int32_t>* out) const {  // keeps *out when absent
    if (!Has(key)) return Status::Ok();
    const auto& v = j_[key];
    const bool ok = v.is_array() && std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) {
                      return e.is_number_integer();
                    });
    if (!ok) {
      return InvalidArgument("'" + path_ + "': field '" + key + "' is " + v.dump() +
                             "; expected a list of integers");
    }
    *out = v.get<std::vector<int32_t>>();
    return Status::Ok();
  }
  const nlohmann::json& json() const { return j_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  nlohmann::json j_;
};

}  // namespace tandem::model
