// One multiply for every weight a layer holds, whatever its stored dtype: F32/F16/BF16/Q8_0 go
// to kernels::MatmulTyped (f32 activations), an I8 weight with a tensor::Int8Quant side car
// quantizes the activations (per token, or with its static parameters) and goes to
// kernels::MatmulInt8 over the weight packed once at load (docs/design/w8a8.md). Used by Linear
// and the MoE experts.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace tandem::model {

// What the int8 path prepares from a weight once, at load (empty for other dtypes).
struct Int8WeightPlan {
  std::shared_ptr<const tensor::Int8Quant> quant;
  int64_t k = 0;              // input channels
  int64_t segment_rows = 0;   // rows packed together (all of a Linear's; one expert's)
  int64_t segment_bytes = 0;  // kernels::PackedInt8Bytes(segment_rows, k)
  std::vector<int8_t> packed;     // the segments one after the other, kernels::PackInt8Weights
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

// For an I8 weight whose bytes now live packed in its plan: the same shape, dtype and side car
// without the row-major bytes (raw() is null), so the layer does not keep the weight twice.
// Any other tensor is returned as is.
tensor::Tensor DropInt8Bytes(tensor::Tensor w);

// y[m, rows] = x[m, k] · W[first_row, first_row + rows)ᵀ, rows counted over every axis of `w`
// but the last (k). x, y f32 row-major; y must not alias x. `plan` = PlanWeight(w, …); for an
// I8 weight [first_row, first_row + rows) must be whole segments of it (checked).
void MultiplyWeight(const tensor::Tensor& w, const Int8WeightPlan& plan, const float* x, float* y,
                    int64_t m, int64_t first_row, int64_t rows);

}  // namespace tandem::model
