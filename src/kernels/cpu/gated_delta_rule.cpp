// The gated delta rule (Gated DeltaNet's linear attention), recurrent and chunked.
// Reference: QWEN35.md §3.4–3.5; HF transformers modeling_qwen3_5_moe.py
// (torch_recurrent_gated_delta_rule, torch_chunk_gated_delta_rule); FLA naive.py / chunk.py.
// Deviation: the chunked form keeps a chunk's small matrices (cumulative decays, the L×L
// triangle, U, W, V′) in f64, trading speed for agreement with the recurrence; the state is f32.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

// Rows of value head j and its key head at token t.
struct HeadRows {
  const GatedDeltaRuleDims& d;
  int64_t j;
  int64_t kh() const { return j / (d.num_v_heads / d.num_k_heads); }
  int64_t KeyRow(int64_t t) const { return (t * d.num_k_heads + kh()) * d.key_dim; }
  int64_t ValueRow(int64_t t) const { return (t * d.num_v_heads + j) * d.value_dim; }
  int64_t Gate(int64_t t) const { return t * d.num_v_heads + j; }
};

}  // namespace

void GatedDeltaRuleRecurrent(const float* q, const float* k, const float* v, const float* g,
                             const float* beta, float* state, float* out,
                             const GatedDeltaRuleDims& d) {
  const int64_t dk = d.key_dim, dv = d.value_dim;
#pragma omp parallel for if (d.num_v_heads * d.num_tokens * dk * dv >= 65536)
  for (int64_t j = 0; j < d.num_v_heads; ++j) {
    const HeadRows rows{d, j};
    float* s = state + j * dk * dv;  // [dk, dv]
    std::vector<float> delta(dv);
    for (int64_t t = 0; t < d.num_tokens; ++t) {
      const float decay = std::exp(g[rows.Gate(t)]);
      const float b = beta[rows.Gate(t)];
      const float* kt = k + rows.KeyRow(t);
      const float* qt = q + rows.KeyRow(t);
      const float* vt = v + rows.ValueRow(t);
      for (int64_t x = 0; x < dk * dv; ++x) s[x] *= decay;
      for (int64_t c = 0; c < dv; ++c) delta[c] = 0.0f;
      for (int64_t i = 0; i < dk; ++i) {
        for (int64_t c = 0; c < dv; ++c) delta[c] += s[i * dv + c] * kt[i];  // Sᵀ k
      }
      for (int64_t c = 0; c < dv; ++c) delta[c] = b * (vt[c] - delta[c]);
      for (int64_t i = 0; i < dk; ++i) {
        for (int64_t c = 0; c < dv; ++c) s[i * dv + c] += kt[i] * delta[c];
      }
      float* o = out + rows.ValueRow(t);
      for (int64_t c = 0; c < dv; ++c) o[c] = 0.0f;
      for (int64_t i = 0; i < dk; ++i) {
        for (int64_t c = 0; c < dv; ++c) o[c] += s[i * dv + c] * qt[i];  // Sᵀ q
      }
    }
  }
}

void GatedDeltaRuleNaive(const float* q, const float* k, const float* v, const float* g,
                         const float* beta, float* state, float* out, const GatedDeltaRuleDims& d) {
  const int64_t dk = d.key_dim, dv = d.value_dim;
  for (int64_t j = 0; j < d.num_v_heads; ++j) {
    const HeadRows rows{d, j};
    std::vector<double> s(state + j * dk * dv, state + (j + 1) * dk * dv);
    for (int64_t t = 0; t < d.num_tokens; ++t) {
      const double decay = std::exp(static_cast<double>(g[rows.Gate(t)]));
      for (double& x : s) x *= decay;
      for (int64_t c = 0; c < dv; ++c) {
        double predicted = 0;
        for (int64_t i = 0; i < dk; ++i) predicted += s[i * dv + c] * k[rows.KeyRow(t) + i];
        const double delta = beta[rows.Gate(t)] * (v[rows.ValueRow(t) + c] - predicted);
        for (int64_t i = 0; i < dk; ++i) s[i * dv + c] += k[rows.KeyRow(t) + i] * delta;
      }
      for (int64_t c = 0; c < dv; ++c) {
        double o = 0;
        for (int64_t i = 0; i < dk; ++i) o += s[i * dv + c] * q[rows.KeyRow(t) + i];
        out[rows.ValueRow(t) + c] = static_cast<float>(o);
      }
    }
    for (int64_t x = 0; x < dk * dv; ++x) state[j * dk * dv + x] = static_cast<float>(s[x]);
  }
}

void GatedDeltaRuleChunked(const float* q, const float* k, const float* v, const float* g,
                           const float* beta, float* state, float* out, const GatedDeltaRuleDims& d,
                           int64_t chunk_size) {
  const int64_t dk = d.key_dim, dv = d.value_dim;
#pragma omp parallel for if (d.num_v_heads * d.num_tokens * dk * dv >= 65536)
  for (int64_t j = 0; j < d.num_v_heads; ++j) {
    const HeadRows rows{d, j};
    float* s = state + j * dk * dv;  // [dk, dv], carried from chunk to chunk
    std::vector<double> gamma, a, u, w, vp, acc(dv), next(dk * dv), carry;
    for (int64_t t0 = 0; t0 < d.num_tokens; t0 += chunk_size) {
      const int64_t len = std::min(chunk_size, d.num_tokens - t0);
      auto key = [&](int64_t i) { return k + rows.KeyRow(t0 + i); };
      auto query = [&](int64_t i) { return q + rows.KeyRow(t0 + i); };
      auto bet = [&](int64_t i) { return static_cast<double>(beta[rows.Gate(t0 + i)]); };
      // γ_i: cumulative log decay inside the chunk.
      gamma.assign(len, 0.0);
      for (int64_t i = 0; i < len; ++i) {
        gamma[i] = (i ? gamma[i - 1] : 0.0) + static_cast<double>(g[rows.Gate(t0 + i)]);
      }
      auto dot = [&](const float* x, const float* y) {
        double sum = 0;
        for (int64_t i = 0; i < dk; ++i) sum += static_cast<double>(x[i]) * y[i];
        return sum;
      };
      // A_il = β_i (k_i·k_l) e^(γ_i − γ_l), strictly lower triangular; (I + A) U = diag(β) V and
      // (I + A) W = diag(β e^γ) K by forward substitution.
      a.assign(len * len, 0.0);
      for (int64_t i = 0; i < len; ++i) {
        for (int64_t l = 0; l < i; ++l) {
          a[i * len + l] = bet(i) * dot(key(i), key(l)) * std::exp(gamma[i] - gamma[l]);
        }
      }
      u.assign(len * dv, 0.0);
      w.assign(len * dk, 0.0);
      for (int64_t i = 0; i < len; ++i) {
        const float* vi = v + rows.ValueRow(t0 + i);
        for (int64_t c = 0; c < dv; ++c) u[i * dv + c] = bet(i) * vi[c];
        const double scale = bet(i) * std::exp(gamma[i]);
        for (int64_t x = 0; x < dk; ++x) w[i * dk + x] = scale * key(i)[x];
        for (int64_t l = 0; l < i; ++l) {
          const double a_il = a[i * len + l];
          if (a_il == 0.0) continue;
          for (int64_t c = 0; c < dv; ++c) u[i * dv + c] -= a_il * u[l * dv + c];
          for (int64_t x = 0; x < dk; ++x) w[i * dk + x] -= a_il * w[l * dk + x];
        }
      }
      // V′ = U − W S: the part of the new values the incoming state does not already predict.
      vp.assign(len * dv, 0.0);
      for (int64_t i = 0; i < len; ++i) {
        for (int64_t c = 0; c < dv; ++c) vp[i * dv + c] = u[i * dv + c];
        for (int64_t x = 0; x < dk; ++x) {
          const double w_ix = w[i * dk + x];
          for (int64_t c = 0; c < dv; ++c) vp[i * dv + c] -= w_ix * s[x * dv + c];
        }
      }
      // O_i = e^γ_i q_iᵀ S + Σ_{l ≤ i} (q_i·k_l) e^(γ_i − γ_l) V′_l
      for (int64_t i = 0; i < len; ++i) {
        float* o = out + rows.ValueRow(t0 + i);
        std::fill(acc.begin(), acc.end(), 0.0);
        const double inter = std::exp(gamma[i]);
        for (int64_t x = 0; x < dk; ++x) {
          const double qx = inter * query(i)[x];
          for (int64_t c = 0; c < dv; ++c) acc[c] += qx * s[x * dv + c];
        }
        for (int64_t l = 0; l <= i; ++l) {
          const double coef = dot(query(i), key(l)) * std::exp(gamma[i] - gamma[l]);
          for (int64_t c = 0; c < dv; ++c) acc[c] += coef * vp[l * dv + c];
        }
        for (int64_t c = 0; c < dv; ++c) o[c] = static_cast<float>(acc[c]);
      }
      // S ← e^γ_L S + Σ_i e^(γ_L − γ_i) k_i V′_iᵀ: each decay once per token, then rank-1
      // updates of whole rows (the value axis innermost), accumulated in f64.
      const double total = std::exp(gamma[len - 1]);
      carry.resize(len);
      for (int64_t i = 0; i < len; ++i) {
        carry[i] = std::exp(gamma[len - 1] - gamma[i]);
      }
      for (int64_t x = 0; x < dk; ++x) {
        double* row = next.data() + x * dv;
        for (int64_t c = 0; c < dv; ++c) {
          row[c] = total * s[x * dv + c];
        }
        for (int64_t i = 0; i < len; ++i) {
          const double kx = carry[i] * key(i)[x];
          const double* vpi = vp.data() + i * dv;
          for (int64_t c = 0; c < dv; ++c) {
            row[c] += kx * vpi[c];
          }
        }
      }
      for (int64_t x = 0; x < dk * dv; ++x) {
        s[x] = static_cast<float>(next[x]);
      }
    }
  }
}

}  // namespace tandem::kernels
