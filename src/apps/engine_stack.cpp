#include "apps/engine_stack.h"
#include "apps/speculative_flag.h"
#include "apps/token_vocabulary_loader.h"

#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "comm/shm_segment.h"
#include "core/logging.h"
#include "executor/in_process_executor.h"
#include "executor/multiproc_executor.h"
#include "ipc/ipc_path.h"
#include "worker/kv_budget.h"
#include "worker/worker.h"

namespace tandem::apps {
namespace {

Result<engine::SchedulerConfig> MakeSchedulerConfig(const EngineCoreConfig& cfg, int32_t num_blocks,
                                                    bool has_state) {
  engine::SchedulerConfig sched;
  sched.max_num_seqs = cfg.max_num_seqs;
  sched.max_num_batched_tokens = cfg.max_num_batched_tokens;
  sched.max_model_len = cfg.max_model_len;
  sched.block_size = cfg.block_size;
  sched.num_gpu_blocks = num_blocks;
  sched.enable_prefix_caching = cfg.enable_prefix_caching;
  TANDEM_ASSIGN_OR_RETURN(sched.policy, engine::ParseSchedulingPolicy(cfg.scheduling_policy));
  sched.num_state_slots = has_state ? cfg.max_num_seqs : 0;  // worker.h: one per running seq
  sched.num_speculative_tokens = cfg.num_speculative_tokens;
  if (cfg.num_speculative_tokens > 0 && cfg.spec_method != "ngram") {
    sched.num_lookahead_tokens = cfg.num_speculative_tokens;  // MTP's draft rows
  }
  TANDEM_RETURN_IF_ERROR(sched.Validate());
  return sched;
}

void LogModel(const EngineCoreConfig& cfg, const model::Model& model, int32_t num_blocks) {
  const model::ModelInfo& info = model.info();
  TLOG_INFO("model loaded: {} layers, hidden {}, vocab {}, {:.1f} MiB of weights{}",
            info.num_layers, info.hidden_size, info.vocab_size,
            info.weight_bytes / (1024.0 * 1024.0),
            cfg.tensor_parallel_size > 1
                ? " (TP rank 0 of " + std::to_string(cfg.tensor_parallel_size) + ")"
                : "");
  const model::CacheGroups groups = model.cache_groups();
  TLOG_INFO(
      "KV cache: {} blocks of {} tokens ({} tokens, {:.1f} MiB, {} from --kv-cache-dtype "
      "{})",
      num_blocks, cfg.block_size, int64_t{num_blocks} * cfg.block_size,
      num_blocks * model::BytesPerBlock(groups, cfg.block_size) / 1048576.0,
      tensor::DTypeName(model::KvDtypeOf(groups)), cfg.kv_cache_dtype);
}

// --enable-expert-parallel as applied: each MoE layer's experts split over all DP x TP ranks
// (LocalExpertsOf: the first num_experts % ranks ranks hold one more).
void LogExpertParallel(const EngineCoreConfig& cfg, const model::ModelInfo& info) {
  const int ranks = cfg.dp_size * cfg.tensor_parallel_size;
  if (info.num_experts == 0) {
    TLOG_INFO("--enable-expert-parallel has no effect: the model has no experts (dense)");
  } else if (ranks == 1) {
    TLOG_INFO(
        "--enable-expert-parallel: one rank (DP 1 x TP 1) holds all {} experts of each "
        "MoE layer; nothing to split",
        info.num_experts);
  } else {
    const int fewest = info.num_experts / ranks;
    TLOG_INFO(
        "--enable-expert-parallel: the {} experts of each MoE layer split over {} ranks "
        "(DP {} x TP {}), {} per rank",
        info.num_experts, ranks, cfg.dp_size, cfg.tensor_parallel_size,
        info.num_experts % ranks == 0
            ? std::to_string(fewest)
            : std::to_string(fewest) + " or " + std::to_string(fewest + 1));
  }
}

}  // namespace

worker::WorkerConfig MakeWorkerConfig(const EngineCoreConfig& cfg, int32_t num_blocks) {
  worker::WorkerConfig w;
  w.num_kv_blocks = num_blocks;
  w.block_size = cfg.block_size;
  // Requests without a seed draw from streams derived from this seed and a per-rank counter;
  // mixing in the DP rank keeps two ranks from replaying the same "random" streams (and n > 1
  // choices spread over ranks from coming out identical). Rank 0 keeps the plain seed.
  w.seed = static_cast<uint64_t>(cfg.seed) ^
           (static_cast<uint64_t>(cfg.dp_rank) * 0x9E3779B97F4A7C15ULL);
  w.eos_token_id = cfg.eos_token_id;
  w.speculative = SpeculativeOf(cfg);
  w.max_num_seqs = cfg.max_num_seqs;
  w.token_vocabulary_loader = MakeTokenVocabularyLoader(cfg);
  return w;
}

EngineStack::~EngineStack() {
  stopping->store(true);
  core.reset();  // the executor tells the TP workers to shut down
  for (auto& w : tp_workers) w->Stop(2.0);
}

model::LoadOptions MakeLoadOptions(const EngineCoreConfig& cfg, comm::ProcessGroup* group,
                                   comm::ProcessGroup* ep_group) {
  model::LoadOptions load;
  load.dtype = cfg.dtype;
  load.kv_cache_dtype = cfg.kv_cache_dtype;
  load.device = cfg.device;
  load.quantization = cfg.quantization;
  load.q8_0_dot = cfg.q8_0_dot;
  load.profile_steps = cfg.profile_steps;
  load.num_threads = cfg.num_threads;
  if (cfg.enable_cpu_binding) {
    load.cpu_binding_slot = cfg.dp_local_rank * cfg.tensor_parallel_size + cfg.tp_rank;
  }
  load.tp_rank = cfg.tp_rank;
  load.tp_size = cfg.tensor_parallel_size;
  load.tp_group = group;
  load.load_mtp = cfg.num_speculative_tokens > 0 && cfg.spec_method != "ngram";
  if (ep_group != nullptr) {
    load.ep_group = ep_group;
    load.ep_rank = ep_group->rank();
    load.ep_size = ep_group->size();
  }
  return load;
}

bool ExpertParallelActive(const EngineCoreConfig& cfg) {
  return cfg.enable_expert_parallel && cfg.dp_size * cfg.tensor_parallel_size > 1;
}

Result<ExpertParallelGroups> JoinExpertParallelGroups(const EngineCoreConfig& cfg,
                                                      comm::ProcessGroup* tp_group) {
  ExpertParallelGroups groups;
  if (!ExpertParallelActive(cfg)) return groups;
  if (cfg.dp_size == 1) {
    groups.ep_view = tp_group;  // the whole world is this DP rank's TP group
    return groups;
  }
  if (cfg.group_backend.empty() || cfg.group_name.empty()) {
    return InvalidArgument("--enable-expert-parallel with --data-parallel-size " +
                           std::to_string(cfg.dp_size) +
                           ": the head sent no collectives group for the DP ranks");
  }
  comm::GroupSpec ep;
  ep.backend = cfg.group_backend;
  ep.name = cfg.group_name + "-ep";
  ep.rank = cfg.dp_rank * cfg.tensor_parallel_size + cfg.tp_rank;
  ep.size = cfg.dp_size * cfg.tensor_parallel_size;
  ep.rendezvous = cfg.ep_rendezvous;
  ep.timeout_s = cfg.ready_timeout_s;
  TANDEM_ASSIGN_OR_RETURN(groups.ep, comm::CreateProcessGroup(ep));
  groups.ep_view = groups.ep.get();
  if (cfg.tp_rank == 0) {
    comm::GroupSpec dp = ep;
    dp.name = cfg.group_name + "-dp";
    dp.rank = cfg.dp_rank;
    dp.size = cfg.dp_size;
    dp.rendezvous = cfg.dp_rendezvous;
    TANDEM_ASSIGN_OR_RETURN(groups.dp, comm::CreateProcessGroup(dp));
  }
  return groups;
}

Result<int32_t> ComputeKvBlocks(const EngineCoreConfig& cfg, const model::Model& model) {
  std::optional<size_t> kv_bytes;
  if (cfg.kv_cache_memory_bytes > 0) kv_bytes = static_cast<size_t>(cfg.kv_cache_memory_bytes);
  const std::optional<size_t> room = worker::ReadAddressSpaceRoomBytes();
  if (kv_bytes && room && *kv_bytes + worker::kActivationReserveBytes > *room) {
    return InvalidArgument(
        "--kv-cache-memory-bytes " + std::to_string(*kv_bytes) +
        " is more than this process may still map under its address-space limit (ulimit -v): " +
        std::to_string(*room) + " bytes, " + std::to_string(worker::kActivationReserveBytes) +
        " of them kept for activations; lower it or raise the limit");
  }
  // A hybrid model's state slots (one per running sequence, --max-num-seqs of them) come first;
  // the KV blocks get the rest of the budget.
  const model::CacheGroups groups = model.cache_groups();
  const size_t state_bytes = model::BytesPerStateSlot(groups) * cfg.max_num_seqs;
  int32_t num_blocks =
      worker::ComputeNumKvBlocks(groups, cfg.block_size, model.info().weight_bytes + state_bytes,
                                 cfg.gpu_memory_utilization, kv_bytes);
  const int64_t blocks_needed = (cfg.max_model_len + cfg.block_size - 1) / cfg.block_size;
  if (!kv_bytes) {
    // On CPU, memory the pool can never use is memory taken from everything else on the
    // machine: without --kv-cache-memory-bytes, cap the pool at every running sequence at
    // full length (max_num_seqs × max_model_len); prefix caching reuses what is left over.
    const int64_t useful = blocks_needed * cfg.max_num_seqs;
    if (num_blocks > useful) {
      TLOG_INFO(
          "KV cache capped at {} blocks (--max-num-seqs {} x --max-model-len {}); the "
          "memory budget allowed {}",
          useful, cfg.max_num_seqs, cfg.max_model_len, num_blocks);
      num_blocks = static_cast<int32_t>(useful);
    }
  }
  if (num_blocks < blocks_needed) {
    return InvalidArgument(
        "the KV cache has room for " + std::to_string(num_blocks) + " blocks of " +
        std::to_string(cfg.block_size) + " tokens (" +
        std::to_string(int64_t{num_blocks} * cfg.block_size) +
        " tokens), less than one sequence of --max-model-len " + std::to_string(cfg.max_model_len) +
        "; raise --gpu-memory-utilization / --kv-cache-memory-bytes or lower --max-model-len");
  }
  return num_blocks;
}

Result<std::unique_ptr<EngineStack>> BuildEngineStack(const EngineCoreConfig& config) {
  EngineCoreConfig cfg = config;  // the model may switch prefix caching off (hybrid models)
  auto stack = std::make_unique<EngineStack>();
  const int tp = cfg.tensor_parallel_size;
  std::unique_ptr<executor::MultiprocExecutor> mp;
  std::vector<std::string> tp_ipc_endpoints;  // bound here, connected to by the TP workers
  if (tp > 1) {
    // Start ranks 1..T-1 first: joining the collectives group waits for all of them.
    const std::string tag = std::to_string(getpid()) + "-dp" + std::to_string(cfg.dp_rank);
    executor::MultiprocExecutorOptions opts;
    opts.ack_endpoint = ipc::MakeIpcEndpoint("dp" + std::to_string(cfg.dp_rank) + "-tp-acks");
    for (int r = 1; r < tp; ++r) {
      opts.plan_endpoints.push_back(
          ipc::MakeIpcEndpoint("dp" + std::to_string(cfg.dp_rank) + "-tp" + std::to_string(r)));
    }
    tp_ipc_endpoints = opts.plan_endpoints;
    tp_ipc_endpoints.push_back(opts.ack_endpoint);
    mp = std::make_unique<executor::MultiprocExecutor>(opts);
    TANDEM_RETURN_IF_ERROR(mp->Bind());
    for (int r = 1; r < tp; ++r) {
      EngineCoreConfig wcfg = cfg;
      wcfg.tp_rank = r;
      wcfg.tp_group_name = "tandem-tp-" + tag;
      wcfg.tp_plan_endpoint = opts.plan_endpoints[r - 1];
      wcfg.tp_ack_endpoint = opts.ack_endpoint;
      stack->tp_workers.push_back(std::make_unique<ChildProcess>());
      TANDEM_RETURN_IF_ERROR(stack->tp_workers.back()->Spawn(
          {"_tp-worker", "--config-json", nlohmann::json(wcfg).dump()},
          [r, dp = cfg.dp_rank, stopping = stack->stopping, group = wcfg.tp_group_name,
           endpoints = tp_ipc_endpoints](const std::string& what) {
            if (stopping->load()) {
              TLOG_INFO("TP rank {}: {}", r, what);
              return;
            }
            // This DP rank cannot step without it (its collectives would wait forever): end
            // the engine core, so the head sees the rank lost and fails its requests. Rank 0
            // may still be waiting for the others to join, holding the segment's name: drop it.
            TLOG_ERROR("TP rank {} of DP rank {}: {}; the rank cannot serve without it, exiting", r,
                       dp, what);
            comm::UnlinkShmGroup(group);
            for (const std::string& endpoint : endpoints) ipc::RemoveIpcPath(endpoint);
            std::_Exit(1);
          }));
    }
    comm::GroupSpec spec;
    spec.backend = "shm";
    spec.name = "tandem-tp-" + tag;
    spec.rank = 0;
    spec.size = tp;
    spec.timeout_s = cfg.ready_timeout_s;
    TANDEM_ASSIGN_OR_RETURN(stack->tp_group, comm::CreateProcessGroup(spec));
  }
  TANDEM_ASSIGN_OR_RETURN(stack->expert_parallel,
                          JoinExpertParallelGroups(cfg, stack->tp_group.get()));
  TANDEM_ASSIGN_OR_RETURN(
      std::unique_ptr<model::Model> model,
      model::LoadModel(cfg.model_path, MakeLoadOptions(cfg, stack->tp_group.get(),
                                                       stack->expert_parallel.ep_view)));
  // Expert-parallel MoE over DP ranks: the ranks step together (DP waves).
  const bool lockstep = cfg.dp_size > 1 && model->NeedsLockstep();
  if (cfg.enable_expert_parallel) LogExpertParallel(cfg, model->info());
  const model::CacheGroups groups = model->cache_groups();
  const int32_t num_state_layers = model::NumLayersOf(groups, model::CacheGroupKind::kStateSlot);
  if (num_state_layers > 0) {
    // A cached block says nothing about the recurrent state at its end: a prefix hit would
    // compute from a wrong state. (Speculation rolls the state back itself: the layers keep
    // one per verified position.)
    if (cfg.enable_prefix_caching_given) {
      return InvalidArgument("--enable-prefix-caching with " + model->info().architecture +
                             ": its recurrent (linear-attention) state cannot be restored from "
                             "cached blocks, so a prefix hit would give wrong output; drop the "
                             "flag or pass --no-enable-prefix-caching");
    }
    if (cfg.enable_prefix_caching) {
      TLOG_WARN(
          "prefix caching disabled: {} keeps a recurrent state per sequence that cached "
          "blocks cannot restore (pass --no-enable-prefix-caching to silence this)",
          model->info().architecture);
      cfg.enable_prefix_caching = false;
    }
    TLOG_INFO(
        "recurrent state: {} slots (--max-num-seqs) x {:.2f} MiB ({} linear-attention "
        "layers)",
        cfg.max_num_seqs, model::BytesPerStateSlot(groups) / 1048576.0, num_state_layers);
  }
  TANDEM_ASSIGN_OR_RETURN(stack->num_kv_blocks, ComputeKvBlocks(cfg, *model));
  LogModel(cfg, *model, stack->num_kv_blocks);
  if (cfg.num_speculative_tokens > 0) {
    TLOG_INFO("speculative decoding: {}", DescribeSpeculativeConfig(SpeculativeOf(cfg)));
  }
  auto rank0 = std::make_unique<worker::Worker>(std::move(model),
                                                MakeWorkerConfig(cfg, stack->num_kv_blocks));
  std::unique_ptr<engine::Executor> executor;
  if (mp) {
    TANDEM_RETURN_IF_ERROR(mp->InitWorkers(stack->num_kv_blocks));
    // Every TP worker has connected and answered: the socket files are no longer needed, and
    // removing them now leaves nothing in /tmp however this process ends.
    for (const std::string& endpoint : tp_ipc_endpoints) ipc::RemoveIpcPath(endpoint);
    mp->set_rank0(std::move(rank0));
    executor = std::move(mp);
  } else {
    executor = std::make_unique<executor::InProcessExecutor>(std::move(rank0));
  }
  TANDEM_ASSIGN_OR_RETURN(engine::SchedulerConfig sched,
                          MakeSchedulerConfig(cfg, stack->num_kv_blocks,
                                              /*has_state=*/num_state_layers > 0));
  stack->core = std::make_unique<engine::EngineCore>(sched, std::move(executor), cfg.dp_rank);
  stack->core->set_lockstep(lockstep);
  if (lockstep) {
    TLOG_INFO("expert parallel over {} ranks: DP ranks step together in waves",
              cfg.dp_size * cfg.tensor_parallel_size);
  }
  return stack;
}

}  // namespace tandem::apps
