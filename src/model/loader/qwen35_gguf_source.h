// Qwen35GgufSource: a llama.cpp `qwen35moe` GGUF seen under the Hugging Face tensor names and
// layouts, so the one Qwen3.5 loader (arch/qwen3_5_moe.cpp) reads both formats. It undoes
// what llama.cpp's converter did (QWEN35.md §6.3; tiny-qwen3.5-moe/PROVENANCE.md):
//   - +1 folded into every zero-centred norm (not the GDN output norm): 1 is subtracted back;
//   - ssm_a = −exp(A_log): A_log = log(−ssm_a); dt_bias was renamed ssm_dt.bias;
//   - value heads reordered from grouped to tiled (grouped head g·r + i is tiled head i·Hk + g)
//     in the v rows of attn_qkv, attn_gate, ssm_alpha/ssm_beta rows, ssm_a, ssm_dt, the v
//     channels of ssm_conv1d and the input columns of ssm_out: put back in grouped order;
//   - conv1d squeezed to [C, K]: presented as [C, 1, K]; experts split into gate/up/down
//     tensors: presented fused as HF's gate_up_proj [E, 2·I, H] and down_proj [E, H, I].
// The MTP block (blk.{n_layers}.*, with nextn.eh_proj / enorm / hnorm / shared_head_norm) is
// presented as HF's mtp.layers.0.* / mtp.fc / mtp.pre_fc_norm_* / mtp.norm.
// ReadStored keeps the file's dtype (F32, F16, BF16, Q8_0) for every matrix a Linear or the
// experts hold — the projections, experts, embedding and lm_head, with the reorders above done
// on whole rows or head-wide column blocks — so a Q8_0 file stays Q8_0 in memory; the
// transformed small tensors (zero-centred norms, A_log, dt_bias, conv1d) are f32, the rest as
// stored. Every tensor a reorder indexes is checked against the config's shape first.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "model/config/qwen35_config.h"
#include "model/loader/gguf_reader.h"
#include "model/loader/weight_source.h"

namespace tandem::model {

// The config of a `qwen35moe` GGUF from its metadata (block_count minus nextn_predict_layers
// layers; ssm.* and attention.* keys). Errors: kInvalidArgument naming the key or the file
// (another architecture, a missing key, failed Validate()).
Result<Qwen35Config> Qwen35ConfigFromGguf(const GgufReader& gguf);

class Qwen35GgufSource : public WeightSource {
 public:
  // `gguf` outlives the source; `config` from Qwen35ConfigFromGguf.
  Qwen35GgufSource(const GgufReader& gguf, const Qwen35Config& config);

  const std::string& source_name() const override { return gguf_.source_name(); }
  bool HasTensor(const std::string& name) const override { return entries_.count(name) > 0; }
  Result<tensor::Shape> TensorShape(const std::string& name) const override;
  Result<tensor::Tensor> ReadF32(const std::string& name) const override;
  Result<tensor::Tensor> ReadStored(const std::string& name) const override;

 private:
  struct Entry {
    tensor::Shape shape;  // HF shape
    std::function<Result<std::vector<float>>()> read;
    // In the stored dtype (null: f32 values only, from `read`).
    std::function<Result<tensor::Tensor>()> read_stored;
  };
  // GGUF block `block` under the HF layer prefix `hf` ("model.layers.3.", "mtp.layers.0.").
  void AddLayer(const std::string& hf, int32_t block, bool full_attention);
  // A zero-centred norm stored with llama.cpp's +1 folded in, presented without it.
  Entry MinusOne(const std::string& gguf_name, int64_t size) const;
  // A GGUF tensor as is, under an HF name.
  void Direct(const std::string& hf, const std::string& gguf_name);

  const GgufReader& gguf_;
  Qwen35Config c_;
  std::map<std::string, Entry> entries_;
};

}  // namespace tandem::model
