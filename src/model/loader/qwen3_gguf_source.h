// Qwen3GgufSource: a llama.cpp `qwen3` / `qwen3moe` GGUF seen under the Hugging Face tensor names,
// so the Qwen loaders (arch/qwen3.cpp, arch/qwen3_moe.cpp) read both formats. llama.cpp's
// converter (Qwen2Model / Qwen3Model / Qwen3MoeModel in convert_hf_to_gguf.py) only renames
// Qwen3's tensors — no q/k permutation (NeoX RoPE in both), norms as stored — and stacks the
// experts: blk.{l}.ffn_{gate,up,down}_exps [E, ff, dim] / [E, dim, ff] are presented as HF's
// model.layers.{l}.mlp.experts.{e}.{gate,up,down}_proj.weight (expert e's slice, in the stored
// dtype). Reference: tiny-qwen3/PROVENANCE.md (GGUF section) and its golden.json
// gguf_layout_checks.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "model/config/qwen_config.h"
#include "model/loader/gguf_reader.h"
#include "model/loader/weight_source.h"

namespace tandem::model {

// The config of a `qwen3` (Qwen3ForCausalLM) or `qwen3moe` (Qwen3MoeForCausalLM, top-k
// renormalised as llama.cpp always does) GGUF from its metadata. Errors: kInvalidArgument naming
// the file and the key (another architecture, a missing key, failed Validate()).
Result<QwenConfig> QwenConfigFromGguf(const GgufReader& gguf);

class Qwen3GgufSource : public WeightSource {
 public:
  // `gguf` outlives the source; `config` from QwenConfigFromGguf.
  Qwen3GgufSource(const GgufReader& gguf, const QwenConfig& config);

  const std::string& source_name() const override { return gguf_.source_name(); }
  bool HasTensor(const std::string& name) const override { return entries_.count(name) > 0; }
  Result<tensor::Shape> TensorShape(const std::string& name) const override;
  Result<tensor::Tensor> ReadF32(const std::string& name) const override;
  Result<tensor::Tensor> ReadStored(const std::string& name) const override;

 private:
  struct Entry {
    std::string gguf_name;
    int64_t expert = -1;  // >= 0: this expert's slice of a stacked [E, ...] tensor
  };
  void Map(const std::string& hf, const std::string& gguf_name, int64_t expert = -1);

  const GgufReader& gguf_;
  std::map<std::string, Entry> entries_;
  // The last stacked expert tensor read: the E experts of a layer are read one after the other.
  mutable std::mutex cache_mu_;
  mutable std::string cached_name_;
  mutable std::shared_ptr<const tensor::Tensor> cached_;
};

}  // namespace tandem::model
