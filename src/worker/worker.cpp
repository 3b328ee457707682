#include "worker/worker.h"

namespace tandem::worker {

Worker::Worker(std::unique_ptr<model::Model> model, const WorkerConfig& config)
    : runner_(std::move(model), config.num_kv_blocks, config.block_size, config.seed,
              config.speculative, config.max_num_seqs) {
  runner_.set_eos_token_id(config.eos_token_id);
  runner_.set_token_vocabulary_loader(config.token_vocabulary_loader);
}

Result<protocol::StepResult> Worker::ExecuteStep(const protocol::StepPlan& plan) {
  TANDEM_RETURN_IF_ERROR(runner_.ValidatePlan(plan));
  return runner_.Execute(plan);
}

}  // namespace tandem::worker
