// One multiply for every weight a layer holds, whatever its stored dtype: F32/F16/BF16/Q8_0 go
// to kernels::MatmulTyped (f32 activations), an I8 weight with a tensor::Int8Quant side car
// quantizes the activations (per token, or with its static parameters) and goes to
// kernels::MatmulInt8 (docs/design/w8a8.md). Used by Linear and the MoE experts.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace tandem::model {

// What the int8 path precomputes from a weight once, at load (empty for other dtypes).
struct Int8WeightPlan {
  std::vector<int32_t> row_sums;  // [rows] Σ_k W_q[n, k] over the columns this tensor holds
  // [rows] static scheme: row_bias − input_offset · row_sums (= quant_bias when the tensor holds
  // every column of the checkpoint's rows); empty for the dynamic scheme.
  std::vector<int32_t> bias;
};

// Plans `w` ([.., out, in]); for an I8 tensor it must carry a side car (an I8 tensor without one
// is a loader bug: checked). A static bias that does not fit int32 is refused (checked).
Int8WeightPlan PlanWeight(const tensor::Tensor& w);

// y[m, rows] = x[m, k] · W[first_row, first_row + rows)ᵀ, rows counted over every axis of `w`
// but the last (k). x, y f32 row-major; y must not alias x. `plan` = PlanWeight(w).
void MultiplyWeight(const tensor::Tensor& w, const Int8WeightPlan& plan, const float* x, float* y,
                    int64_t m, int64_t first_row, int64_t rows);

}  // namespace tandem::model
