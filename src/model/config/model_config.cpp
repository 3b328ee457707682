#include "model/config/model_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "model/config/config_json.h"
#include "model/config/hf_config.h"

namespace tandem::model {

Status LlamaConfig::Validate() const {
  auto positive = [](const char* name, int64_t v) -> Status {
    if (v <= 0)
      return InvalidArgument(std::string("model config ") + name + " must be > 0, got " +
                             std::to_string(v));
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
  if (head_dim % 2 != 0)
    return InvalidArgument("model config head_dim " + std::to_string(head_dim) +
                           " must be even (RoPE)");
  TANDEM_RETURN_IF_ERROR(CheckNormEpsAndRopeTheta(rms_norm_eps, rope_theta));
  if (num_experts > 0 && (num_experts_per_tok <= 0 || num_experts_per_tok > num_experts)) {
    return InvalidArgument("model config num_experts_per_tok " +
                           std::to_string(num_experts_per_tok) +
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

Result<float> GgufPositiveFloatOr(const GgufReader& gguf, const std::string& key, const char* field,
                                  double fallback) {
  TANDEM_ASSIGN_OR_RETURN(const double v, gguf.GetFloatOr(key, fallback));
  if (!(v > 0.0) || !std::isfinite(static_cast<float>(v))) {
    return InvalidArgument("GGUF file '" + gguf.path() + "': " + key + " (" + field + ") is " +
                           fmt::format("{}", v) + "; expected a finite number > 0");
  }
  return static_cast<float>(v);
}

Status InGgufFile(const GgufReader& gguf, const Status& status) {
  if (status.ok()) return status;
  return Status(status.code(), "GGUF file '" + gguf.path() + "': " + status.message());
}

Status CheckGgufBlockCount(const GgufReader& gguf, const std::string& key, int64_t block_count,
                           int64_t may_lack_last) {
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
  if (block_count != blocks && block_count - may_lack_last != blocks) {
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
  const int64_t rows = embd->ne[1];
  // llama.cpp's rule: one token per embedding row. Fewer tokens would leave ids the model
  // samples with no text (a server answering ""); none at all, no tokenizer.
  const auto tokens = gguf.metadata().find("tokenizer.ggml.tokens");
  if (tokens != gguf.metadata().end() &&
      static_cast<int64_t>(tokens->second.array.size()) != rows) {
    return InvalidArgument("GGUF file '" + gguf.path() + "': tokenizer.ggml.tokens holds " +
                           std::to_string(tokens->second.array.size()) +
                           " tokens but token_embd.weight has " + std::to_string(rows) +
                           " rows; expected one token per row");
  }
  if (rows > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("GGUF file '" + gguf.path() + "': token_embd.weight has " +
                           std::to_string(rows) + " rows; at most 2^31-1 are supported");
  }
  return static_cast<int32_t>(rows);
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
  TANDEM_ASSIGN_OR_RETURN(c.rope_theta,
                          GgufPositiveFloatOr(gguf, "llama.rope.freq_base", "rope_theta", 10000.0));
  TANDEM_ASSIGN_OR_RETURN(
      c.rms_norm_eps,
      GgufPositiveFloatOr(gguf, "llama.attention.layer_norm_rms_epsilon", "rms_norm_eps", 1e-5));
  TANDEM_ASSIGN_OR_RETURN(int64_t ctx, gguf.GetIntOr("llama.context_length", 2048));
  TANDEM_ASSIGN_OR_RETURN(int64_t experts, gguf.GetIntOr("llama.expert_count", 0));
  TANDEM_ASSIGN_OR_RETURN(int64_t experts_used, gguf.GetIntOr("llama.expert_used_count", 0));
  TANDEM_ASSIGN_OR_RETURN(int64_t head_dim,
                          gguf.GetIntOr("llama.attention.key_length", heads > 0 ? dim / heads : 0));
  c.hidden_size = static_cast<int32_t>(dim);
  c.num_layers = static_cast<int32_t>(layers);
  c.num_heads = static_cast<int32_t>(heads);
  c.num_kv_heads = static_cast<int32_t>(kv_heads);
  c.head_dim = static_cast<int32_t>(head_dim);
  c.intermediate_size = static_cast<int32_t>(ff);
  c.max_position_embeddings = static_cast<int32_t>(ctx);
  c.num_experts = static_cast<int32_t>(experts);
  c.num_experts_per_tok = static_cast<int32_t>(experts_used);
  TANDEM_ASSIGN_OR_RETURN(c.vocab_size, GgufVocabSize(gguf));
  c.tie_word_embeddings = !gguf.HasTensor("output.weight");
  TANDEM_RETURN_IF_ERROR(InGgufFile(gguf, c.Validate()));
  return c;
}

Result<LlamaConfig> LlamaConfigFromHf(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  TANDEM_ASSIGN_OR_RETURN(nlohmann::json j, ReadHfConfigJson(dir));
  const ConfigJson cj(path, std::move(j));
  std::string arch = "?";
  const auto& archs = cj.json().value("architectures", nlohmann::json::array());
  if (archs.is_array() && !archs.empty() && archs[0].is_string()) {
    arch = archs[0].get<std::string>();
  }
  if (arch != "LlamaForCausalLM") {
    return InvalidArgument("'" + path + "' names architecture '" + arch +
                           "'; supported here: LlamaForCausalLM");
  }
  LlamaConfig c;
  c.architecture = arch;
  TANDEM_RETURN_IF_ERROR(ReadDecoderShape(cj, c));
  TANDEM_RETURN_IF_ERROR(cj.Int("intermediate_size", &c.intermediate_size, std::nullopt));
  TANDEM_RETURN_IF_ERROR(cj.Int("max_position_embeddings", &c.max_position_embeddings, 2048));
  TANDEM_RETURN_IF_ERROR(ReadRopeNormAndTying(cj, c));
  if (cj.Has("rope_scaling")) {
    return Unimplemented("'" + path + "' sets rope_scaling " + cj.json()["rope_scaling"].dump() +
                         "; not supported yet");
  }
  TANDEM_RETURN_IF_ERROR(cj.InFile(c.Validate()));
  return c;
}

}  // namespace tandem::model
