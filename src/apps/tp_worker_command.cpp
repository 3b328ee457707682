// `_tp-worker --config-json {...}`: TP rank ≥ 1 of one DP rank. Joins the rank's collectives
// group, loads its shard, and executes the engine core's step plans in lock-step with rank 0.
#include <signal.h>
#include <sys/prctl.h>

#include <cstring>

#include "apps/engine_core_config.h"
#include "apps/engine_launcher.h"
#include "apps/engine_stack.h"
#include "comm/process_group.h"
#include "core/logging.h"
#include "worker/worker_process.h"

namespace tandem::apps {

int RunTpWorkerCommand(int argc, char** argv) {
  EngineCoreConfig cfg;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--config-json") != 0) continue;
    try {
      cfg = nlohmann::json::parse(argv[i + 1]).get<EngineCoreConfig>();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "_tp-worker: bad --config-json: %s\n", e.what());
      return 2;
    }
  }
  InitLogging("engine" + std::to_string(cfg.dp_rank) + "-tp" + std::to_string(cfg.tp_rank));
  ExitWithParent(SIGKILL);  // never outlive the engine core, even when stopped
  comm::GroupSpec spec;
  spec.backend = "shm";
  spec.name = cfg.tp_group_name;
  spec.rank = cfg.tp_rank;
  spec.size = cfg.tensor_parallel_size;
  spec.timeout_s = cfg.ready_timeout_s;
  auto group = comm::CreateProcessGroup(spec);
  if (!group.ok()) {
    TLOG_ERROR("{}", group.status().message());
    return 1;
  }
  auto ep_groups = JoinExpertParallelGroups(cfg, group->get());
  if (!ep_groups.ok()) {
    TLOG_ERROR("TP rank {}: {}", cfg.tp_rank, ep_groups.status().message());
    return 1;
  }
  auto model =
      model::LoadModel(cfg.model_path, MakeLoadOptions(cfg, group->get(), ep_groups->ep_view));
  if (!model.ok()) {
    TLOG_ERROR("TP rank {}: {}", cfg.tp_rank, model.status().message());
    return 1;
  }
  worker::WorkerLoopOptions loop;
  loop.tp_rank = cfg.tp_rank;
  loop.plan_endpoint = cfg.tp_plan_endpoint;
  loop.ack_endpoint = cfg.tp_ack_endpoint;
  std::unique_ptr<model::Model> owned = std::move(model).value();
  return worker::RunWorkerLoop(
      loop, [&](int32_t num_kv_blocks) -> Result<std::unique_ptr<worker::Worker>> {
        return std::make_unique<worker::Worker>(std::move(owned),
                                                MakeWorkerConfig(cfg, num_kv_blocks));
      });
}

}  // namespace tandem::apps
