// kernels/device_ops.h: the math ops on tensor views and a stream — what model code calls
// (docs/design/device-seam.md §2). Each op checks that its views are on the stream's device and
// have the shapes it documents, then runs that device's kernel: on the CPU the functions of
// kernels/ops.h (which stay the CPU backend's implementation and the parity tests' subject).
// A device without the kernel aborts naming the op and the device (a backend that does not
// implement an op it was chosen for is a build bug, not bad input).
// Growing as layers move onto views (device-seam.md §8 step 4).
#pragma once

#include <initializer_list>

#include "kernels/backend.h"
#include "tensor/tensor_view.h"

namespace tandem::kernels {

// y[r, :] = x[r, :] / sqrt(mean(x[r, :]²) + eps) · weight[:]. x, y: [rows, dim] f32 (y may be
// x); weight: [dim] f32. Reference: kernels::RmsNorm (HF LlamaRMSNorm).
void RmsNorm(Stream& stream, const tensor::TensorView& x, const tensor::TensorView& weight,
             const tensor::TensorView& y, float eps);

// x += d, elementwise. x, d: f32 of the same shape (the residual add of a decoder layer).
void AddInPlace(Stream& stream, const tensor::TensorView& x, const tensor::TensorView& d);

// dst[i, :] = src[rows[i], :] for i < rows.numel(). src: [n, width] f32; rows: [m] I32, each in
// [0, n) (checked on the CPU); dst: [m, width] f32 (the rows whose logits are wanted).
void GatherRows(Stream& stream, const tensor::TensorView& src, const tensor::TensorView& rows,
                const tensor::TensorView& dst);

// x: [rows, 2 * ff] f32, per row the gate half then the up half; out: [rows, ff] f32 =
// silu(gate) · up (must not alias x). Reference: kernels::SiluMul (HF LlamaMLP act_fn).
void SiluMul(Stream& stream, const tensor::TensorView& gate_up, const tensor::TensorView& out);

// x *= sigmoid(gate), elementwise; x, gate f32 of the same numel (Qwen3.5 gated attention's
// output gate).
void MulSigmoid(Stream& stream, const tensor::TensorView& x, const tensor::TensorView& gate);

// out[r, :] += sigmoid(gate[r]) · y[r, :]. out, y: [rows, dim] f32; gate: [rows] or [rows, 1] f32
// (a sigmoid-gated shared expert: HF Qwen2MoeSparseMoeBlock).
void SigmoidGatedAdd(Stream& stream, const tensor::TensorView& out, const tensor::TensorView& y,
                     const tensor::TensorView& gate);

// x[...] = value. x: f32.
void Fill(Stream& stream, const tensor::TensorView& x, float value);

// dst[r, :] = src[r, first_col : first_col + w] for r < rows. src: [rows, W] f32; dst: [rows, w]
// f32 with first_col + w <= W (a column slice: q, k, v out of a fused projection's rows).
void CopyColumns(Stream& stream, const tensor::TensorView& src, int64_t first_col,
                 const tensor::TensorView& dst);

// dst[rows[i], :] += weights[i] · src[i, :] for i < rows.numel(), in order. src: [m, width]
// f32; rows: [m] I32, each in [0, n) (checked on the CPU); weights: [m] f32; dst: [n, width] f32
// (a MoE expert's outputs added into the rows routed to it, weighted by their routing weights).
void ScatterAddScaled(Stream& stream, const tensor::TensorView& src, const tensor::TensorView& rows,
                      const tensor::TensorView& weights, const tensor::TensorView& dst);

// For model code whose work has only a host implementation so far (a layer's host loops, the
// weight kernels behind Linear, MoE routing, RoPE, the paged KV cache's kernels): aborts unless
// every view is on the stream's device and that device is the CPU, naming `op` and the device
// (docs/design/device-seam.md §8: each such call becomes a device op when a second backend
// needs it).
void CheckCpuOp(const char* op, const Stream& stream,
                std::initializer_list<const tensor::TensorView*> views);

}  // namespace tandem::kernels
