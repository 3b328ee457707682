#include "model/loader/qwen3_gguf_source.h"

#include <cstring>

#include "model/config/model_config.h"

namespace tandem::model {

Result<QwenConfig> QwenConfigFromGguf(const GgufReader& gguf) {
  QwenConfig c;
  TANDEM_ASSIGN_OR_RETURN(const std::string arch, gguf.GetString("general.architecture"));
  if (arch != "qwen3" && arch != "qwen3moe") {
    return InvalidArgument("GGUF file '" + gguf.path() + "' has general.architecture '" + arch +
                           "'; expected qwen3 or qwen3moe");
  }
  c.architecture = arch == "qwen3" ? "Qwen3ForCausalLM" : "Qwen3MoeForCausalLM";
  auto key = [&](const char* k) { return arch + "." + k; };
  TANDEM_ASSIGN_OR_RETURN(int64_t dim, gguf.GetInt(key("embedding_length")));
  TANDEM_ASSIGN_OR_RETURN(int64_t layers, gguf.GetInt(key("block_count")));
  TANDEM_RETURN_IF_ERROR(CheckGgufBlockCount(gguf, key("block_count"), layers));
  TANDEM_ASSIGN_OR_RETURN(int64_t heads, gguf.GetInt(key("attention.head_count")));
  TANDEM_ASSIGN_OR_RETURN(int64_t kv_heads, gguf.GetIntOr(key("attention.head_count_kv"), heads));
  TANDEM_ASSIGN_OR_RETURN(int64_t ff, gguf.GetIntOr(key("feed_forward_length"), 0));
  TANDEM_ASSIGN_OR_RETURN(
      c.rope_theta, GgufPositiveFloatOr(gguf, key("rope.freq_base"), "rope_theta", 1000000.0));
  TANDEM_ASSIGN_OR_RETURN(
      c.rms_norm_eps,
      GgufPositiveFloatOr(gguf, key("attention.layer_norm_rms_epsilon"), "rms_norm_eps", 1e-6));
  TANDEM_ASSIGN_OR_RETURN(int64_t ctx, gguf.GetIntOr(key("context_length"), 40960));
  TANDEM_ASSIGN_OR_RETURN(int64_t head_dim,
                          gguf.GetIntOr(key("attention.key_length"), heads > 0 ? dim / heads : 0));
  c.hidden_size = static_cast<int32_t>(dim);
  c.num_layers = static_cast<int32_t>(layers);
  c.num_heads = static_cast<int32_t>(heads);
  c.num_kv_heads = static_cast<int32_t>(kv_heads);
  c.head_dim = static_cast<int32_t>(head_dim);
  c.intermediate_size = static_cast<int32_t>(ff);
  c.max_position_embeddings = static_cast<int32_t>(ctx);
  c.qk_norm = true;
  if (arch == "qwen3moe") {
    TANDEM_ASSIGN_OR_RETURN(int64_t experts, gguf.GetInt(key("expert_count")));
    TANDEM_ASSIGN_OR_RETURN(int64_t used, gguf.GetInt(key("expert_used_count")));
    TANDEM_ASSIGN_OR_RETURN(int64_t expert_ff, gguf.GetInt(key("expert_feed_forward_length")));
    c.num_experts = static_cast<int32_t>(experts);
    c.num_experts_per_tok = static_cast<int32_t>(used);
    c.moe_intermediate_size = static_cast<int32_t>(expert_ff);
    c.norm_topk_prob = true;  // llama.cpp's qwen3moe graph always renormalises the top-k
  }
  TANDEM_ASSIGN_OR_RETURN(c.vocab_size, GgufVocabSize(gguf));
  c.tie_word_embeddings = !gguf.HasTensor("output.weight");
  TANDEM_RETURN_IF_ERROR(InGgufFile(gguf, c.Validate()));
  return c;
}

Qwen3GgufSource::Qwen3GgufSource(const GgufReader& gguf, const QwenConfig& c) : gguf_(gguf) {
  Map("model.embed_tokens.weight", "token_embd.weight");
  if (gguf.HasTensor("output.weight")) Map("lm_head.weight", "output.weight");
  Map("model.norm.weight", "output_norm.weight");
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const std::string hf = "model.layers." + std::to_string(l) + ".";
    const std::string g = "blk." + std::to_string(l) + ".";
    Map(hf + "input_layernorm.weight", g + "attn_norm.weight");
    Map(hf + "post_attention_layernorm.weight", g + "ffn_norm.weight");
    for (const char* p : {"q", "k", "v"}) {
      Map(hf + "self_attn." + p + "_proj.weight", g + "attn_" + p + ".weight");
    }
    Map(hf + "self_attn.o_proj.weight", g + "attn_output.weight");
    Map(hf + "self_attn.q_norm.weight", g + "attn_q_norm.weight");
    Map(hf + "self_attn.k_norm.weight", g + "attn_k_norm.weight");
    if (c.IsSparseLayer(l)) {
      Map(hf + "mlp.gate.weight", g + "ffn_gate_inp.weight");
      for (int64_t e = 0; e < c.num_experts; ++e) {
        const std::string x = hf + "mlp.experts." + std::to_string(e) + ".";
        Map(x + "gate_proj.weight", g + "ffn_gate_exps.weight", e);
        Map(x + "up_proj.weight", g + "ffn_up_exps.weight", e);
        Map(x + "down_proj.weight", g + "ffn_down_exps.weight", e);
      }
    } else {
      for (const char* p : {"gate", "up", "down"}) {
        Map(hf + "mlp." + p + "_proj.weight", g + "ffn_" + p + ".weight");
      }
    }
  }
}

void Qwen3GgufSource::Map(const std::string& hf, const std::string& gguf_name, int64_t expert) {
  if (gguf_.HasTensor(gguf_name)) entries_[hf] = Entry{gguf_name, expert};
}

Result<tensor::Shape> Qwen3GgufSource::TensorShape(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return InvalidArgument("tensor '" + name + "' not in GGUF file '" + gguf_.path() + "'");
  }
  TANDEM_ASSIGN_OR_RETURN(tensor::Shape shape, gguf_.TensorShape(it->second.gguf_name));
  if (it->second.expert < 0) return shape;
  if (shape.size() != 3 || it->second.expert >= shape[0]) {
    return InvalidArgument("GGUF tensor '" + it->second.gguf_name + "' in '" + gguf_.path() +
                           "' has shape " + tensor::ShapeToString(shape) +
                           "; expected [experts, rows, columns] with expert " +
                           std::to_string(it->second.expert));
  }
  return tensor::Shape(shape.begin() + 1, shape.end());
}

Result<tensor::Tensor> Qwen3GgufSource::ReadStored(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return InvalidArgument("tensor '" + name + "' not in GGUF file '" + gguf_.path() + "'");
  }
  const Entry& entry = it->second;
  if (entry.expert < 0) return gguf_.ReadStored(entry.gguf_name);
  TANDEM_ASSIGN_OR_RETURN(tensor::Shape shape, TensorShape(name));  // checks the expert index
  std::shared_ptr<const tensor::Tensor> stacked;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    if (cached_name_ != entry.gguf_name) {
      TANDEM_ASSIGN_OR_RETURN(tensor::Tensor t, gguf_.ReadStored(entry.gguf_name));
      cached_ = std::make_shared<const tensor::Tensor>(std::move(t));
      cached_name_ = entry.gguf_name;
    }
    stacked = cached_;
  }
  tensor::Tensor out(shape, stacked->dtype());
  const size_t bytes = out.size_bytes();
  std::memcpy(out.mutable_raw(),
              static_cast<const unsigned char*>(stacked->raw()) + entry.expert * bytes, bytes);
  return out;
}

Result<tensor::Tensor> Qwen3GgufSource::ReadF32(const std::string& name) const {
  TANDEM_ASSIGN_OR_RETURN(tensor::Tensor t, ReadStored(name));
  if (t.dtype() == tensor::DType::kF32) return t;
  return t.ToF32();
}

}  // namespace tandem::model
