// EngineStack: everything one DP rank's engine core owns — its TP collectives group, the TP
// worker processes (ranks 1..T-1), rank 0's model + KV cache (in this process) and the
// EngineCore scheduling over them. Built by `_engine-core`; torn down in reverse order.
#pragma once

#include <atomic>
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

// Collectives groups of expert parallel (--enable-expert-parallel with DP × TP > 1).
struct ExpertParallelGroups {
  // Every DP × TP rank, rank dp_rank · tp_size + tp_rank. With DP = 1 it is the TP group
  // itself (`ep` then stays null and `ep_view` points at the TP group).
  std::unique_ptr<comm::ProcessGroup> ep;
  comm::ProcessGroup* ep_view = nullptr;
  // The DP ranks' engine cores (TP rank 0 only, DP > 1): the wave syncs.
  std::unique_ptr<comm::ProcessGroup> dp;
};

struct EngineStack {
  std::vector<std::unique_ptr<ChildProcess>> tp_workers;  // stopped last
  // Set when the stack is torn down: a TP worker ending before that is fatal to this rank.
  std::shared_ptr<std::atomic<bool>> stopping = std::make_shared<std::atomic<bool>>(false);
  std::unique_ptr<comm::ProcessGroup> tp_group;
  ExpertParallelGroups expert_parallel;
  std::unique_ptr<engine::EngineCore> core;
  int32_t num_kv_blocks = 0;
  ~EngineStack();
};

// True when the config asks for expert parallel over more than one rank.
bool ExpertParallelActive(const EngineCoreConfig& config);

// Joins the EP group (and, on TP rank 0 with DP > 1, the DP group) this rank belongs to;
// `tp_group` is this DP rank's TP group (null when TP = 1). Blocks until every member joined.
// Errors: kUnavailable naming the group when a member did not join within the deadline.
Result<ExpertParallelGroups> JoinExpertParallelGroups(const EngineCoreConfig& config,
                                                      comm::ProcessGroup* tp_group);

// Loads the model (TP rank 0's shard when tensor_parallel_size > 1, after starting the other
// ranks' processes), sizes the KV cache and builds worker → executor → core.
// Errors name the file, tensor or flag (see model::LoadModel, ComputeKvBlocks).
Result<std::unique_ptr<EngineStack>> BuildEngineStack(const EngineCoreConfig& config);

// Model load options of TP rank `config.tp_rank` (group may be null when TP = 1; ep_group null
// when expert parallel is off).
model::LoadOptions MakeLoadOptions(const EngineCoreConfig& config, comm::ProcessGroup* group,
                                   comm::ProcessGroup* ep_group = nullptr);

// KV blocks for `model` under the config's memory flags. Errors: kInvalidArgument when not even
// one --max-model-len sequence fits, naming the flags to change.
Result<int32_t> ComputeKvBlocks(const EngineCoreConfig& config, const model::Model& model);

// Worker config of this rank (KV pool, block size, seed, EOS).
worker::WorkerConfig MakeWorkerConfig(const EngineCoreConfig& config, int32_t num_kv_blocks);

}  // namespace tandem::apps
