#include "model/config/qwen35_config.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/config/config_json.h"
#include "model/config/hf_config.h"
#include "model/config/model_config.h"

namespace tandem::model {

int32_t Qwen35Config::num_full_attention_layers() const {
  int32_t n = 0;
  for (bool full : full_attention) n += full;
  return n;
}

Status Qwen35Config::SetLayerTypesByInterval(int32_t interval) {
  if (interval < 1) {
    return InvalidArgument("Qwen3.5 config: full_attention_interval is " +
                           std::to_string(interval) +
                           "; expected >= 1 (every N-th layer is "
                           "full attention)");
  }
  full_attention.clear();
  for (int32_t l = 0; l < num_layers; ++l) full_attention.push_back((l + 1) % interval == 0);
  return Status::Ok();
}

Status Qwen35Config::Validate() const {
  auto positive = [](const char* field, int64_t v) -> Status {
    if (v > 0) return Status::Ok();
    return InvalidArgument(std::string("Qwen3.5 config: ") + field + " is " + std::to_string(v) +
                           "; expected > 0");
  };
  for (const auto& [field, v] : std::vector<std::pair<const char*, int64_t>>{
           {"vocab_size", vocab_size},
           {"hidden_size", hidden_size},
           {"num_hidden_layers", num_layers},
           {"num_attention_heads", num_heads},
           {"num_key_value_heads", num_kv_heads},
           {"head_dim", head_dim},
           {"linear_num_key_heads", linear_num_key_heads},
           {"linear_num_value_heads", linear_num_value_heads},
           {"linear_key_head_dim", linear_key_head_dim},
           {"linear_value_head_dim", linear_value_head_dim},
           {"linear_conv_kernel_dim", linear_conv_kernel_dim},
           {"num_experts", num_experts},
           {"num_experts_per_tok", num_experts_per_tok},
           {"moe_intermediate_size", moe_intermediate_size}}) {
    TANDEM_RETURN_IF_ERROR(positive(field, v));
  }
  if (num_heads % num_kv_heads != 0 || linear_num_value_heads % linear_num_key_heads != 0) {
    return InvalidArgument("Qwen3.5 config: heads must divide: " + std::to_string(num_heads) +
                           " / " + std::to_string(num_kv_heads) + " attention, " +
                           std::to_string(linear_num_value_heads) + " / " +
                           std::to_string(linear_num_key_heads) + " linear");
  }
  if (rotary_dim() <= 0 || rotary_dim() % 2 != 0 || rotary_dim() > head_dim) {
    return InvalidArgument("Qwen3.5 config: head_dim " + std::to_string(head_dim) +
                           " x partial_rotary_factor gives rotary dim " +
                           std::to_string(rotary_dim()) + "; expected an even number in (0, " +
                           std::to_string(head_dim) + "]");
  }
  if (num_experts_per_tok > num_experts) {
    return InvalidArgument("Qwen3.5 config: num_experts_per_tok " +
                           std::to_string(num_experts_per_tok) + " > num_experts " +
                           std::to_string(num_experts));
  }
  TANDEM_RETURN_IF_ERROR(CheckNormEpsAndRopeTheta(rms_norm_eps, rope_theta));
  if (static_cast<int32_t>(full_attention.size()) != num_layers) {
    return InvalidArgument("Qwen3.5 config: " + std::to_string(full_attention.size()) +
                           " layer types for " + std::to_string(num_layers) + " layers");
  }
  return Status::Ok();
}

ModelInfo ModelInfoOf(const Qwen35Config& c) { return ModelInfoFromConfig(c); }

bool IsQwen35Architecture(const std::string& architecture) {
  return architecture == "Qwen3_5MoeForConditionalGeneration" ||
         architecture == "Qwen3_5MoeForCausalLM";
}

Result<Qwen35Config> Qwen35ConfigFromHf(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  TANDEM_ASSIGN_OR_RETURN(const nlohmann::json top, ReadHfConfigJson(dir));
  Qwen35Config c;
  const auto& archs = top.value("architectures", nlohmann::json::array());
  c.architecture = archs.is_array() && !archs.empty() && archs[0].is_string()
                       ? archs[0].get<std::string>()
                       : std::string("?");
  if (!IsQwen35Architecture(c.architecture)) {
    return InvalidArgument("'" + path + "' names architecture '" + c.architecture +
                           "'; expected Qwen3_5MoeForConditionalGeneration or "
                           "Qwen3_5MoeForCausalLM");
  }
  // The multimodal checkpoint nests the text model's fields; tie_word_embeddings may sit at
  // either level (the top level wins, as HF's).
  const bool nested = top.contains("text_config") && top["text_config"].is_object();
  const ConfigJson cj(nested ? path + " text_config" : path, nested ? top["text_config"] : top);
  const auto& j = cj.json();
  if (cj.Has("hidden_act") && j["hidden_act"] != "silu") {
    return Unimplemented("'" + cj.path() + "' sets hidden_act " + j["hidden_act"].dump() +
                         "; only \"silu\" is supported");
  }
  if (cj.Has("mlp_only_layers") && !j["mlp_only_layers"].empty()) {
    return Unimplemented("'" + cj.path() + "' sets mlp_only_layers; not supported yet");
  }
  TANDEM_RETURN_IF_ERROR(ReadDecoderShape(cj, c));
  TANDEM_RETURN_IF_ERROR(cj.Int("head_dim", &c.head_dim, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("linear_num_key_heads", &c.linear_num_key_heads, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("linear_num_value_heads", &c.linear_num_value_heads, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("linear_key_head_dim", &c.linear_key_head_dim, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("linear_value_head_dim", &c.linear_value_head_dim, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("linear_conv_kernel_dim", &c.linear_conv_kernel_dim, 4));
  TANDEM_RETURN_IF_ERROR(cj.Int("num_experts", &c.num_experts, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("num_experts_per_tok", &c.num_experts_per_tok, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("moe_intermediate_size", &c.moe_intermediate_size, std::nullopt));
  TANDEM_RETURN_IF_ERROR(
      cj.Int("shared_expert_intermediate_size", &c.shared_expert_intermediate_size, 0));
  TANDEM_RETURN_IF_ERROR(cj.Int("max_position_embeddings", &c.max_position_embeddings, 262144));
  TANDEM_RETURN_IF_ERROR(cj.Int("mtp_num_hidden_layers", &c.mtp_num_hidden_layers, 0));
  TANDEM_RETURN_IF_ERROR(cj.PositiveFloat("rms_norm_eps", &c.rms_norm_eps));
  TANDEM_RETURN_IF_ERROR(cj.Bool("tie_word_embeddings", &c.tie_word_embeddings));
  if (top.contains("tie_word_embeddings") && top["tie_word_embeddings"].is_boolean()) {
    c.tie_word_embeddings = top["tie_word_embeddings"].get<bool>();
  }
  // RoPE: rope_parameters (newer configs) or flat fields. Text-only positions make the
  // interleaved M-RoPE sections plain 1-D RoPE (QWEN35.md §2.3), so mrope_section is not read.
  const ConfigJson rope(cj.path() + " rope_parameters",
                        cj.Has("rope_parameters") ? j["rope_parameters"] : j);
  TANDEM_RETURN_IF_ERROR(rope.PositiveFloat("rope_theta", &c.rope_theta));
  TANDEM_RETURN_IF_ERROR(rope.Float("partial_rotary_factor", &c.partial_rotary_factor));
  if (rope.Has("rope_type") && rope.json()["rope_type"] != "default") {
    return Unimplemented("'" + rope.path() + "' sets rope_type " + rope.json()["rope_type"].dump() +
                         "; only \"default\" is supported");
  }
  // Layer types: explicit, else every full_attention_interval-th layer is full attention.
  if (cj.Has("layer_types")) {
    for (const auto& type : j["layer_types"]) {
      if (type != "full_attention" && type != "linear_attention") {
        return InvalidArgument("'" + cj.path() + "': layer_types holds " + type.dump() +
                               "; expected \"full_attention\" or \"linear_attention\"");
      }
      c.full_attention.push_back(type == "full_attention");
    }
  } else {
    int32_t interval = 4;
    TANDEM_RETURN_IF_ERROR(cj.Int("full_attention_interval", &interval, 4));
    TANDEM_RETURN_IF_ERROR(cj.InFile(c.SetLayerTypesByInterval(interval)));
  }
  TANDEM_RETURN_IF_ERROR(cj.InFile(c.Validate()));
  return c;
}

}  // namespace tandem::model
