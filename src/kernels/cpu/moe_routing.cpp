// MoE top-k routing: softmax over all expert logits, keep the k largest, renormalise them.
// Reference: llama.cpp llm_build_moe_ffn (LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX, norm_w),
// HF MixtralSparseMoeBlock. Ties go to the lower expert id (stable order).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/check.h"
#include "kernels/ops.h"

namespace tandem::kernels {

void TopKRouting(const float* router_logits, int64_t num_tokens, int64_t num_experts, int64_t top_k,
                 int32_t* expert_ids, float* weights) {
  TANDEM_CHECK(top_k > 0 && top_k <= num_experts)
      << "top_k " << top_k << " must be in [1, " << num_experts << "]";
#pragma omp parallel for if (num_tokens >= 64)
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* logits = router_logits + t * num_experts;
    thread_local std::vector<float> probs;
    thread_local std::vector<int32_t> order;
    probs.assign(logits, logits + num_experts);
    Softmax(probs.data(), 1, num_experts);
    order.resize(num_experts);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + top_k, order.end(), [&](int32_t a, int32_t b) {
      return probs[a] > probs[b] || (probs[a] == probs[b] && a < b);
    });
    float sum = 0.0f;
    for (int64_t i = 0; i < top_k; ++i) sum += probs[order[i]];
    for (int64_t i = 0; i < top_k; ++i) {
      expert_ids[t * top_k + i] = order[i];
      weights[t * top_k + i] = probs[order[i]] / sum;
    }
  }
}

void TopKRoutingNaive(const float* router_logits, int64_t num_tokens, int64_t num_experts,
                      int64_t top_k, int32_t* expert_ids, float* weights) {
  for (int64_t t = 0; t < num_tokens; ++t) {
    std::vector<double> probs(num_experts);
    double mx = router_logits[t * num_experts];
    for (int64_t e = 0; e < num_experts; ++e)
      mx = std::max(mx, (double)router_logits[t * num_experts + e]);
    double sum = 0.0;
    for (int64_t e = 0; e < num_experts; ++e) {
      probs[e] = std::exp(router_logits[t * num_experts + e] - mx);
      sum += probs[e];
    }
    std::vector<bool> taken(num_experts, false);
    double picked_sum = 0.0;
    for (int64_t i = 0; i < top_k; ++i) {
      int64_t best = -1;
      for (int64_t e = 0; e < num_experts; ++e) {
        if (!taken[e] && (best < 0 || probs[e] > probs[best])) best = e;
      }
      taken[best] = true;
      expert_ids[t * top_k + i] = static_cast<int32_t>(best);
      weights[t * top_k + i] = static_cast<float>(probs[best] / sum);
      picked_sum += probs[best] / sum;
    }
    for (int64_t i = 0; i < top_k; ++i) {
      weights[t * top_k + i] = static_cast<float>(weights[t * top_k + i] / picked_sum);
    }
  }
}

}  // namespace tandem::kernels
