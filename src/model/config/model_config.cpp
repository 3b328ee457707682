#include "model/config/model_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace tandem::model {

Status LlamaConfig::Validate() const {
  auto positive = [](const char* name, int64_t v) -> Status {
    if (v <= 0) return InvalidArgument(std::string("model config ") + name + " must be > 0, got " + std::to_string(v));
    return Status::Ok();
  };
  TANDEM_RETURN_IF_ERROR(positive("vocab_size", vocab_size));
  TANDEM_RETURN_IF_ERROR(positive("hidden_size", hidden_size));
  TANDEM_RETURN_IF_ERROR(positive("num_layers", num_layers));
  TANDEM_RETURN_IF_ERROR(positive("num_heads", num_heads));
  TANDEM_RETURN_IF_ERROR(positive("num_kv_heads", num_kv_heads));
  TANDEM_RETURN_IF_ERROR(positive("head_dim", head_dim));
  TANDEM_RETURN_IF_ERROR(positive("intermediate_size", intermediate_size));
  if (num_heads % num_kv_heads != 0) {
    return InvalidArgument("model config num_heads " + std::to_string(num_heads) +
                           " is not a multiple of num_kv_heads " + std::to_string(num_kv_heads));
  }
  if (head_dim % 2 != 0) return InvalidArgument("model config head_dim " + std::to_string(head_dim) + " must be even (RoPE)");
  TANDEM_RETURN_IF_ERROR(CheckNormEpsAndRopeTheta(rms_norm_eps, rope_theta));
  if (num_experts > 0 && (num_experts_per_tok <= 0 || num_experts_per_tok > num_experts)) {
    return InvalidArgument("model config num_experts_per_tok " + std::to_string(num_experts_per_tok) +
                           " must be in [1, num_experts=" + std::to_string(num_experts) + "]");
  }
  return Status::Ok();
}

Status CheckNormEpsAndRopeTheta(float rms_norm_eps, float rope_theta) {
  // NaN, 0 or a negative value here gives a server that answers NaN logits to everything.
  if (!(std::isfinite(rms_norm_eps) && rms_norm_eps > 0.0f)) {
    return InvalidArgument("model config rms_norm_eps must be a finite number > 0, got " +
                           std::to_string(rms_norm_eps));
  }
  if (!(std::isfinite(rope_theta) && rope_theta > 0.0f)) {
    return InvalidArgument("model config rope_theta must be a finite number > 0, got " +
                           std::to_string(rope_theta));
  }
  return Status::Ok();
}

Status CheckGgufBlockCount(const GgufReader& gguf, const std::string& key, int64_t block_count) {
  int64_t blocks = 0;  // 1 + the largest N of a "blk.N." tensor
  for (const GgufTensorInfo& t : gguf.tensors()) {
    if (t.name.rfind("blk.", 0) != 0) continue;
    const size_t dot = t.name.find('.', 4);
    if (dot == std::string::npos) continue;
    try {
      blocks = std::max<int64_t>(blocks, std::stoll(t.name.substr(4, dot - 4)) + 1);
    } catch (const std::exception&) {
    }
  }
  if (block_count != blocks) {
    return InvalidArgument("GGUF file '" + gguf.path() + "' has " + key + " = " +
                           std::to_string(block_count) + " but tensors for " +
                           std::to_string(blocks) + " blocks (blk.0 … blk." +
                           std::to_string(blocks - 1) + ")");
  }
  return Status::Ok();
}

Result<int32_t> GgufVocabSize(const GgufReader& gguf) {
  const GgufTensorInfo* embd = gguf.FindTensor("token_embd.weight");
  if (embd == nullptr || embd->ne.size() != 2) {
    return InvalidArgument("GGUF file '" + gguf.path() + "' has no 2-d tensor 'token_embd.weight'");
  }
  return static_cast<int32_t>(embd->ne[1]);
}

Result<LlamaConfig> LlamaConfigFromGguf(const GgufReader& gguf) {
  LlamaConfig c;
  TANDEM_ASSIGN_OR_RETURN(c.architecture, gguf.GetString("general.architecture"));
  if (c.architecture != "llama") {
    return InvalidArgument("GGUF file '" + gguf.path() + "' has general.architecture '" +
                           c.architecture + "'; supported: llama, qwen3, qwen3moe, qwen35moe");
  }
  TANDEM_ASSIGN_OR_RETURN(int64_t dim, gguf.GetInt("llama.embedding_length"));
  TANDEM_ASSIGN_OR_RETURN(int64_t layers, gguf.GetInt("llama.block_count"));
  TANDEM_RETURN_IF_ERROR(CheckGgufBlockCount(gguf, "llama.block_count", layers));
  TANDEM_ASSIGN_OR_RETURN(int64_t heads, gguf.GetInt("llama.attention.head_count"));
  TANDEM_ASSIGN_OR_RETURN(int64_t kv_heads, gguf.GetIntOr("llama.attention.head_count_kv", heads));
  TANDEM_ASSIGN_OR_RETURN(int64_t ff, gguf.GetInt("llama.feed_forward_length"));
  TANDEM_ASSIGN_OR_RETURN(double theta, gguf.GetFloatOr("llama.rope.freq_base", 10000.0));
  TANDEM_ASSIGN_OR_RETURN(double eps, gguf.GetFloatOr("llama.attention.layer_norm_rms_epsilon", 1e-5));
  TANDEM_ASSIGN_OR_RETURN(int64_t ctx, gguf.GetIntOr("llama.context_length", 2048));
  TANDEM_ASSIGN_OR_RETURN(int64_t experts, gguf.GetIntOr("llama.expert_count", 0));
  TANDEM_ASSIGN_OR_RETURN(int64_t experts_used, gguf.GetIntOr("llama.expert_used_count", 0));
  TANDEM_ASSIGN_OR_RETURN(int64_t head_dim, gguf.GetIntOr("llama.attention.key_length", heads > 0 ? dim / heads : 0));
  c.hidden_size = static_cast<int32_t>(dim);
  c.num_layers = static_cast<int32_t>(layers);
  c.num_heads = static_cast<int32_t>(heads);
  c.num_kv_heads = static_cast<int32_t>(kv_heads);
  c.head_dim = static_cast<int32_t>(head_dim);
  c.intermediate_size = static_cast<int32_t>(ff);
  c.rope_theta = static_cast<float>(theta);
  c.rms_norm_eps = static_cast<float>(eps);
  c.max_position_embeddings = static_cast<int32_t>(ctx);
  c.num_experts = static_cast<int32_t>(experts);
  c.num_experts_per_tok = static_cast<int32_t>(experts_used);
  TANDEM_ASSIGN_OR_RETURN(c.vocab_size, GgufVocabSize(gguf));
  c.tie_word_embeddings = !gguf.HasTensor("output.weight");
  TANDEM_RETURN_IF_ERROR(c.Validate());
  return c;
}

Result<LlamaConfig> LlamaConfigFromHf(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  std::ifstream in(path);
  if (!in) return NotFound("model folder '" + dir + "' has no config.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return DataLoss("'" + path + "' is not a JSON object");
  std::string arch = "?";
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string()) {
    arch = j["architectures"][0].get<std::string>();
  }
  if (arch != "LlamaForCausalLM") {
    return InvalidArgument("'" + path + "' names architecture '" + arch +
                           "'; supported here: LlamaForCausalLM");
  }
  LlamaConfig c;
  c.architecture = arch;
  auto get_int = [&](const char* key, int32_t* out, std::optional<int32_t> fallback) -> Status {
    if (!j.contains(key) || j[key].is_null()) {
      if (fallback) { *out = *fallback; return Status::Ok(); }
      return InvalidArgument("'" + path + "' lacks integer field '" + key + "'");
    }
    if (!j[key].is_number_integer()) return InvalidArgument("'" + path + "': field '" + key + "' is not an integer");
    *out = j[key].get<int32_t>();
    return Status::Ok();
  };
  TANDEM_RETURN_IF_ERROR(get_int("vocab_size", &c.vocab_size, std::nullopt));
  TANDEM_RETURN_IF_ERROR(get_int("hidden_size", &c.hidden_size, std::nullopt));
  TANDEM_RETURN_IF_ERROR(get_int("num_hidden_layers", &c.num_layers, std::nullopt));
  TANDEM_RETURN_IF_ERROR(get_int("num_attention_heads", &c.num_heads, std::nullopt));
  TANDEM_RETURN_IF_ERROR(get_int("num_key_value_heads", &c.num_kv_heads, c.num_heads));
  TANDEM_RETURN_IF_ERROR(get_int("intermediate_size", &c.intermediate_size, std::nullopt));
  TANDEM_RETURN_IF_ERROR(get_int("max_position_embeddings", &c.max_position_embeddings, 2048));
  TANDEM_RETURN_IF_ERROR(get_int("head_dim", &c.head_dim, c.num_heads > 0 ? c.hidden_size / c.num_heads : 0));
  if (j.contains("rope_theta") && j["rope_theta"].is_number()) c.rope_theta = j["rope_theta"].get<float>();
  if (j.contains("rms_norm_eps") && j["rms_norm_eps"].is_number()) c.rms_norm_eps = j["rms_norm_eps"].get<float>();
  if (j.contains("tie_word_embeddings") && j["tie_word_embeddings"].is_boolean()) {
    c.tie_word_embeddings = j["tie_word_embeddings"].get<bool>();
  }
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
    return Unimplemented("'" + path + "' sets rope_scaling " + j["rope_scaling"].dump() + "; not supported yet");
  }
  TANDEM_RETURN_IF_ERROR(c.Validate());
  return c;
}

}  // namespace tandem::model
