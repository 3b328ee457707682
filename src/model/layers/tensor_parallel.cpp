#include "model/layers/tensor_parallel.h"

#include <algorithm>

#include "core/check.h"
#include "core/step_profile.h"

namespace tandem::model {

void TpContext::AllReduceSum(float* x, size_t count) const {
  if (size == 1) return;
  const core::ScopedPhase phase(core::StepPhase::kCollective);
  const Status s = group->AllReduceSum(x, count);
  TANDEM_CHECK(s.ok()) << "TP rank " << rank << "/" << size << ": all-reduce of " << count
                       << " floats failed: " << s.ToString();
}

void TpContext::AllGather(const float* in, size_t count, float* out) const {
  if (size == 1) {
    std::copy(in, in + count, out);
    return;
  }
  const core::ScopedPhase phase(core::StepPhase::kCollective);
  const Status s = group->AllGather(in, count, out);
  TANDEM_CHECK(s.ok()) << "TP rank " << rank << "/" << size << ": all-gather of " << count
                       << " floats failed: " << s.ToString();
}

LocalVocab LocalVocabOf(int64_t vocab_size, const TpContext& tp) {
  LocalVocab v;
  v.padded = (vocab_size + tp.size - 1) / tp.size;
  v.begin = std::min<int64_t>(vocab_size, tp.rank * v.padded);
  v.count = std::min<int64_t>(vocab_size, v.begin + v.padded) - v.begin;
  return v;
}

LocalHeads LocalHeadsOf(int32_t num_heads, int32_t num_kv_heads, const TpContext& tp) {
  return LocalHeads{num_heads / tp.size, num_kv_heads >= tp.size ? num_kv_heads / tp.size : 1};
}

void GatherVocabLogits(const TpContext& tp, const float* local, int64_t rows, int64_t vocab_size,
                       std::vector<float>& scratch, std::vector<float>& logits) {
  const int64_t per = LocalVocabOf(vocab_size, tp).padded;
  logits.resize(rows * vocab_size);
  if (tp.size == 1) {
    std::copy(local, local + rows * per, logits.begin());
    return;
  }
  scratch.resize(static_cast<size_t>(tp.size) * rows * per);
  tp.AllGather(local, static_cast<size_t>(rows * per), scratch.data());
  // scratch: [tp, rows, per] → logits: [rows, vocab], rank r's slice at columns r·per.
  for (int32_t r = 0; r < tp.size; ++r) {
    const int64_t begin = r * per;
    const int64_t count = std::max<int64_t>(0, std::min(per, vocab_size - begin));
    for (int64_t i = 0; i < rows; ++i) {
      const float* src = &scratch[(r * rows + i) * per];
      std::copy(src, src + count, &logits[i * vocab_size + begin]);
    }
  }
}

}  // namespace tandem::model
