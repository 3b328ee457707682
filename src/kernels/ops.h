// kernels/ops.h: the one dispatch header of the math ops (CPU now; CUDA later behind the same
// signatures). Tensors are dense row-major, given as raw pointers plus their sizes; activations
// are f32, weights (MatmulTyped) and the KV cache (PagedAttention) may be 16-bit or Q8_0 as their
// tensor::DType says; shapes are written [dim0, dim1, ...]. Every op has a plain "Naive" reference
// used by the parity tests (tests/parity/), and is safe to call from one thread at a time per
// output buffer. Ops parallelise internally over rows / heads with OpenMP.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "tensor/dtype.h"

namespace tandem::kernels {

// ---- token mask (cpu/token_mask.cpp + cpu/token_mask_avx2.cpp) ----
// Structured outputs: dst[i] = src[i] where bit i of `bitmask` (bit i % 32 of word i / 32) is
// set, else -inf, for i < n. bitmask: [ceil(n / 32)] words. dst may be src (in place).
void MaskedCopy(const float* src, const uint32_t* bitmask, int64_t n, float* dst);
void MaskedCopyNaive(const float* src, const uint32_t* bitmask, int64_t n, float* dst);

// ---- matmul (cpu/matmul.cpp) ----
// (A weight in its stored dtype: MatmulTyped below.)
// y[m, n] = x[m, k] · w[n, k]ᵀ (w row-major [out=n, in=k], the layout of every weight).
// Uses oneDNN; primitives are cached per (m, n, k). y must not alias x or w.
void Matmul(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k);
void MatmulNaive(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k);

// ---- typed matmul (cpu/typed_matmul.cpp + cpu/typed_matmul_{avx512,avx2}.cpp) ----
// y[m, n] = x[m, k] · w[n, k]ᵀ with x, y f32 and the weight w row-major [n, k] in its stored
// dtype w_dtype: F32, F16, BF16 or Q8_0 (rows of 34-byte blocks; k a multiple of 32); another
// dtype aborts (the loader never makes one). Every weight element is widened exactly to f32
// (Q8_0: d·q, exact) and products are summed in f32 (FMA), so a file computes the same products
// as widening it at load did.
// m <= kFusedMatmulMaxRows (decode, verify batches): a fused kernel that widens weights in
// registers while streaming them once (AVX-512F or AVX2+F16C by CPUID, a portable loop
// otherwise), columns split over the OpenMP threads. Larger m (prefill): f32 weights through
// oneDNN (Matmul); F16/BF16 widened one L2-sized tile of rows at a time per thread, each tile a
// oneDNN matmul. Design: docs/design/weight-dtypes.md. y must not alias x or w.
constexpr int64_t kFusedMatmulMaxRows = 16;
void MatmulTyped(const float* x, const void* w, tensor::DType w_dtype, float* y, int64_t m,
                 int64_t n, int64_t k);
// Reference: the widening of tensor/dtype.h and f64 accumulation.
void MatmulTypedNaive(const float* x, const void* w, tensor::DType w_dtype, float* y, int64_t m,
                      int64_t n, int64_t k);
// dst[i] = src[i] widened to f32 (exact) for i < count; src in F32, F16, BF16 or Q8_0 (count
// and the start then whole blocks of 32).
void WidenToF32(const void* src, tensor::DType dtype, float* dst, int64_t count);
// The SIMD path MatmulTyped and WidenToF32 use on this CPU: "avx512", "avx2" or "portable".
const char* MatmulTypedIsa();
// Tests and `tandem bench kernels`: use the named path ("avx512", "avx2", "portable") from now
// on, process-wide; false (and no change) when this CPU lacks it. Not while a matmul runs.
bool ForceMatmulTypedIsa(const char* name);

// ---- int8 matmul (cpu/int8_matmul.cpp + cpu/int8_matmul_{avx512,avx2}.cpp) ----
// W8A8 (docs/design/w8a8.md; arithmetic: ../shared/models/*w8a8*/PROVENANCE.md).
// Dynamic symmetric per row (msModelSlim W8A8_DYNAMIC, compressed-tensors "token"): for each
// row i of x [m, k] f32: x_scale[i] = max_p |x[i, p]| / 127 (f32 division; 1 when the max is 0),
// x_q[i, p] = clamp(rint(x[i, p] / x_scale[i]), -127, 127) (f32 division, round half to even).
// x_q: [m, k] int8, x_scale: [m] f32. NaN inputs give unspecified (but in-range) x_q.
void QuantizeRowsDynamicInt8(const float* x, int64_t m, int64_t k, int8_t* x_q, float* x_scale);
// Static asymmetric per tensor (msModelSlim W8A8): x_q = clamp(rint(x / input_scale +
// input_offset), -128, 127) (f32 division, then f32 addition, round half to even).
void QuantizeRowsStaticInt8(const float* x, int64_t m, int64_t k, float input_scale,
                            float input_offset, int8_t* x_q);
// sums[j] = Σ_p w[j, p] for the n rows of w [n, k] int8 (the kernel's offset correction).
void Int8RowSums(const int8_t* w, int64_t n, int64_t k, int32_t* sums);
// The weight layout MatmulInt8 reads, packed once at load: rows in groups of 16, k in quads,
// packed[g][q][r][b] = w[16·g + r, 4·q + b] (zero beyond n or k), i.e. [ceil(n/16)][ceil(k/4)]
// [16][4] int8: one 64-byte vector per (group, quad), the operand of vpdpbusd, read
// sequentially per group (oneDNN's blocked layouts follow the same idea).
constexpr int64_t kInt8PackRows = 16;
int64_t PackedInt8Bytes(int64_t n, int64_t k);
void PackInt8Weights(const int8_t* w, int64_t n, int64_t k, int8_t* packed);
// acc[i, j] = Σ_p x_q[i, p] · w_q[j, p], exact in int32 (k ≤ kMatmulInt8MaxK: checked), then
//   dynamic (x_scale != nullptr): y[i, j] = (f32(acc) · x_scale[i]) · w_scale[j];
//   static  (x_scale == nullptr): y[i, j] = f32(acc + bias[j]) · w_scale[j] (bias may be null = 0).
// x_q [m, k] row-major int8; w_packed = PackInt8Weights(w_q [n, k]); w_row_sums =
// Int8RowSums(w_q) [n]; w_scale [n] f32; y [m, n] f32. AVX-512 VNNI (activation bytes
// broadcast 4 at a time against 16 packed rows: no horizontal sums), AVX2 (int16 madd) or a
// portable loop by CPUID; every path gives the same bits. Rows are split over the OpenMP
// threads in chunks of 64.
constexpr int64_t kMatmulInt8MaxK = 66000;  // 255 · 127 · k < 2^31
void MatmulInt8(const int8_t* x_q, const int8_t* w_packed, const int32_t* w_row_sums,
                const float* x_scale, const float* w_scale, const int32_t* bias, float* y,
                int64_t m, int64_t n, int64_t k);
// Reference (w_q row-major [n, k], not packed): int64 accumulation, the same epilogue.
void MatmulInt8Naive(const int8_t* x_q, const int8_t* w_q, const float* x_scale,
                     const float* w_scale, const int32_t* bias, float* y, int64_t m, int64_t n,
                     int64_t k);
// GGUF Q8_0 weights × Q8_0 activations: llama.cpp's CPU arithmetic for Q8_0 files
// (ggml-cpu quantize_row_q8_0 + ggml_vec_dot_q8_0_q8_0; docs/design/weight-dtypes.md).
// Activation rows [m, k] (k a multiple of 32) are quantized per block of 32: d = max|x| / 127,
// q = rint(x · (1/d)) (ggml's AVX path: round to nearest even; q = 0 when d = 0), d rounded to
// f16; x_d [m, k/32] holds it widened to f32.
void QuantizeRowsQ8_0(const float* x, int64_t m, int64_t k, int8_t* x_q, float* x_d);
// Packed Q8_0 weights: per group of 16 rows and block of 32 columns, 576 bytes: the 16 × 32
// int8 as 8 vpdpbusd operands ([quad][row][4]), the 16 f16 scales, the 16 int16 block sums.
int64_t PackedQ8_0Bytes(int64_t n, int64_t k);
void PackQ8_0Weights(const void* w, int64_t n, int64_t k, uint8_t* packed);
// y[i, j] = Σ_b f32(Σ_{p ∈ b} x_q[i, p] · w_q[j, p]) · (x_d[i, b] · d_w[j, b]), the blocks
// accumulated in order with FMA. Needs AVX-512 VNNI (MatmulQ8_0Int8Available; checked); other
// CPUs run Q8_0 through MatmulTyped's exact widening. Rows split over the threads.
bool MatmulQ8_0Int8Available();
void MatmulQ8_0Int8(const int8_t* x_q, const float* x_d, const uint8_t* w_packed, float* y,
                    int64_t m, int64_t n, int64_t k);
// Reference over the ggml blocks w [n, k] (not packed): the same arithmetic, scalar.
void MatmulQ8_0Int8Naive(const int8_t* x_q, const float* x_d, const void* w, float* y, int64_t m,
                         int64_t n, int64_t k);
// The SIMD path MatmulInt8 uses: "avx512vnni", "avx2" or "portable"; ForceMatmulInt8Isa as
// ForceMatmulTypedIsa (tests, bench).
const char* MatmulInt8Isa();
bool ForceMatmulInt8Isa(const char* name);

// ---- rms_norm (cpu/rms_norm.cpp) ----
// y[r, :] = x[r, :] / sqrt(mean(x[r, :]²) + eps) * weight[:], for r < rows; x, y: [rows, dim].
// y may equal x. Reference: llama2.c rmsnorm / HF LlamaRMSNorm (f32 accumulation).
void RmsNorm(const float* x, const float* weight, float* y, int64_t rows, int64_t dim, float eps);
void RmsNormNaive(const float* x, const float* weight, float* y, int64_t rows, int64_t dim,
                  float eps);

// ---- rope (cpu/rope.cpp) ----
enum class RopeStyle {
  kNeox,         // HF rotate_half: pairs (j, j + head_dim/2)
  kInterleaved,  // GGUF/llama.cpp ROPE_NORM, llama2.c: pairs (2j, 2j + 1)
};
// Rotates x[t, h, :] in place by angle positions[t] * theta^(-2j / head_dim) for pair j.
// x: [num_tokens, num_heads, head_dim]; positions: [num_tokens]. head_dim must be even.
void Rope(float* x, const int32_t* positions, int64_t num_tokens, int64_t num_heads,
          int64_t head_dim, float theta, RopeStyle style);
void RopeNaive(float* x, const int32_t* positions, int64_t num_tokens, int64_t num_heads,
               int64_t head_dim, float theta, RopeStyle style);

// ---- silu_mul (cpu/silu_mul.cpp) ----
// SwiGLU on a fused gate|up row: out[r, j] = silu(gate_up[r, j]) * gate_up[r, ff + j];
// gate_up: [rows, 2 * ff], out: [rows, ff]. silu(x) = x / (1 + e^-x).
void SiluMul(const float* gate_up, float* out, int64_t rows, int64_t ff);
void SiluMulNaive(const float* gate_up, float* out, int64_t rows, int64_t ff);

// ---- softmax (cpu/softmax.cpp) ----
// In place over the last dim of x: [rows, n] (max-subtracted, f32).
void Softmax(float* x, int64_t rows, int64_t n);
void SoftmaxNaive(float* x, int64_t rows, int64_t n);

// ---- paged attention (cpu/paged_attention.cpp) ----
// Metadata of one flat batch (vLLM V1 layout): the query rows of sequence s are
// [query_start_loc[s], query_start_loc[s+1]) and are its LAST q_len tokens, so query row j of s
// sits at position seq_lens[s] - q_len + j and sees context positions 0..that (causal).
// Context token p of sequence s lives in block block_tables[s][p / block_size], offset
// p % block_size.
struct PagedAttentionParams {
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;  // GQA: query head h reads kv head h / (num_heads / num_kv_heads)
  int32_t head_dim = 0;
  int32_t block_size = 16;
  float scale = 1.0f;  // usually 1 / sqrt(head_dim)
  // Element type of key_cache / value_cache (--kv-cache-dtype): F32, F16 or BF16; 16-bit
  // entries are widened exactly when read, scores and the weighted sum are f32.
  tensor::DType kv_dtype = tensor::DType::kF32;
};
// q: [num_tokens, num_heads, head_dim] f32; key_cache/value_cache: [num_blocks, block_size,
// num_kv_heads, head_dim] in params.kv_dtype; out: [num_tokens, num_heads, head_dim] f32.
// Reference: vLLM paged_attention (decode) / flash-attn varlen (prefill), softmax in f32.
void PagedAttention(const float* q, const void* key_cache, const void* value_cache,
                    const int32_t* query_start_loc, const int32_t* seq_lens, int32_t num_seqs,
                    const std::vector<std::vector<int32_t>>& block_tables,
                    const PagedAttentionParams& params, float* out);
void PagedAttentionNaive(const float* q, const void* key_cache, const void* value_cache,
                         const int32_t* query_start_loc, const int32_t* seq_lens, int32_t num_seqs,
                         const std::vector<std::vector<int32_t>>& block_tables,
                         const PagedAttentionParams& params, float* out);

// Writes f32 k/v rows [num_tokens, num_kv_heads * head_dim] into the paged caches (elements of
// kv_dtype: F32 copied, F16/BF16 rounded to nearest even) at slot_mapping[t]
// (block_id * block_size + offset); slot -1 = padding, skipped.
void WriteKvCache(const float* k, const float* v, const int64_t* slot_mapping, int64_t num_tokens,
                  int64_t kv_row_size, void* key_cache, void* value_cache,
                  tensor::DType kv_dtype = tensor::DType::kF32);

// ---- MoE routing (cpu/moe_routing.cpp) ----
// Per token: probabilities = softmax(router_logits[t, :]) over all num_experts, take the top_k
// (ties → lower expert id), renormalise those k weights to sum 1.
// router_logits: [num_tokens, num_experts]; expert_ids, weights: [num_tokens, top_k].
// Reference: llama.cpp llm_build_moe_ffn (softmax gating, norm_w = true), Mixtral.
void TopKRouting(const float* router_logits, int64_t num_tokens, int64_t num_experts, int64_t top_k,
                 int32_t* expert_ids, float* weights);
void TopKRoutingNaive(const float* router_logits, int64_t num_tokens, int64_t num_experts,
                      int64_t top_k, int32_t* expert_ids, float* weights);

// ---- causal conv1d (cpu/causal_conv1d.cpp) ----
// Depthwise causal convolution with SiLU over one sequence (Gated DeltaNet's short convolution,
// QWEN35.md §3.2):
//   out[t, c] = silu(Σ_{i<K} weight[c, i] · x[t − K + 1 + i, c])
// where rows before t = 0 come from conv_state: [channels, K − 1], oldest first (zeros for a new
// sequence). conv_state is then updated to the last K − 1 input rows. x, out: [T, channels]
// (out must not alias x); weight: [channels, K]. Reference: HF causal_conv1d_update / the
// Dao-AILab causal-conv1d kernel (no bias, SiLU).
void CausalConv1dSilu(const float* x, const float* weight, float* conv_state, float* out,
                      int64_t num_tokens, int64_t channels, int64_t kernel_size);
void CausalConv1dSiluNaive(const float* x, const float* weight, float* conv_state, float* out,
                           int64_t num_tokens, int64_t channels, int64_t kernel_size);

// ---- gated delta rule (cpu/gated_delta_rule.cpp) ----
// Shapes of one sequence's Gated DeltaNet recurrence.
struct GatedDeltaRuleDims {
  int64_t num_tokens = 0;   // T
  int64_t num_k_heads = 0;  // Hk: query/key heads
  int64_t num_v_heads = 0;  // Hv, a multiple of Hk: value head j reads key head j / (Hv / Hk)
  int64_t key_dim = 0;      // dk
  int64_t value_dim = 0;    // dv
};
// The recurrence per value head j with key head h = j / (Hv / Hk) (QWEN35.md §3.4; HF
// torch_recurrent_gated_delta_rule; FLA naive_recurrent_gated_delta_rule):
//   S ← exp(g_t) · S;   S ← S + k_t · (β_t (v_t − Sᵀ k_t))ᵀ;   o_t = Sᵀ q_t
// q, k: [T, Hk, dk] (already l2-normalised; q also scaled by dk^-½); v: [T, Hv, dv];
// g: [T, Hv] log decay (≤ 0); beta: [T, Hv] in (0, 1); state: [Hv, dk, dv] f32, read as the
// state before token 0 and overwritten with the state after token T − 1; out: [T, Hv, dv].
// The recurrent form is the decode path (one token per step); the chunked form computes the
// same values chunk_size tokens at a time with matrix products (the WY / "UT" transform:
// QWEN35.md §3.5; FLA chunk_gated_delta_rule), the prefill path. Naive: the recurrence in f64.
void GatedDeltaRuleRecurrent(const float* q, const float* k, const float* v, const float* g,
                             const float* beta, float* state, float* out,
                             const GatedDeltaRuleDims& dims);
void GatedDeltaRuleChunked(const float* q, const float* k, const float* v, const float* g,
                           const float* beta, float* state, float* out,
                           const GatedDeltaRuleDims& dims, int64_t chunk_size);
void GatedDeltaRuleNaive(const float* q, const float* k, const float* v, const float* g,
                         const float* beta, float* state, float* out,
                         const GatedDeltaRuleDims& dims);

}  // namespace tandem::kernels

namespace tandem::kernels {

// ---- threading (cpu/threading.cpp) ----
// Caps the OpenMP threads used by every op (and by oneDNN, which shares the OpenMP runtime).
// num_threads <= 0 keeps the default (all cores, or OMP_NUM_THREADS). Process-wide; call at
// start-up before the first forward. Tip for shared/over-subscribed hosts: OMP_WAIT_POLICY=passive.
void SetNumThreads(int num_threads);
int NumThreads();
// Pins OpenMP thread t (t < num_threads, the master included) to the CPU at index
// (first + t) mod |allowed| of the CPUs this process may run on (sched_getaffinity), so ranks
// given disjoint [first, first + num_threads) never share a core (--additional-config
// enable_cpu_binding). Returns the CPUs used, thread order. Errors: kInvalidArgument when
// first + num_threads exceeds the allowed CPUs (ranks would overlap), kInternal when the kernel
// refuses the affinity.
Result<std::vector<int>> BindThreadsToCores(int first, int num_threads);

}  // namespace tandem::kernels
