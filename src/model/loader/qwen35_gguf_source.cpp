#include "model/loader/qwen35_gguf_source.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "model/config/model_config.h"

namespace tandem::model {
namespace {

// GGUF tensor `name` has (row-major) shape `want`: checked before a rearrangement indexes it.
Status CheckShape(const GgufReader& gguf, const std::string& name, const tensor::Shape& want) {
  TANDEM_ASSIGN_OR_RETURN(const tensor::Shape got, gguf.TensorShape(name));
  if (got != want) {
    return InvalidArgument("GGUF file '" + gguf.path() + "': tensor '" + name + "' has shape " +
                           tensor::ShapeToString(got) + "; the config expects " +
                           tensor::ShapeToString(want));
  }
  return Status::Ok();
}

// Tensor `name` of shape `want`, widened to f32 / as stored / as a view of the mapped file.
Result<std::vector<float>> Read(const GgufReader& gguf, const std::string& name,
                                const tensor::Shape& want) {
  TANDEM_RETURN_IF_ERROR(CheckShape(gguf, name, want));
  TANDEM_ASSIGN_OR_RETURN(tensor::Tensor t, gguf.ReadF32(name));
  return t.TakeF32();
}
Result<tensor::Tensor> Stored(const GgufReader& gguf, const std::string& name,
                              const tensor::Shape& want) {
  TANDEM_RETURN_IF_ERROR(CheckShape(gguf, name, want));
  return gguf.ReadStored(name);
}
Result<tensor::Tensor> View(const GgufReader& gguf, const std::string& name,
                            const tensor::Shape& want) {
  TANDEM_RETURN_IF_ERROR(CheckShape(gguf, name, want));
  return gguf.TensorView(name);
}

// The value-head rows of [rows, …] starting at row `first` (num_v_heads heads × head_rows rows)
// from tiled order to grouped (grouped head g·r + i ← tiled head i·Hk + g): out row j = in row
// order[j]; the rows outside the block stay.
std::vector<int64_t> UntiledRowOrder(int64_t rows, int64_t first, int64_t num_k_heads,
                                     int64_t num_v_heads, int64_t head_rows) {
  std::vector<int64_t> order(rows);
  for (int64_t i = 0; i < rows; ++i) {
    order[i] = i;
  }
  const int64_t r = num_v_heads / num_k_heads;
  for (int64_t g = 0; g < num_k_heads; ++g) {
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t x = 0; x < head_rows; ++x) {
        order[first + (g * r + i) * head_rows + x] = first + (i * num_k_heads + g) * head_rows + x;
      }
    }
  }
  return order;
}

// UntiledRowOrder applied to f32 rows [rows, width] in place.
void UntileHeadRows(std::vector<float>& x, int64_t width, int64_t first, int64_t num_k_heads,
                    int64_t num_v_heads, int64_t head_rows) {
  const int64_t rows = static_cast<int64_t>(x.size()) / width;
  const std::vector<int64_t> order =
      UntiledRowOrder(rows, first, num_k_heads, num_v_heads, head_rows);
  std::vector<float> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(x.begin() + order[r] * width, x.begin() + (order[r] + 1) * width,
              out.begin() + r * width);
  }
  x.swap(out);
}

// t [rows, Hv·dv] in any dtype whose blocks divide dv: the column blocks of dv values in tiled
// head order → grouped, in every row (ssm_out's input columns).
tensor::Tensor UntileColumnBlocks(const tensor::Tensor& t, int64_t num_k_heads, int64_t num_v_heads,
                                  int64_t dv) {
  const std::vector<int64_t> heads = UntiledRowOrder(num_v_heads, 0, num_k_heads, num_v_heads, 1);
  tensor::Tensor out(t.shape(), t.dtype());
  const size_t row = tensor::DTypeBytes(t.dtype(), t.dim(1));
  const size_t head = tensor::DTypeBytes(t.dtype(), dv);
  const auto* src = static_cast<const unsigned char*>(t.raw());
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  for (int64_t r = 0; r < t.dim(0); ++r) {
    for (int64_t h = 0; h < num_v_heads; ++h) {
      std::memcpy(dst + r * row + h * head, src + r * row + heads[h] * head, head);
    }
  }
  return out;
}

}  // namespace

Result<Qwen35Config> Qwen35ConfigFromGguf(const GgufReader& gguf) {
  Qwen35Config c;
  TANDEM_ASSIGN_OR_RETURN(std::string arch, gguf.GetString("general.architecture"));
  if (arch != "qwen35moe") {
    return InvalidArgument("GGUF file '" + gguf.path() + "' has general.architecture '" + arch +
                           "'; expected qwen35moe");
  }
  c.architecture = "qwen35moe";
  auto get = [&](const char* key, int32_t* out) -> Status {
    TANDEM_ASSIGN_OR_RETURN(int64_t v, gguf.GetInt(std::string("qwen35moe.") + key));
    *out = static_cast<int32_t>(v);
    return Status::Ok();
  };
  int32_t nextn = 0, inner = 0, rope_dims = 0;
  TANDEM_ASSIGN_OR_RETURN(const int64_t blocks, gguf.GetInt("qwen35moe.block_count"));
  TANDEM_ASSIGN_OR_RETURN(int64_t n, gguf.GetIntOr("qwen35moe.nextn_predict_layers", 0));
  if (n < 0 || n >= blocks) {
    return InvalidArgument("GGUF file '" + gguf.path() + "': qwen35moe.nextn_predict_layers " +
                           std::to_string(n) + " must be in [0, block_count " +
                           std::to_string(blocks) + ")");
  }
  // Before any per-layer work; the MTP blocks (the last `n`) may be left out of a file.
  TANDEM_RETURN_IF_ERROR(CheckGgufBlockCount(gguf, "qwen35moe.block_count", blocks, n));
  nextn = static_cast<int32_t>(n);
  c.num_layers = static_cast<int32_t>(blocks - nextn);
  c.mtp_num_hidden_layers = nextn;
  TANDEM_RETURN_IF_ERROR(get("embedding_length", &c.hidden_size));
  TANDEM_RETURN_IF_ERROR(get("attention.head_count", &c.num_heads));
  TANDEM_RETURN_IF_ERROR(get("attention.head_count_kv", &c.num_kv_heads));
  TANDEM_RETURN_IF_ERROR(get("attention.key_length", &c.head_dim));
  TANDEM_RETURN_IF_ERROR(get("rope.dimension_count", &rope_dims));
  TANDEM_RETURN_IF_ERROR(get("expert_count", &c.num_experts));
  TANDEM_RETURN_IF_ERROR(get("expert_used_count", &c.num_experts_per_tok));
  TANDEM_RETURN_IF_ERROR(get("expert_feed_forward_length", &c.moe_intermediate_size));
  TANDEM_ASSIGN_OR_RETURN(int64_t shared,
                          gguf.GetIntOr("qwen35moe.expert_shared_feed_forward_length", 0));
  c.shared_expert_intermediate_size = static_cast<int32_t>(shared);
  TANDEM_RETURN_IF_ERROR(get("ssm.conv_kernel", &c.linear_conv_kernel_dim));
  TANDEM_RETURN_IF_ERROR(get("ssm.state_size", &c.linear_key_head_dim));
  TANDEM_RETURN_IF_ERROR(get("ssm.group_count", &c.linear_num_key_heads));
  TANDEM_RETURN_IF_ERROR(get("ssm.time_step_rank", &c.linear_num_value_heads));
  TANDEM_RETURN_IF_ERROR(get("ssm.inner_size", &inner));
  TANDEM_ASSIGN_OR_RETURN(int64_t interval, gguf.GetIntOr("qwen35moe.full_attention_interval", 4));
  TANDEM_ASSIGN_OR_RETURN(int64_t ctx, gguf.GetIntOr("qwen35moe.context_length", 262144));
  c.max_position_embeddings = static_cast<int32_t>(ctx);
  TANDEM_ASSIGN_OR_RETURN(c.rope_theta,
                          GgufPositiveFloatOr(gguf, "qwen35moe.rope.freq_base", "rope_theta", 1e7));
  TANDEM_ASSIGN_OR_RETURN(c.rms_norm_eps,
                          GgufPositiveFloatOr(gguf, "qwen35moe.attention.layer_norm_rms_epsilon",
                                              "rms_norm_eps", 1e-6));
  if (c.linear_num_value_heads <= 0 || inner % c.linear_num_value_heads != 0 || c.head_dim <= 0) {
    return InvalidArgument("GGUF file '" + gguf.path() + "': qwen35moe.ssm.inner_size " +
                           std::to_string(inner) + " is not a multiple of ssm.time_step_rank " +
                           std::to_string(c.linear_num_value_heads));
  }
  c.linear_value_head_dim = inner / c.linear_num_value_heads;
  c.partial_rotary_factor = static_cast<float>(rope_dims) / static_cast<float>(c.head_dim);
  TANDEM_RETURN_IF_ERROR(InGgufFile(
      gguf,
      c.SetLayerTypesByInterval(static_cast<int32_t>(std::clamp<int64_t>(
          interval, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max())))));
  TANDEM_ASSIGN_OR_RETURN(c.vocab_size, GgufVocabSize(gguf));
  c.tie_word_embeddings = !gguf.HasTensor("output.weight");
  TANDEM_RETURN_IF_ERROR(InGgufFile(gguf, c.Validate()));
  return c;
}

Qwen35GgufSource::Qwen35GgufSource(const GgufReader& gguf, const Qwen35Config& config)
    : gguf_(gguf), c_(config) {
  Direct("model.embed_tokens.weight", "token_embd.weight");
  if (gguf_.HasTensor("output.weight")) Direct("lm_head.weight", "output.weight");
  entries_["model.norm.weight"] = MinusOne("output_norm.weight", c_.hidden_size);
  for (int32_t l = 0; l < c_.num_layers; ++l) {
    AddLayer("model.layers." + std::to_string(l) + ".", l, c_.full_attention[l]);
  }
  // The MTP layer (llama.cpp's converter writes it as the last block, blk.{num_layers}, with
  // the head's own tensors under nextn.*): presented under HF's mtp.* names, norms without
  // the folded +1. Only the first MTP layer exists in Qwen3.5 checkpoints.
  const std::string g = "blk." + std::to_string(c_.num_layers) + ".";
  if (c_.mtp_num_hidden_layers >= 1 && gguf_.HasTensor(g + "nextn.eh_proj.weight")) {
    AddLayer("mtp.layers.0.", c_.num_layers, /*full_attention=*/true);
    Direct("mtp.fc.weight", g + "nextn.eh_proj.weight");
    for (auto [hf, gguf_name] : {std::pair{"mtp.pre_fc_norm_embedding.weight", "nextn.enorm"},
                                 std::pair{"mtp.pre_fc_norm_hidden.weight", "nextn.hnorm"},
                                 std::pair{"mtp.norm.weight", "nextn.shared_head_norm"}}) {
      entries_[hf] = MinusOne(g + gguf_name + ".weight", c_.hidden_size);
    }
  }
}

Qwen35GgufSource::Entry Qwen35GgufSource::MinusOne(const std::string& gguf_name,
                                                   int64_t size) const {
  return Entry{{size}, [this, gguf_name, size]() -> Result<std::vector<float>> {
                 TANDEM_ASSIGN_OR_RETURN(auto w, Read(gguf_, gguf_name, {size}));
                 for (float& v : w) v -= 1.0f;  // the loader adds the zero-centred norm's 1 back
                 return w;
               }};
}

void Qwen35GgufSource::Direct(const std::string& hf, const std::string& gguf_name) {
  auto shape = gguf_.TensorShape(gguf_name);
  entries_[hf] = {shape.ok() ? shape.value() : tensor::Shape{},
                  [this, gguf_name]() -> Result<std::vector<float>> {
                    TANDEM_ASSIGN_OR_RETURN(tensor::Tensor t, gguf_.ReadF32(gguf_name));
                    return t.TakeF32();
                  },
                  [this, gguf_name] { return gguf_.ReadStored(gguf_name); }};
}

void Qwen35GgufSource::AddLayer(const std::string& hf, int32_t block, bool full_attention) {
  const std::string g = "blk." + std::to_string(block) + ".";
  const int64_t h = c_.hidden_size, hk = c_.linear_num_key_heads, hv = c_.linear_num_value_heads;
  const int64_t dk = c_.linear_key_head_dim, dv = c_.linear_value_head_dim;
  const int64_t kernel = c_.linear_conv_kernel_dim, channels = 2 * hk * dk + hv * dv;
  const int64_t e = c_.num_experts, ff = c_.moe_intermediate_size;
  entries_[hf + "input_layernorm.weight"] = MinusOne(g + "attn_norm.weight", h);
  entries_[hf + "post_attention_layernorm.weight"] = MinusOne(g + "post_attention_norm.weight", h);
  if (full_attention) {
    const std::string a = hf + "self_attn.";
    Direct(a + "q_proj.weight", g + "attn_q.weight");
    Direct(a + "k_proj.weight", g + "attn_k.weight");
    Direct(a + "v_proj.weight", g + "attn_v.weight");
    Direct(a + "o_proj.weight", g + "attn_output.weight");
    entries_[a + "q_norm.weight"] = MinusOne(g + "attn_q_norm.weight", c_.head_dim);
    entries_[a + "k_norm.weight"] = MinusOne(g + "attn_k_norm.weight", c_.head_dim);
  } else {
    const std::string p = hf + "linear_attn.";
    // Rows (or entries) in tiled value-head order → grouped, `head_rows` rows per head, the
    // value block starting at row `first`.
    auto untiled = [this, hk, hv](std::string name, tensor::Shape shape, int64_t first,
                                  int64_t head_rows) {
      const int64_t width = shape.size() > 1 ? shape.back() : 1;
      Entry entry{
          shape,
          [this, name, shape, first, head_rows, width, hk, hv]() -> Result<std::vector<float>> {
            TANDEM_ASSIGN_OR_RETURN(auto w, Read(gguf_, name, shape));
            UntileHeadRows(w, width, first, hk, hv, head_rows);
            return w;
          }};
      if (shape.size() == 2) {  // a matrix: whole rows move, in the stored dtype
        entry.read_stored = [this, name, shape, first, head_rows, hk,
                             hv]() -> Result<tensor::Tensor> {
          TANDEM_ASSIGN_OR_RETURN(tensor::Tensor w, Stored(gguf_, name, shape));
          return tensor::GatherRows(w, UntiledRowOrder(w.dim(0), first, hk, hv, head_rows));
        };
      }
      return entry;
    };
    entries_[p + "in_proj_qkv.weight"] =
        untiled(g + "attn_qkv.weight", {channels, h}, 2 * hk * dk, dv);
    entries_[p + "in_proj_z.weight"] = untiled(g + "attn_gate.weight", {hv * dv, h}, 0, dv);
    entries_[p + "in_proj_b.weight"] = untiled(g + "ssm_beta.weight", {hv, h}, 0, 1);
    entries_[p + "in_proj_a.weight"] = untiled(g + "ssm_alpha.weight", {hv, h}, 0, 1);
    entries_[p + "dt_bias"] = untiled(g + "ssm_dt.bias", {hv}, 0, 1);
    // conv1d [C, K] (squeezed): v channels untiled; presented as HF's [C, 1, K].
    entries_[p + "conv1d.weight"] = Entry{
        {channels, 1, kernel},
        [this, g, channels, kernel, hk, hv, dk, dv]() -> Result<std::vector<float>> {
          TANDEM_ASSIGN_OR_RETURN(auto w, Read(gguf_, g + "ssm_conv1d.weight", {channels, kernel}));
          UntileHeadRows(w, kernel, 2 * hk * dk, hk, hv, dv);
          return w;
        }};
    entries_[p + "A_log"] = Entry{{hv}, [this, g, hk, hv]() -> Result<std::vector<float>> {
                                    TANDEM_ASSIGN_OR_RETURN(auto a, Read(gguf_, g + "ssm_a", {hv}));
                                    UntileHeadRows(a, 1, 0, hk, hv, 1);
                                    for (float& v : a) v = std::log(-v);  // ssm_a = −exp(A_log)
                                    return a;
                                  }};
    Direct(p + "norm.weight", g + "ssm_norm.weight");
    // ssm_out [H, Hv·dv]: its input columns are in tiled order; untile each row's columns.
    entries_[p + "out_proj.weight"] = Entry{
        {h, hv * dv},
        [this, g, h, hk, hv, dv]() -> Result<std::vector<float>> {
          TANDEM_ASSIGN_OR_RETURN(auto w, Read(gguf_, g + "ssm_out.weight", {h, hv * dv}));
          for (int64_t row = 0; row < h; ++row) {
            std::vector<float> cols(w.begin() + row * hv * dv, w.begin() + (row + 1) * hv * dv);
            UntileHeadRows(cols, 1, 0, hk, hv, dv);
            std::copy(cols.begin(), cols.end(), w.begin() + row * hv * dv);
          }
          return w;
        },
        [this, g, h, hk, hv, dv, hf_name = p + "out_proj.weight"]() -> Result<tensor::Tensor> {
          TANDEM_ASSIGN_OR_RETURN(tensor::Tensor w,
                                  Stored(gguf_, g + "ssm_out.weight", {h, hv * dv}));
          if (dv % tensor::DTypeBlockValues(w.dtype()) != 0) {  // a head would cut a block
            return ReadF32(hf_name);
          }
          return UntileColumnBlocks(w, hk, hv, dv);
        }};
  }
  Direct(hf + "mlp.gate.weight", g + "ffn_gate_inp.weight");
  entries_[hf + "mlp.experts.gate_up_proj"] = Entry{
      {e, 2 * ff, h},
      [this, g, e, ff, h]() -> Result<std::vector<float>> {
        TANDEM_ASSIGN_OR_RETURN(auto gate, Read(gguf_, g + "ffn_gate_exps.weight", {e, ff, h}));
        TANDEM_ASSIGN_OR_RETURN(auto up, Read(gguf_, g + "ffn_up_exps.weight", {e, ff, h}));
        std::vector<float> fused;
        fused.reserve(gate.size() + up.size());
        for (int64_t x = 0; x < e; ++x) {
          fused.insert(fused.end(), gate.begin() + x * ff * h, gate.begin() + (x + 1) * ff * h);
          fused.insert(fused.end(), up.begin() + x * ff * h, up.begin() + (x + 1) * ff * h);
        }
        return fused;
      },
      [this, g, e, ff, h]() -> Result<tensor::Tensor> {  // each expert's gate rows, then up
        // Views of the mapped file: the experts are copied once, into the fused tensor.
        TANDEM_ASSIGN_OR_RETURN(tensor::Tensor gate,
                                View(gguf_, g + "ffn_gate_exps.weight", {e, ff, h}));
        TANDEM_ASSIGN_OR_RETURN(tensor::Tensor up,
                                View(gguf_, g + "ffn_up_exps.weight", {e, ff, h}));
        if (gate.dtype() != up.dtype() || gate.shape() != up.shape() || gate.rank() != 3) {
          return InvalidArgument("GGUF file '" + gguf_.path() + "': " + g +
                                 "ffn_gate_exps and ffn_up_exps differ in dtype or shape");
        }
        tensor::Tensor fused({e, 2 * gate.dim(1), gate.dim(2)}, gate.dtype());
        const size_t half = gate.size_bytes() / static_cast<size_t>(e);
        auto* out = static_cast<unsigned char*>(fused.mutable_raw());
        for (int64_t x = 0; x < e; ++x) {
          std::memcpy(out + 2 * x * half, static_cast<const unsigned char*>(gate.raw()) + x * half,
                      half);
          std::memcpy(out + (2 * x + 1) * half,
                      static_cast<const unsigned char*>(up.raw()) + x * half, half);
        }
        return fused;
      }};
  Direct(hf + "mlp.experts.down_proj", g + "ffn_down_exps.weight");
  if (c_.shared_expert_intermediate_size > 0) {
    Direct(hf + "mlp.shared_expert.gate_proj.weight", g + "ffn_gate_shexp.weight");
    Direct(hf + "mlp.shared_expert.up_proj.weight", g + "ffn_up_shexp.weight");
    Direct(hf + "mlp.shared_expert.down_proj.weight", g + "ffn_down_shexp.weight");
    Direct(hf + "mlp.shared_expert_gate.weight", g + "ffn_gate_inp_shexp.weight");
  }
}

Result<tensor::Shape> Qwen35GgufSource::TensorShape(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return InvalidArgument("'" + source_name() + "' has no tensor for '" + name + "'");
  }
  return it->second.shape;
}

Result<tensor::Tensor> Qwen35GgufSource::ReadStored(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return InvalidArgument("'" + source_name() + "' has no tensor for '" + name + "'");
  }
  if (!it->second.read_stored) {
    return ReadF32(name);
  }
  TANDEM_ASSIGN_OR_RETURN(tensor::Tensor t, it->second.read_stored());
  if (t.numel() != tensor::NumElements(it->second.shape)) {
    return InvalidArgument("'" + source_name() + "': tensor for '" + name + "' has shape " +
                           tensor::ShapeToString(t.shape()) + "; expected " +
                           tensor::ShapeToString(it->second.shape));
  }
  if (t.shape() != it->second.shape) {
    t.Reshape(it->second.shape);
  }
  return t;
}

Result<tensor::Tensor> Qwen35GgufSource::ReadF32(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return InvalidArgument("'" + source_name() + "' has no tensor for '" + name + "'");
  }
  TANDEM_ASSIGN_OR_RETURN(std::vector<float> values, it->second.read());
  tensor::Tensor t(it->second.shape, tensor::DType::kF32);
  if (static_cast<int64_t>(values.size()) != t.numel()) {
    return InvalidArgument("'" + source_name() + "': tensor for '" + name + "' has " +
                           std::to_string(values.size()) + " values; expected shape " +
                           tensor::ShapeToString(it->second.shape));
  }
  std::copy(values.begin(), values.end(), t.mutable_f32());
  return t;
}

}  // namespace tandem::model
