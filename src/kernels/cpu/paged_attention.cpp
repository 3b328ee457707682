// Paged attention over a block table, for decode and (chunked) prefill rows alike.
// Invariant: the q_len query rows of a sequence are its last q_len tokens, and their K/V are
// already in the cache (written by WriteKvCache before this call), so query row j attends to
// context positions [0, seq_len - q_len + j] — causal within the chunk, full over the past.
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
    TANDEM_CHECK(q_len <= seq_lens[s]) << "sequence " << s << " has " << q_len
                                       << " query rows but seq_len " << seq_lens[s];
    for (int32_t j = 0; j < q_len; ++j) {
      row_seq[begin + j] = s;
      row_pos[begin + j] = seq_lens[s] - q_len + j;
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
  const int64_t num_tokens = query_start_loc[num_seqs];
  const int64_t group = p.num_heads / p.num_kv_heads;
  const int64_t hd = p.head_dim;
  const int64_t kv_stride = static_cast<int64_t>(p.num_kv_heads) * hd;  // floats per slot
  const int32_t* seq_of = row_seq.data();
  const int32_t* pos_of = row_pos.data();
  const int64_t work = num_tokens * p.num_heads;
  // Parallel only when there is real work (a fork/join costs ~µs, more on a busy machine).
  int64_t flops = 0;
  for (int64_t t = 0; t < num_tokens; ++t) flops += (row_pos[t] + 1) * 4 * hd * p.num_heads;
#pragma omp parallel for schedule(dynamic, 4) if (flops >= (1 << 18))
  for (int64_t w = 0; w < work; ++w) {
    const int64_t t = w / p.num_heads;
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
      const int64_t slot = static_cast<int64_t>(table[pos / p.block_size]) * p.block_size +
                           pos % p.block_size;
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
      const int64_t slot = static_cast<int64_t>(table[pos / p.block_size]) * p.block_size +
                           pos % p.block_size;
      const unsigned char* vr = vc + (slot * kv_stride + kvh * hd) * elem;
      AxpyWidened(scores[pos] * inv, vr, p.kv_dtype, o, hd);
    }
  }
}

void PagedAttentionNaive(const float* q, const void* key_cache_raw, const void* value_cache_raw,
                         const int32_t* query_start_loc, const int32_t* seq_lens,
                         int32_t num_seqs, const std::vector<std::vector<int32_t>>& block_tables,
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
      const int64_t slot = static_cast<int64_t>(block_tables[s][pos / p.block_size]) * p.block_size +
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
          for (int64_t d = 0; d < hd; ++d) dot += q[(t * p.num_heads + h) * hd + d] * k[pos * kv_stride + kvh * hd + d];
          w[pos] = dot * p.scale;
          mx = std::max(mx, w[pos]);
        }
        for (double& x : w) sum += (x = std::exp(x - mx));
        for (int64_t d = 0; d < hd; ++d) {
          double acc = 0.0;
          for (int64_t pos = 0; pos <= last; ++pos) acc += w[pos] / sum * v[pos * kv_stride + kvh * hd + d];
          out[(t * p.num_heads + h) * hd + d] = static_cast<float>(acc);
        }
      }
    }
  }
}

void WriteKvCache(const float* k, const float* v, const int64_t* slot_mapping, int64_t num_tokens,
                  int64_t kv_row_size, void* key_cache, void* value_cache,
                  tensor::DType kv_dtype) {
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
