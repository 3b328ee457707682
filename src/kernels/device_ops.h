// kernels/device_ops.h: the math ops on tensor views and a stream — what model code calls
// (docs/design/device-seam.md §2). Each op checks that its views are on the stream's device and
// have the shapes it documents, then runs that device's kernel: on the CPU the functions of
// kernels/ops.h (which stay the CPU backend's implementation and the parity tests' subject).
// A device without the kernel aborts naming the op and the device (a backend that does not
// implement an op it was chosen for is a build bug, not bad input).
// Growing as layers move onto views (device-seam.md §8 step 4).
#pragma once

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

}  // namespace tandem::kernels
