// EngineStack: everything one DP rank's engine core owns — its TP collectives group, the TP
// worker processes (ranks 1..T-1), rank 0's model + KV cache (in this process) and the
// EngineCore scheduling over them. Built by `_engine-core`; torn down in reverse order.
#pragma once

#include <memory>
#include <vector>

#include "apps/engine_core_config.h"
#include "apps/engine_launcher.h"
#include "comm/process_group.h"
#include "core/status.h"
#include "engine/engine_core.h"
#include "model/model.h"
#include "worker/worker.h"

namespace tandem::apps {

struct EngineStack {
  std::vector<std::unique_ptr<ChildProcess>> tp_workers;  // stopped last
  std::unique_ptr<comm::ProcessGroup> tp_group;
  std::unique_ptr<engine::EngineCore> core;
  int32_t num_kv_blocks = 0;
  ~EngineStack();
};

// Loads the model (TP rank 0's shard when tensor_parallel_size > 1, after starting the other
// ranks' processes), sizes the KV cache and builds worker → executor → core.
// Errors name the file, tensor or flag (see model::LoadModel, ComputeKvBlocks).
Result<std::unique_ptr<EngineStack>> BuildEngineStack(const EngineCoreConfig& config);

// Model load options of TP rank `config.tp_rank` (group may be null when TP = 1).
model::LoadOptions MakeLoadOptions(const EngineCoreConfig& config, comm::ProcessGroup* group);

// KV blocks for `model` under the config's memory flags. Errors: kInvalidArgument when not even
// one --max-model-len sequence fits, naming the flags to change.
Result<int32_t> ComputeKvBlocks(const EngineCoreConfig& config, const model::Model& model);

// Worker config of this rank (KV pool, block size, seed, EOS).
worker::WorkerConfig MakeWorkerConfig(const EngineCoreConfig& config, int32_t num_kv_blocks);

}  // namespace tandem::apps
