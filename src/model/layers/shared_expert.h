// SharedExpert: the always-on expert of a Qwen2-MoE block, scaled per token by a sigmoid gate:
// out += sigmoid(x · gᵀ) · down(silu(gate(x)) * up(x)).
// Reference: HF transformers modeling_qwen2_moe.py, Qwen2MoeSparseMoeBlock.forward
// (shared_expert, shared_expert_gate).
#pragma once

#include <cstdint>
#include <vector>

#include "model/layers/expert_parallel.h"
#include "model/layers/linear.h"
#include "model/layers/mlp.h"

namespace tandem::model {

class SharedExpert {
 public:
  SharedExpert() = default;
  // mlp: the shared expert's SwiGLU MLP (intermediate = shared_expert_intermediate_size);
  // gate: [1, dim] f32, the shared_expert_gate weight. With ep.enabled() the MLP is whole
  // (not TP-split) and runs only over this TP rank's DispatchRowsOf rows, like the routed
  // experts (vLLM's sequence-parallel MoE); the layer's TP all-reduce completes the rows.
  SharedExpert(Mlp mlp, std::vector<float> gate, int64_t dim, const EpContext& ep = {});

  // x: [rows, dim] (normed input); out: [rows, dim], the expert's gated output is ADDED to it;
  // both on `stream`'s device. Scratch from `scratch` (scratch_bytes). Not thread-safe.
  void AddForward(kernels::Stream& stream, const tensor::TensorView& x,
                  const tensor::TensorView& out, tensor::DeviceArena& scratch);
  size_t scratch_bytes(int64_t rows, const tensor::DeviceArena& arena) const;
  size_t weight_bytes() const { return mlp_.weight_bytes() + gate_.weight_bytes(); }

 private:
  Mlp mlp_;
  Linear gate_;  // [1, dim]
  int64_t dim_ = 0;
  EpContext ep_;
};

}  // namespace tandem::model
