// Worker: one TP rank's executor of step plans. Owns the ModelRunner (model + KV cache +
// request states + sampler). The in-process executor calls it directly (TP = 1); a
// multi-process executor wraps it in a loop that reads plans from ipc/.
#pragma once

#include <cstdint>
#include <memory>

#include "core/status.h"
#include "model/model.h"
#include "protocol/speculative_config.h"
#include "protocol/step_plan.h"
#include "worker/model_runner.h"

namespace tandem::worker {

struct WorkerConfig {
  int32_t num_kv_blocks = 0;  // KV blocks in the pool (ComputeNumKvBlocks, kv_budget.h)
  int32_t block_size = 16;    // tokens per KV block (--block-size)
  uint64_t seed = 0;          // engine seed (--seed) for unseeded requests
  int32_t eos_token_id = -1;  // masked below min_tokens; -1 = unknown
  protocol::SpeculativeConfig speculative;  // --speculative-config; off by default
  int32_t max_num_seqs = 256;  // running sequences at most: the state slots of a hybrid model
  // The tokenizer's vocabulary for structured outputs, loaded on first use; null = none (a
  // constrained request then aborts the worker: only tests build workers without one).
  TokenVocabularyLoader token_vocabulary_loader;
};

class Worker {
 public:
  Worker(std::unique_ptr<model::Model> model, const WorkerConfig& config);

  // Validates `plan` against this worker's state, then executes it (ModelRunner::Execute).
  // Errors: kInternal when the plan does not fit the worker's state (unknown request,
  // tokens beyond the request's list or its block table, block id outside the pool); the
  // state is unchanged then. Thread: one caller at a time.
  Result<protocol::StepResult> ExecuteStep(const protocol::StepPlan& plan);

  const model::ModelInfo& model_info() const { return runner_.model_info(); }
  int32_t num_kv_blocks() const { return runner_.num_blocks(); }
  int32_t block_size() const { return runner_.block_size(); }

 private:
  ModelRunner runner_;
};

}  // namespace tandem::worker
