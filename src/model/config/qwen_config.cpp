#include "model/config/qwen_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "model/config/config_json.h"
#include "model/config/hf_config.h"
#include "model/config/model_config.h"

namespace tandem::model {
namespace {

constexpr const char* kQwenArchitectures[] = {"Qwen3ForCausalLM", "Qwen3MoeForCausalLM",
                                              "Qwen2MoeForCausalLM"};

// Features tandem does not implement yet: refuse rather than compute a different function.
Status CheckSupported(const ConfigJson& cj) {
  const auto& j = cj.json();
  if (cj.Has("rope_scaling")) {
    return Unimplemented("'" + cj.path() + "' sets rope_scaling " + j["rope_scaling"].dump() +
                         "; not supported yet");
  }
  if (cj.Has("use_sliding_window") && j["use_sliding_window"] == true) {
    return Unimplemented("'" + cj.path() + "' sets use_sliding_window: true; not supported yet");
  }
  if (cj.Has("hidden_act") && j["hidden_act"] != "silu") {
    return Unimplemented("'" + cj.path() + "' sets hidden_act " + j["hidden_act"].dump() +
                         "; only \"silu\" is supported");
  }
  return Status::Ok();
}

Status ReadMoeFields(const ConfigJson& cj, QwenConfig& c) {
  TANDEM_RETURN_IF_ERROR(cj.Int("num_experts", &c.num_experts, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("num_experts_per_tok", &c.num_experts_per_tok, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("moe_intermediate_size", &c.moe_intermediate_size, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("decoder_sparse_step", &c.decoder_sparse_step, 1));
  TANDEM_RETURN_IF_ERROR(cj.IntList("mlp_only_layers", &c.mlp_only_layers));
  c.norm_topk_prob = false;  // HF default for both Qwen3-MoE and Qwen2-MoE
  TANDEM_RETURN_IF_ERROR(cj.Bool("norm_topk_prob", &c.norm_topk_prob));
  if (c.architecture == "Qwen2MoeForCausalLM") {
    TANDEM_RETURN_IF_ERROR(cj.Int("shared_expert_intermediate_size",
                                  &c.shared_expert_intermediate_size, std::nullopt));
  }
  return Status::Ok();
}

}  // namespace

bool QwenConfig::IsSparseLayer(int32_t layer) const {
  if (num_experts <= 0) return false;
  if (std::find(mlp_only_layers.begin(), mlp_only_layers.end(), layer) != mlp_only_layers.end()) {
    return false;
  }
  return (layer + 1) % decoder_sparse_step == 0;
}

Status QwenConfig::Validate() const {
  auto positive = [](const char* name, int64_t v) -> Status {
    if (v <= 0) {
      return InvalidArgument(std::string("model config ") + name + " must be > 0, got " +
                             std::to_string(v));
    }
    return Status::Ok();
  };
  TANDEM_RETURN_IF_ERROR(positive("vocab_size", vocab_size));
  TANDEM_RETURN_IF_ERROR(positive("hidden_size", hidden_size));
  TANDEM_RETURN_IF_ERROR(positive("num_hidden_layers", num_layers));
  TANDEM_RETURN_IF_ERROR(positive("num_attention_heads", num_heads));
  TANDEM_RETURN_IF_ERROR(positive("num_key_value_heads", num_kv_heads));
  TANDEM_RETURN_IF_ERROR(positive("head_dim", head_dim));
  const bool any_dense = num_experts <= 0 || !mlp_only_layers.empty() || decoder_sparse_step > 1;
  if (any_dense) TANDEM_RETURN_IF_ERROR(positive("intermediate_size", intermediate_size));
  if (num_heads % num_kv_heads != 0) {
    return InvalidArgument("model config num_attention_heads " + std::to_string(num_heads) +
                           " is not a multiple of num_key_value_heads " +
                           std::to_string(num_kv_heads));
  }
  if (head_dim % 2 != 0) {
    return InvalidArgument("model config head_dim " + std::to_string(head_dim) +
                           " must be even (RoPE)");
  }
  TANDEM_RETURN_IF_ERROR(CheckNormEpsAndRopeTheta(rms_norm_eps, rope_theta));
  if (num_experts > 0) {
    if (num_experts_per_tok <= 0 || num_experts_per_tok > num_experts) {
      return InvalidArgument("model config num_experts_per_tok " +
                             std::to_string(num_experts_per_tok) +
                             " must be in [1, num_experts=" + std::to_string(num_experts) + "]");
    }
    TANDEM_RETURN_IF_ERROR(positive("moe_intermediate_size", moe_intermediate_size));
    TANDEM_RETURN_IF_ERROR(positive("decoder_sparse_step", decoder_sparse_step));
    for (int32_t l : mlp_only_layers) {
      if (l < 0 || l >= num_layers) {
        return InvalidArgument("model config mlp_only_layers lists layer " + std::to_string(l) +
                               "; expected layers in [0, " + std::to_string(num_layers) + ")");
      }
    }
  }
  return Status::Ok();
}

ModelInfo ModelInfoOf(const QwenConfig& c) { return ModelInfoFromConfig(c); }

bool IsQwenArchitecture(const std::string& architecture) {
  return std::find(std::begin(kQwenArchitectures), std::end(kQwenArchitectures), architecture) !=
         std::end(kQwenArchitectures);
}

Result<QwenConfig> QwenConfigFromHf(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  TANDEM_ASSIGN_OR_RETURN(nlohmann::json j, ReadHfConfigJson(dir));
  const ConfigJson cj(path, std::move(j));
  QwenConfig c;
  const auto& archs = cj.json().value("architectures", nlohmann::json::array());
  c.architecture = archs.is_array() && !archs.empty() && archs[0].is_string()
                       ? archs[0].get<std::string>()
                       : std::string("?");
  if (!IsQwenArchitecture(c.architecture)) {
    return InvalidArgument("'" + path + "' names architecture '" + c.architecture +
                           "'; supported here: Qwen3ForCausalLM, Qwen3MoeForCausalLM, "
                           "Qwen2MoeForCausalLM");
  }
  TANDEM_RETURN_IF_ERROR(CheckSupported(cj));
  const bool moe = c.architecture != "Qwen3ForCausalLM";
  TANDEM_RETURN_IF_ERROR(ReadDecoderShape(cj, c));
  TANDEM_RETURN_IF_ERROR(cj.Int("intermediate_size", &c.intermediate_size,
                                moe ? std::optional<int32_t>(0) : std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("max_position_embeddings", &c.max_position_embeddings, 32768));
  TANDEM_RETURN_IF_ERROR(ReadRopeNormAndTying(cj, c));
  if (c.architecture == "Qwen2MoeForCausalLM") {
    c.qkv_bias = true;  // HF Qwen2MoeConfig.qkv_bias defaults to true; o_proj has no bias
    TANDEM_RETURN_IF_ERROR(cj.Bool("qkv_bias", &c.qkv_bias));
  } else {
    c.qk_norm = true;
    bool attention_bias = false;  // Qwen3: one flag for q, k, v and o
    TANDEM_RETURN_IF_ERROR(cj.Bool("attention_bias", &attention_bias));
    c.qkv_bias = c.o_bias = attention_bias;
  }
  if (moe) TANDEM_RETURN_IF_ERROR(ReadMoeFields(cj, c));
  TANDEM_RETURN_IF_ERROR(cj.InFile(c.Validate()));
  return c;
}

}  // namespace tandem::model
