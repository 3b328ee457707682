#include <signal.h>
#include <sys/prctl.h>

#include <cstring>
#include <memory>

#include <unistd.h>

#include <filesystem>

#include "apps/engine_core_config.h"
#include "core/clock.h"
#include "ipc/handshake.h"
#include "ipc/net_address.h"
#include "core/logging.h"
#include "engine/engine_core.h"
#include "engine/engine_process.h"
#include "engine/scheduler_config.h"
#include "executor/in_process_executor.h"
#include "model/model.h"
#include "worker/kv_budget.h"
#include "worker/worker.h"

namespace tandem::apps {
namespace {

// Loads the model and builds the engine stack (worker → executor → core).
// Errors are logged with their full message; the caller exits non-zero.
Result<std::unique_ptr<engine::EngineCore>> BuildEngineCore(const EngineCoreConfig& cfg,
                                                            int32_t* num_blocks_out) {
  model::LoadOptions load;
  load.dtype = cfg.dtype;
  load.num_threads = cfg.num_threads;
  TANDEM_ASSIGN_OR_RETURN(std::unique_ptr<model::Model> model,
                          model::LoadModel(cfg.model_path, load));
  const model::ModelInfo& info = model->info();
  std::optional<size_t> kv_bytes;
  if (cfg.kv_cache_memory_bytes > 0) kv_bytes = static_cast<size_t>(cfg.kv_cache_memory_bytes);
  int32_t num_blocks = worker::ComputeNumKvBlocks(
      model->kv_cache_spec(), cfg.block_size, info.weight_bytes, cfg.gpu_memory_utilization,
      kv_bytes);
  const int64_t blocks_needed = (cfg.max_model_len + cfg.block_size - 1) / cfg.block_size;
  if (!kv_bytes) {
    // On CPU, memory the pool can never use is memory taken from everything else on the
    // machine: without --kv-cache-memory-bytes, cap the pool at every running sequence at
    // full length (max_num_seqs × max_model_len); prefix caching reuses what is left over.
    const int64_t useful = blocks_needed * cfg.max_num_seqs;
    if (num_blocks > useful) {
      TLOG_INFO("KV cache capped at {} blocks (--max-num-seqs {} x --max-model-len {}); the "
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
        " tokens), less than one sequence of --max-model-len " +
        std::to_string(cfg.max_model_len) +
        "; raise --gpu-memory-utilization / --kv-cache-memory-bytes or lower --max-model-len");
  }
  TLOG_INFO("model loaded: {} layers, hidden {}, vocab {}, {:.1f} MiB of weights",
            info.num_layers, info.hidden_size, info.vocab_size,
            info.weight_bytes / (1024.0 * 1024.0));
  TLOG_INFO("KV cache: {} blocks of {} tokens ({} tokens, {:.1f} MiB)", num_blocks,
            cfg.block_size, int64_t{num_blocks} * cfg.block_size,
            num_blocks * model->kv_cache_spec().BytesPerBlock(cfg.block_size) / 1048576.0);

  worker::WorkerConfig worker_cfg;
  worker_cfg.num_kv_blocks = num_blocks;
  worker_cfg.block_size = cfg.block_size;
  worker_cfg.seed = static_cast<uint64_t>(cfg.seed);
  worker_cfg.eos_token_id = cfg.eos_token_id;
  auto worker = std::make_unique<worker::Worker>(std::move(model), worker_cfg);
  auto executor = std::make_unique<executor::InProcessExecutor>(std::move(worker));
  engine::SchedulerConfig sched;
  sched.max_num_seqs = cfg.max_num_seqs;
  sched.max_num_batched_tokens = cfg.max_num_batched_tokens;
  sched.max_model_len = cfg.max_model_len;
  sched.block_size = cfg.block_size;
  sched.num_gpu_blocks = num_blocks;
  sched.enable_prefix_caching = cfg.enable_prefix_caching;
  TANDEM_RETURN_IF_ERROR(sched.Validate());
  *num_blocks_out = num_blocks;
  return std::make_unique<engine::EngineCore>(sched, std::move(executor), cfg.dp_rank);
}

// Data parallel: bind the request socket, say HELLO to the head, load, say READY, serve.
int RunDpEngine(const EngineCoreConfig& cfg) {
  const double deadline_s = MonotonicSeconds() + cfg.ready_timeout_s;
  const std::string head = cfg.handshake_endpoint.substr(6);  // "A:P"
  auto host = ipc::LocalAddressFor(head.substr(0, head.rfind(':')));
  if (!host.ok()) {
    TLOG_ERROR("{}", host.status().message());
    return 1;
  }
  auto input = std::make_unique<ipc::ZmqSocket>(ipc::SocketKind::kPull);
  if (Status st = input->Bind("tcp://" + *host + ":*"); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 1;
  }
  protocol::EngineHello hello;
  hello.dp_rank = cfg.dp_rank;
  hello.host = *host;
  hello.pid = getpid();
  hello.input_endpoint = input->BoundEndpoint();
  hello.settings = SharedSettings(cfg);
  ipc::HandshakeClient handshake(cfg.handshake_endpoint);
  TLOG_INFO("DP rank {}: dialing the head at {}", cfg.dp_rank, head);
  auto reply = handshake.Hello(hello, deadline_s);
  if (!reply.ok()) {
    TLOG_ERROR("{}", reply.status().message());
    return 1;
  }
  int32_t num_blocks = 0;
  auto core = BuildEngineCore(cfg, &num_blocks);
  if (!core.ok()) {
    TLOG_ERROR("engine core failed to start: {}", core.status().message());
    return 1;
  }
  if (Status st = handshake.Ready({cfg.dp_rank, num_blocks}); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 1;
  }
  engine::EngineLoopOptions loop;
  loop.output_endpoints = reply->output_endpoints;
  loop.stats_endpoint = reply->stats_endpoint;
  loop.heartbeat_interval_s = 0.5;
  return engine::RunEngineLoop(**core, loop, std::move(input));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SharedSettings(const EngineCoreConfig& c) {
  return {{"model", std::filesystem::path(c.model_path).filename().string()},
          {"--data-parallel-size", std::to_string(c.dp_size)},
          {"--tensor-parallel-size", std::to_string(c.tensor_parallel_size)},
          {"--enable-expert-parallel", c.enable_expert_parallel ? "true" : "false"},
          {"--seed", std::to_string(c.seed)},
          {"--max-model-len", std::to_string(c.max_model_len)},
          {"--block-size", std::to_string(c.block_size)},
          {"--dtype", c.dtype}};
}

int RunEngineCoreCommand(int argc, char** argv) {
  EngineCoreConfig cfg;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--config-json") == 0) {
      try {
        cfg = nlohmann::json::parse(argv[i + 1]).get<EngineCoreConfig>();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "_engine-core: bad --config-json: %s\n", e.what());
        return 2;
      }
    }
  }
  InitLogging("engine" + std::to_string(cfg.dp_rank));
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the process that started us
  if (!cfg.handshake_endpoint.empty()) return RunDpEngine(cfg);
  int32_t num_blocks = 0;
  auto core = BuildEngineCore(cfg, &num_blocks);
  if (!core.ok()) {
    TLOG_ERROR("engine core failed to start: {}", core.status().message());
    return 1;
  }
  engine::EngineLoopOptions loop;
  loop.input_endpoint = cfg.input_endpoint;
  loop.output_endpoint = cfg.output_endpoint;
  loop.bind_input = true;    // the API server connects its PUSH here
  loop.bind_output = false;  // the API server bound its PULL before spawning us
  return engine::RunEngineLoop(**core, loop);
}

}  // namespace tandem::apps
