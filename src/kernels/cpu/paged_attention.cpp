// Paged attention over a block table, for decode and (chunked) prefill rows alike.
// Invariant: the q_len query rows of a sequence are its last q_len tokens, and their K/V are
// already in the cache (written by WriteKvCache before this call), so query row j attends to
// context positions [0, seq_len - q_len + j] — causal within the chunk, full over the past.
// Sequences with >= 8 query rows (prefill) run blocked: per (kv head, 64 query rows) the scores
// S = Q·Kᵀ and the output softmax(S)·V are two oneDNN matmuls over the causal context gathered
// to f32 (FlashAttention's blocking without its online softmax: a block's whole score row is
// kept, bounded by 64 × context floats). Rows of other sequences: one dot/axpy per position.
// Reference: vLLM paged_attention_v1 (decode) and flash-attn varlen semantics (prefill);
// GQA mapping as HF repeat_kv: query head h reads kv head h / (num_heads / num_kv_heads).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.h"
#include "kernels/cpu/simd.h"
#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

// Position of each query row and the sequence it belongs to.
void MapRows(const int32_t* query_start_loc, const int32_t* seq_lens, int32_t num_seqs,
             std::vector<int32_t>& row_seq, std::vector<int32_t>& row_pos) {
  const int32_t num_tokens = query_start_loc[num_seqs];
  row_seq.resize(num_tokens);
  row_pos.resize(num_tokens);
  for (int32_t s = 0; s < num_seqs; ++s) {
    const int32_t begin = query_start_loc[s];
    const int32_t q_len = query_start_loc[s + 1] - begin;
    TANDEM_CHECK(q_len <= seq_lens[s])
        << "sequence " << s << " has " << q_len << " query rows but seq_len " << seq_lens[s];
    for (int32_t j = 0; j < q_len; ++j) {
      row_seq[begin + j] = s;
      row_pos[begin + j] = seq_lens[s] - q_len + j;
    }
  }
}

}  // namespace

namespace {

// Query rows of one sequence at or above this count go through the blocked (GEMM) path.
constexpr int32_t kBlockedMinRows = 8;
// Query rows per GEMM block: S = [rows, context] f32 per head stays in L2 for contexts of a few
// thousand tokens.
constexpr int32_t kQueryBlock = 64;

// Context positions [0, len) of kv head kvh of a sequence, widened to f32: k_out [len, hd] and
// v_t [hd, len] (V transposed, the weight layout of O = P · V as a Matmul).
void GatherContext(const unsigned char* kc, const unsigned char* vc,
                   const std::vector<int32_t>& table, const PagedAttentionParams& p, int64_t kvh,
                   int64_t len, std::vector<float>& k_out, std::vector<float>& v_t,
                   std::vector<float>& row) {
  const int64_t hd = p.head_dim;
  const int64_t kv_stride = static_cast<int64_t>(p.num_kv_heads) * hd;
  const size_t elem = tensor::DTypeSize(p.kv_dtype);
  k_out.resize(len * hd);
  v_t.resize(hd * len);
  row.resize(hd);
  for (int64_t pos = 0; pos < len; ++pos) {
    const int64_t slot =
        static_cast<int64_t>(table[pos / p.block_size]) * p.block_size + pos % p.block_size;
    const size_t offset = (slot * kv_stride + kvh * hd) * elem;
    WidenToF32(kc + offset, p.kv_dtype, &k_out[pos * hd], hd);
    WidenToF32(vc + offset, p.kv_dtype, row.data(), hd);
    for (int64_t d = 0; d < hd; ++d) v_t[d * len + pos] = row[d];
  }
}

// The query rows [begin, begin + q_len) of one sequence of length seq_len (its last q_len
// tokens), blocked: per (kv head, block of kQueryBlock rows) S = Q · Kᵀ and O = softmax(S) · V are
// two matmuls over the block's causal context; tasks run in parallel, each matmul on its thread.
void AttendBlocked(const float* q, const unsigned char* kc, const unsigned char* vc,
                   const std::vector<int32_t>& table, int64_t begin, int64_t q_len, int64_t seq_len,
                   const PagedAttentionParams& p, float* out) {
  const int64_t hd = p.head_dim, heads = p.num_heads;
  const int64_t group = p.num_heads / p.num_kv_heads;
  const int64_t blocks = (q_len + kQueryBlock - 1) / kQueryBlock;
  const int64_t tasks = p.num_kv_heads * blocks;
  TANDEM_CHECK(static_cast<int64_t>(table.size()) * p.block_size >= seq_len)
      << "block table has " << table.size() << " blocks, too few for " << seq_len << " tokens";
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t kvh = task / blocks, b = task % blocks;
    const int64_t j0 = b * kQueryBlock, j1 = std::min(q_len, j0 + kQueryBlock), nq = j1 - j0;
    const int64_t first_pos = seq_len - q_len;  // position of query row 0
    const int64_t ctx = first_pos + j1;         // keys 0 … ctx-1 cover the block's last row
    thread_local std::vector<float> k_ctx, v_t, row, q_blk, scores, o_blk;
    GatherContext(kc, vc, table, p, kvh, ctx, k_ctx, v_t, row);
    q_blk.resize(nq * hd);
    scores.resize(nq * ctx);
    o_blk.resize(nq * hd);
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
      for (int64_t j = 0; j < nq; ++j) {
        const float* src = q + ((begin + j0 + j) * heads + h) * hd;
        std::copy(src, src + hd, &q_blk[j * hd]);
      }
      Matmul(q_blk.data(), k_ctx.data(), scores.data(), nq, ctx, hd);
      for (int64_t j = 0; j < nq; ++j) {
        float* srow = &scores[j * ctx];
        const int64_t visible = first_pos + j0 + j + 1;  // causal: keys 0 … its own position
        float mx = -INFINITY;
        for (int64_t c = 0; c < visible; ++c) mx = std::max(mx, srow[c] *= p.scale);
        float sum = 0.0f;
        for (int64_t c = 0; c < visible; ++c) sum += (srow[c] = std::exp(srow[c] - mx));
        const float inv = 1.0f / sum;
        for (int64_t c = 0; c < visible; ++c) srow[c] *= inv;
        std::fill(srow + visible, srow + ctx, 0.0f);
      }
      Matmul(scores.data(), v_t.data(), o_blk.data(), nq, hd, ctx);
      for (int64_t j = 0; j < nq; ++j) {
        std::copy(&o_blk[j * hd], &o_blk[j * hd] + hd, out + ((begin + j0 + j) * heads + h) * hd);
      }
    }
  }
}

}  // namespace

void PagedAttention(const float* q, const void* key_cache, const void* value_cache,
                    const int32_t* query_start_loc, const int32_t* seq_lens, int32_t num_seqs,
                    const std::vector<std::vector<int32_t>>& block_tables,
                    const PagedAttentionParams& p, float* out) {
  TANDEM_CHECK(p.num_kv_heads > 0 && p.num_heads % p.num_kv_heads == 0)
      << "num_heads " << p.num_heads << " must be a multiple of num_kv_heads " << p.num_kv_heads;
  const auto* kc = static_cast<const unsigned char*>(key_cache);
  const auto* vc = static_cast<const unsigned char*>(value_cache);
  const size_t elem = tensor::DTypeSize(p.kv_dtype);
  thread_local std::vector<int32_t> row_seq;
  thread_local std::vector<int32_t> row_pos;
  MapRows(query_start_loc, seq_lens, num_seqs, row_seq, row_pos);
  // Sequences with many query rows (prefill chunks): the blocked GEMM path. The rows of the
  // others (decode, short verify chunks) go through the per-row loop below.
  thread_local std::vector<int32_t> rows;
  rows.clear();
  for (int32_t s = 0; s < num_seqs; ++s) {
    const int32_t begin = query_start_loc[s], q_len = query_start_loc[s + 1] - begin;
    if (q_len >= kBlockedMinRows) {
      AttendBlocked(q, kc, vc, block_tables[s], begin, q_len, seq_lens[s], p, out);
    } else {
      for (int32_t j = 0; j < q_len; ++j) rows.push_back(begin + j);
    }
  }
  const int64_t group = p.num_heads / p.num_kv_heads;
  const int64_t hd = p.head_dim;
  const int64_t kv_stride = static_cast<int64_t>(p.num_kv_heads) * hd;  // elements per slot
  // Raw pointers: inside the parallel region a thread_local name is that thread's own vector.
  const int32_t* seq_of = row_seq.data();
  const int32_t* pos_of = row_pos.data();
  const int32_t* row_of = rows.data();
  const int64_t work = static_cast<int64_t>(rows.size()) * p.num_heads;
  // Parallel only when there is real work (a fork/join costs ~µs, more on a busy machine).
  int64_t flops = 0;
  for (int32_t t : rows) flops += (row_pos[t] + 1) * 4 * hd * p.num_heads;
#pragma omp parallel for schedule(dynamic, 4) if (flops >= (1 << 18))
  for (int64_t w = 0; w < work; ++w) {
    const int64_t t = row_of[w / p.num_heads];
    const int64_t h = w % p.num_heads;
    const int64_t kvh = h / group;
    const std::vector<int32_t>& table = block_tables[seq_of[t]];
    const int64_t ctx_len = pos_of[t] + 1;
    TANDEM_CHECK(static_cast<int64_t>(table.size()) * p.block_size >= ctx_len)
        << "block table of sequence " << seq_of[t] << " has " << table.size()
        << " blocks, too few for " << ctx_len << " tokens";
    thread_local std::vector<float> scores;
    scores.resize(ctx_len);
    const float* qr = q + (t * p.num_heads + h) * hd;
    float mx = -INFINITY;
    for (int64_t pos = 0; pos < ctx_len; ++pos) {
      const int64_t slot =
          static_cast<int64_t>(table[pos / p.block_size]) * p.block_size + pos % p.block_size;
      const unsigned char* kr = kc + (slot * kv_stride + kvh * hd) * elem;
      scores[pos] = DotWidened(qr, kr, p.kv_dtype, hd) * p.scale;
      mx = std::max(mx, scores[pos]);
    }
    float sum = 0.0f;
    for (int64_t pos = 0; pos < ctx_len; ++pos) {
      scores[pos] = std::exp(scores[pos] - mx);
      sum += scores[pos];
    }
    const float inv = 1.0f / sum;
    float* o = out + (t * p.num_heads + h) * hd;
    std::fill(o, o + hd, 0.0f);
    for (int64_t pos = 0; pos < ctx_len; ++pos) {
      const int64_t slot =
          static_cast<int64_t>(table[pos / p.block_size]) * p.block_size + pos % p.block_size;
      const unsigned char* vr = vc + (slot * kv_stride + kvh * hd) * elem;
      AxpyWidened(scores[pos] * inv, vr, p.kv_dtype, o, hd);
    }
  }
}

void PagedAttentionNaive(const float* q, const void* key_cache_raw, const void* value_cache_raw,
                         const int32_t* query_start_loc, const int32_t* seq_lens, int32_t num_seqs,
                         const std::vector<std::vector<int32_t>>& block_tables,
                         const PagedAttentionParams& p, float* out) {
  const int64_t hd = p.head_dim;
  // Element i of a cache, widened by the reference conversions of tensor/dtype.h.
  auto at = [&](const void* cache, int64_t i) -> double {
    if (p.kv_dtype == tensor::DType::kF32) return static_cast<const float*>(cache)[i];
    const uint16_t h = static_cast<const uint16_t*>(cache)[i];
    return p.kv_dtype == tensor::DType::kF16 ? tensor::HalfToFloat(h) : tensor::BFloat16ToFloat(h);
  };
  const int64_t kv_stride = static_cast<int64_t>(p.num_kv_heads) * hd;
  for (int32_t s = 0; s < num_seqs; ++s) {
    // Gather this sequence's K/V into contiguous [seq_len, num_kv_heads, hd].
    const int64_t len = seq_lens[s];
    std::vector<double> k(len * kv_stride), v(len * kv_stride);
    for (int64_t pos = 0; pos < len; ++pos) {
      const int64_t slot =
          static_cast<int64_t>(block_tables[s][pos / p.block_size]) * p.block_size +
          pos % p.block_size;
      for (int64_t i = 0; i < kv_stride; ++i) {
        k[pos * kv_stride + i] = at(key_cache_raw, slot * kv_stride + i);
        v[pos * kv_stride + i] = at(value_cache_raw, slot * kv_stride + i);
      }
    }
    const int32_t begin = query_start_loc[s];
    const int32_t q_len = query_start_loc[s + 1] - begin;
    for (int32_t j = 0; j < q_len; ++j) {
      const int64_t t = begin + j;
      const int64_t last = len - q_len + j;
      for (int64_t h = 0; h < p.num_heads; ++h) {
        const int64_t kvh = h * p.num_kv_heads / p.num_heads;
        std::vector<double> w(last + 1);
        double mx = -INFINITY, sum = 0.0;
        for (int64_t pos = 0; pos <= last; ++pos) {
          double dot = 0.0;
          for (int64_t d = 0; d < hd; ++d)
            dot += q[(t * p.num_heads + h) * hd + d] * k[pos * kv_stride + kvh * hd + d];
          w[pos] = dot * p.scale;
          mx = std::max(mx, w[pos]);
        }
        for (double& x : w) sum += (x = std::exp(x - mx));
        for (int64_t d = 0; d < hd; ++d) {
          double acc = 0.0;
          for (int64_t pos = 0; pos <= last; ++pos)
            acc += w[pos] / sum * v[pos * kv_stride + kvh * hd + d];
          out[(t * p.num_heads + h) * hd + d] = static_cast<float>(acc);
        }
      }
    }
  }
}

void WriteKvCache(const float* k, const float* v, const int64_t* slot_mapping, int64_t num_tokens,
                  int64_t kv_row_size, void* key_cache, void* value_cache, tensor::DType kv_dtype) {
  for (int64_t t = 0; t < num_tokens; ++t) {
    const int64_t slot = slot_mapping[t];
    if (slot < 0) continue;
    const float* kr = k + t * kv_row_size;
    const float* vr = v + t * kv_row_size;
    if (kv_dtype == tensor::DType::kF32) {
      std::copy(kr, kr + kv_row_size, static_cast<float*>(key_cache) + slot * kv_row_size);
      std::copy(vr, vr + kv_row_size, static_cast<float*>(value_cache) + slot * kv_row_size);
      continue;
    }
    TANDEM_CHECK(kv_dtype == tensor::DType::kF16 || kv_dtype == tensor::DType::kBF16)
        << "KV cache dtype " << tensor::DTypeName(kv_dtype) << " has no kernel";
    uint16_t* kd = static_cast<uint16_t*>(key_cache) + slot * kv_row_size;
    uint16_t* vd = static_cast<uint16_t*>(value_cache) + slot * kv_row_size;
    const bool half = kv_dtype == tensor::DType::kF16;
    for (int64_t i = 0; i < kv_row_size; ++i) {
      kd[i] = half ? tensor::FloatToHalf(kr[i]) : tensor::FloatToBFloat16(kr[i]);
      vd[i] = half ? tensor::FloatToHalf(vr[i]) : tensor::FloatToBFloat16(vr[i]);
    }
  }
}

}  // namespace tandem::kernels
