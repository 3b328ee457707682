// One multiply for every weight a layer holds, whatever its stored dtype: F32/F16/BF16 go to
// kernels::MatmulTyped (f32 activations); an I8 weight with a tensor::Int8Quant side car
// quantizes the activations (per token, or with its static parameters) and goes to
// kernels::MatmulInt8 over the weight packed once at load (docs/design/w8a8.md); a GGUF Q8_0
// weight goes, by Q8_0Dot, either to kernels::MatmulQ8_0Int8 (activations quantized to Q8_0,
// llama.cpp's arithmetic, packed at load) or to MatmulTyped's exact widening
// (docs/design/weight-dtypes.md). Used by Linear and the MoE experts.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace tandem::model {

// How GGUF Q8_0 weights multiply (process-wide; set at load from --additional-config
// q8_0_dot): kInt8 = activations quantized to Q8_0 per block of 32 and int8 dot products, as
// llama.cpp (used where kernels::MatmulQ8_0Int8Available(), else as kFloat32); kFloat32 = the
// weights widened exactly, f32 activations.
enum class Q8_0Dot { kInt8, kFloat32 };
void SetQ8_0Dot(Q8_0Dot dot);
Q8_0Dot GetQ8_0Dot();

// What the int8 paths prepare from a weight once, at load (kind kNone: nothing, the weight is
// multiplied as stored).
struct Int8WeightPlan {
  enum class Kind { kNone, kW8A8, kQ8_0 };
  Kind kind = Kind::kNone;
  std::shared_ptr<const tensor::Int8Quant> quant;
  int64_t k = 0;              // input channels
  int64_t segment_rows = 0;   // rows packed together (all of a Linear's; one expert's)
  int64_t segment_bytes = 0;  // kernels::PackedInt8Bytes / PackedQ8_0Bytes(segment_rows, k)
  // The segments one after the other: kernels::PackInt8Weights (kW8A8) or PackQ8_0Weights.
  std::vector<uint8_t> packed;
  std::vector<int32_t> row_sums;  // [rows] Σ_k W_q[n, k] over the columns this tensor holds
  // [rows] static scheme: row_bias − input_offset · row_sums (= quant_bias when the tensor holds
  // every column of the checkpoint's rows); empty for the dynamic scheme.
  std::vector<int32_t> bias;
  // Resident bytes (packed weights, sums, bias, scales).
  size_t bytes() const;
};

// Plans `w` ([.., out, in]); `segment_rows` (0 = all rows) is the unit MultiplyWeight is called
// on (an expert's rows of a stacked tensor). An I8 tensor must carry a side car (an I8 tensor
// without one is a loader bug: checked); a static bias that does not fit int32 is refused
// (checked).
Int8WeightPlan PlanWeight(const tensor::Tensor& w, int64_t segment_rows = 0);

// For a weight whose bytes now live packed in `plan` (kind != kNone): the same shape, dtype and
// side car without the stored bytes (raw() is null), so the layer does not keep the weight
// twice. Otherwise `w` as is.
tensor::Tensor DropPackedBytes(tensor::Tensor w, const Int8WeightPlan& plan);

// y[m, rows] = x[m, k] · W[first_row, first_row + rows)ᵀ, rows counted over every axis of `w`
// but the last (k). x, y f32 row-major; y must not alias x. `plan` = PlanWeight(w, …); for an
// packed weight [first_row, first_row + rows) must be one segment of it (checked).
void MultiplyWeight(const tensor::Tensor& w, const Int8WeightPlan& plan, const float* x, float* y,
                    int64_t m, int64_t first_row, int64_t rows);

}  // namespace tandem::model
