// TpContext: this rank's place in its tensor-parallel group and the collectives the sharded
// forward pass needs (vLLM's tensor_model_parallel_all_reduce / all_gather). With size 1 every
// call is a no-op, so one forward serves TP=1 and TP>1.
// Layout (vLLM Megatron-style): column-parallel linears (q/k/v, gate/up) split their output rows,
// row-parallel linears (o_proj, down_proj) split their input columns and are followed by ONE
// all-reduce; the embedding and lm_head are vocab-parallel (LocalVocab below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/process_group.h"
#include "model/layers/expert_parallel.h"

namespace tandem::model {

struct TpContext {
  int32_t rank = 0;                     // TP rank, 0 … size-1
  int32_t size = 1;                     // --tensor-parallel-size
  comm::ProcessGroup* group = nullptr;  // non-owning; required when size > 1
  // Expert parallel (--enable-expert-parallel), carried with the TP context so every loader
  // that shards by TP also places experts; disabled (size 1) by default.
  EpContext ep;

  // In place: x[i] = Σ over TP ranks. x: [count] f32. A failed collective (a peer gone, the
  // group's timeout) aborts: the step cannot be finished without the peers' partial sums.
  // Thread: the worker thread, all ranks in the same order.
  void AllReduceSum(float* x, size_t count) const;
  // out: [size, count] f32 with rank r's `in` at out + r·count. Aborts as AllReduceSum.
  void AllGather(const float* in, size_t count, float* out) const;
};

// The slice of the vocabulary a TP rank holds (vLLM VocabParallelEmbedding): rows
// [begin, begin + count) of the [vocab, hidden] table, padded with zero rows to
// `padded` = ceil(vocab / tp) so every rank's slice has the same size (all-gather needs it).
struct LocalVocab {
  int64_t begin = 0;
  int64_t count = 0;
  int64_t padded = 0;
};
LocalVocab LocalVocabOf(int64_t vocab_size, const TpContext& tp);

// Query/KV heads on this rank (vLLM QKVParallelLinear): query heads are split; KV heads are split
// when num_kv_heads >= tp.size, else replicated so that each rank holds the one KV head its
// query heads use. The counts must divide (checked with the weights, see weight_shard.h).
struct LocalHeads {
  int32_t num_heads = 0;     // query heads on this rank
  int32_t num_kv_heads = 0;  // KV heads on this rank (1 when replicated)
};
LocalHeads LocalHeadsOf(int32_t num_heads, int32_t num_kv_heads, const TpContext& tp);

// Vocab-parallel logits: local = this rank's [rows, vocab.padded] f32 slice of the logits;
// gathers every rank's slice and writes the full [rows, vocab_size] f32 row-major logits
// (padding dropped) into `logits` on every rank. `scratch` is reused between calls.
void GatherVocabLogits(const TpContext& tp, const float* local, int64_t rows, int64_t vocab_size,
                       std::vector<float>& scratch, std::vector<float>& logits);

}  // namespace tandem::model
