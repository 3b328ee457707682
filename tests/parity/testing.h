// Builders shared by the model golden tests: a greedy decoder that drives a Model through the
// paged KV cache the way the worker does (flat batch, chunked prefill, block tables).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace tandem::model::testing {

inline constexpr int32_t kBlockSize = 16;

inline std::unique_ptr<Model> Load(const std::string& path) {
  auto model = LoadModel(path, LoadOptions{});
  EXPECT_TRUE(model.ok()) << path << ": " << model.status().ToString();
  return model.ok() ? std::move(model).value() : nullptr;
}

// One sequence in flight: known tokens (prompt + sampled), how many have K/V, its blocks.
struct Seq {
  std::vector<int32_t> tokens;
  int32_t num_computed = 0;
  int32_t num_to_generate = 0;
  std::vector<int32_t> generated;
  std::vector<int32_t> blocks;
  std::vector<float> logits;          // [rows, vocab] of every computed row when collecting
  int32_t keep_sampled_logits = 0;    // keep the logits of the first this-many sampling steps
  std::vector<float> sampled_logits;  // [kept steps, vocab]
  bool done = false;
};

// Drives the model like the worker does: every step each unfinished sequence schedules up to
// `chunk` new tokens (all of them when 0); the step that reaches its last known token samples
// greedily (argmax, lowest id on a tie). Sampling `stop_token_id` (-1 = none) ends a sequence
// without being appended. Blocks are handed out from the top of the pool downwards so tables
// are not the identity.
class GreedyRunner {
 public:
  GreedyRunner(Model& model, int32_t stop_token_id, int32_t num_blocks = 64)
      : model_(model), stop_token_id_(stop_token_id), next_block_(num_blocks - 1) {
    // Hybrid models (linear-attention layers): one state slot per sequence of a Run, in order.
    const CacheGroups groups = model.cache_groups();
    const bool hybrid = NumLayersOf(groups, CacheGroupKind::kStateSlot) > 0;
    kv_.Allocate(groups, num_blocks, kBlockSize, hybrid ? kMaxStateSlots : 0);
  }
  static constexpr int32_t kMaxStateSlots = 16;

  void Run(std::vector<Seq>& seqs, int32_t chunk, bool collect_all_logits) {
    const int32_t vocab = model_.info().vocab_size;
    while (true) {
      ForwardContext ctx;
      ctx.block_size = kBlockSize;
      ctx.query_start_loc.push_back(0);
      std::vector<Seq*> scheduled;
      std::vector<bool> samples;
      for (Seq& s : seqs) {
        if (s.done) continue;
        if (kv_.num_state_slots > 0) {
          const auto slot = static_cast<int32_t>(&s - seqs.data());
          EXPECT_LT(slot, kv_.num_state_slots) << "more sequences than test state slots";
          if (slot >= kv_.num_state_slots) return;
          ctx.state_slots.push_back(slot);
        }
        const int32_t total = static_cast<int32_t>(s.tokens.size());
        const int32_t end = chunk > 0 ? std::min(total, s.num_computed + chunk) : total;
        while (static_cast<int32_t>(s.blocks.size()) * kBlockSize < end) {
          EXPECT_GT(next_block_, -1) << "test KV pool exhausted";
          if (next_block_ < 0) return;
          s.blocks.push_back(next_block_--);
        }
        const bool sample = end == total;
        for (int32_t pos = s.num_computed; pos < end; ++pos) {
          if (collect_all_logits || (sample && pos == end - 1)) {
            ctx.logits_indices.push_back(ctx.num_tokens());
          }
          ctx.token_ids.push_back(s.tokens[pos]);
          ctx.positions.push_back(pos);
          ctx.slot_mapping.push_back(static_cast<int64_t>(s.blocks[pos / kBlockSize]) * kBlockSize +
                                     pos % kBlockSize);
        }
        ctx.query_start_loc.push_back(ctx.num_tokens());
        ctx.seq_lens.push_back(end);
        ctx.block_tables.push_back(s.blocks);
        scheduled.push_back(&s);
        samples.push_back(sample);
      }
      if (scheduled.empty()) return;
      std::vector<float> logits;
      model_.Forward(ctx, kv_, logits);
      EXPECT_EQ(logits.size(), ctx.logits_indices.size() * vocab);
      size_t logit_row = 0;
      for (size_t i = 0; i < scheduled.size(); ++i) {
        Seq& s = *scheduled[i];
        const int32_t q_len = ctx.query_start_loc[i + 1] - ctx.query_start_loc[i];
        const int32_t rows = collect_all_logits ? q_len : (samples[i] ? 1 : 0);
        if (collect_all_logits) {
          s.logits.insert(s.logits.end(), logits.begin() + logit_row * vocab,
                          logits.begin() + (logit_row + rows) * vocab);
        }
        s.num_computed += q_len;
        if (samples[i]) {
          const float* last = logits.data() + (logit_row + rows - 1) * vocab;
          const int32_t kept = static_cast<int32_t>(s.sampled_logits.size() / vocab);
          if (kept < s.keep_sampled_logits) {
            s.sampled_logits.insert(s.sampled_logits.end(), last, last + vocab);
          }
          const int32_t next = static_cast<int32_t>(std::max_element(last, last + vocab) - last);
          if (next == stop_token_id_) {
            s.done = true;
          } else {
            s.generated.push_back(next);
            s.tokens.push_back(next);
            s.done = static_cast<int32_t>(s.generated.size()) >= s.num_to_generate;
          }
        }
        logit_row += rows;
      }
    }
  }

 private:
  Model& model_;
  KvCache kv_;
  int32_t stop_token_id_;
  int32_t next_block_;
};

// Natural-log softmax of one logits row, in double.
inline std::vector<double> LogSoftmax(const float* logits, int64_t n) {
  const double mx = *std::max_element(logits, logits + n);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(logits[i] - mx);
  const double log_z = mx + std::log(sum);
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = logits[i] - log_z;
  return out;
}

inline float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0.0f;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace tandem::model::testing
