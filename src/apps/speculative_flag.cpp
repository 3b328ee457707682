#include "apps/speculative_flag.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <set>

#include "core/logging.h"

namespace tandem::apps {
namespace {

Status Bad(const std::string& what) { return InvalidArgument("--speculative-config: " + what); }

// An integer field >= 1, or `fallback` when absent.
Result<int32_t> PositiveInt(const nlohmann::json& j, const char* field, int32_t fallback) {
  if (!j.contains(field) || j[field].is_null()) return fallback;
  const nlohmann::json& v = j[field];
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1024) {
    return Bad(fmt::format("'{}' must be an integer in [1, 1024]; found {}", field, v.dump()));
  }
  return static_cast<int32_t>(v.get<int64_t>());
}

}  // namespace

Result<protocol::SpeculativeConfig> ParseSpeculativeConfig(const std::string& json) {
  protocol::SpeculativeConfig config;
  if (json.empty()) return config;
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Bad(fmt::format("expected a JSON object; found '{}'", json));
  static const std::set<std::string> kKnown = {"method", "num_speculative_tokens",
                                               "prompt_lookup_min", "prompt_lookup_max",
                                               "enforce_eager"};
  for (const auto& [key, unused] : j.items()) {
    if (!kKnown.contains(key)) {
      return Bad(
          fmt::format("unknown field '{}'; tandem reads method, num_speculative_tokens, "
                      "prompt_lookup_min, prompt_lookup_max and enforce_eager",
                      key));
    }
  }
  if (!j.contains("method") || j["method"].is_null()) {
    return Bad("'method' is required: \"ngram\", \"mtp\" or \"qwen3_5_mtp\"");
  }
  if (!j["method"].is_string()) {
    return Bad(
        fmt::format("'method' must be a string (\"ngram\", \"mtp\" or "
                    "\"qwen3_5_mtp\"); found {}",
                    j["method"].dump()));
  }
  config.method = j["method"].get<std::string>();
  const bool mtp = config.method == "mtp" || config.method == "qwen3_5_mtp";
  if (!mtp && config.method != "ngram") {
    return Bad(fmt::format("unknown method '{}'; expected \"ngram\", \"mtp\" or \"qwen3_5_mtp\"",
                           config.method));
  }
  if (!j.contains("num_speculative_tokens") || j["num_speculative_tokens"].is_null()) {
    return Bad("'num_speculative_tokens' is required");  // null too: never silently off
  }
  TANDEM_ASSIGN_OR_RETURN(config.num_speculative_tokens,
                          PositiveInt(j, "num_speculative_tokens", 0));
  if (mtp) {
    // The model's MTP layers draft, applied k times (vLLM's qwen3_5_mtp / mtp); the model is
    // checked at load (it must have them).
    if (j.contains("prompt_lookup_min") || j.contains("prompt_lookup_max")) {
      return Bad(
          fmt::format("prompt_lookup_min/max are ngram fields; method '{}' does not "
                      "take them",
                      config.method));
    }
    if (j.contains("enforce_eager")) {
      TLOG_INFO("--speculative-config enforce_eager accepted; it has no effect on CPU");
    }
    return config;
  }
  TANDEM_ASSIGN_OR_RETURN(config.prompt_lookup_min, PositiveInt(j, "prompt_lookup_min", 0));
  TANDEM_ASSIGN_OR_RETURN(config.prompt_lookup_max, PositiveInt(j, "prompt_lookup_max", 0));
  if (config.prompt_lookup_min == 0 && config.prompt_lookup_max == 0) {
    config.prompt_lookup_min = config.prompt_lookup_max = 5;  // vLLM's defaults
  } else if (config.prompt_lookup_min == 0) {
    config.prompt_lookup_min = config.prompt_lookup_max;
  } else if (config.prompt_lookup_max == 0) {
    config.prompt_lookup_max = config.prompt_lookup_min;
  }
  if (config.prompt_lookup_min > config.prompt_lookup_max) {
    return Bad(fmt::format("prompt_lookup_min {} is larger than prompt_lookup_max {}",
                           config.prompt_lookup_min, config.prompt_lookup_max));
  }
  if (j.contains("enforce_eager")) {
    if (!j["enforce_eager"].is_boolean()) {
      return Bad(
          fmt::format("'enforce_eager' must be a boolean; found {}", j["enforce_eager"].dump()));
    }
    TLOG_INFO("--speculative-config enforce_eager accepted; it has no effect on CPU");
  }
  return config;
}

std::string DescribeSpeculativeConfig(const protocol::SpeculativeConfig& config) {
  if (!config.enabled()) return "off";
  if (config.method != "ngram") {
    return fmt::format("{} k={}", config.method, config.num_speculative_tokens);
  }
  return fmt::format("{} k={} n={}..{}", config.method, config.num_speculative_tokens,
                     config.prompt_lookup_min, config.prompt_lookup_max);
}

}  // namespace tandem::apps
