// ConfigJson: typed reads of one Hugging Face config.json (or a nested object of it, such as a
// multimodal model's text_config), with errors naming the file and the field.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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
    const nlohmann::json& v = j_[key];
    // A value beyond int32 would wrap (10^12 layers read as -727379968): refused as it stands.
    const bool fits = v.is_number_unsigned()
                          ? v.get<uint64_t>() <= uint64_t{std::numeric_limits<int32_t>::max()}
                          : v.is_number_integer() &&
                                v.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                                v.get<int64_t>() <= std::numeric_limits<int32_t>::max();
    if (!fits) {
      return InvalidArgument("'" + path_ + "': field '" + key + "' is " + v.dump() +
                             "; expected an integer in [-2^31, 2^31-1]");
    }
    *out = v.get<int32_t>();
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
  // A float that must be finite and > 0 (rms_norm_eps, rope_theta: NaN, 0 or a negative value
  // there makes every logit NaN, a server that answers ""). Keeps *out when absent.
  Status PositiveFloat(const char* key, float* out) const {
    if (!Has(key)) return Status::Ok();
    const nlohmann::json& v = j_[key];
    const double d = v.is_number() ? v.get<double>() : 0.0;
    if (!v.is_number() || !(d > 0.0) || !std::isfinite(static_cast<float>(d))) {
      return InvalidArgument("'" + path_ + "': field '" + key + "' is " + v.dump() +
                             "; expected a finite number > 0");
    }
    *out = static_cast<float>(d);
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
  // `status` (e.g. a failed Validate()) with this file's path in front; ok stays ok.
  Status InFile(const Status& status) const {
    if (status.ok()) return status;
    return Status(status.code(), "'" + path_ + "': " + status.message());
  }
  const nlohmann::json& json() const { return j_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  nlohmann::json j_;
};

// The fields every decoder config reads alike, HF names into ours: vocab_size, hidden_size,
// num_hidden_layers (num_layers), num_attention_heads (num_heads) and num_key_value_heads
// (num_kv_heads, default num_heads). Errors: ConfigJson::Int's, naming the file and the field.
template <typename Config>
Status ReadDecoderShape(const ConfigJson& cj, Config& c) {
  TANDEM_RETURN_IF_ERROR(cj.Int("vocab_size", &c.vocab_size, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("hidden_size", &c.hidden_size, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("num_hidden_layers", &c.num_layers, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("num_attention_heads", &c.num_heads, std::nullopt));
  return cj.Int("num_key_value_heads", &c.num_kv_heads, c.num_heads);
}

// The Llama and Qwen3 attention fields: head_dim (default hidden_size / num_heads; after
// ReadDecoderShape), rope_theta and rms_norm_eps (finite, > 0), tie_word_embeddings.
template <typename Config>
Status ReadRopeNormAndTying(const ConfigJson& cj, Config& c) {
  TANDEM_RETURN_IF_ERROR(
      cj.Int("head_dim", &c.head_dim, c.num_heads > 0 ? c.hidden_size / c.num_heads : 0));
  TANDEM_RETURN_IF_ERROR(cj.PositiveFloat("rope_theta", &c.rope_theta));
  TANDEM_RETURN_IF_ERROR(cj.PositiveFloat("rms_norm_eps", &c.rms_norm_eps));
  return cj.Bool("tie_word_embeddings", &c.tie_word_embeddings);
}

}  // namespace tandem::model
