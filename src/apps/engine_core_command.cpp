#include <signal.h>
#include <sys/prctl.h>

#include <cstring>
#include <memory>

#include <unistd.h>

#include <filesystem>

#include "apps/engine_core_config.h"
#include "apps/engine_launcher.h"
#include "apps/engine_stack.h"
#include "apps/speculative_flag.h"
#include "core/clock.h"
#include "core/logging.h"
#include "engine/engine_process.h"
#include "ipc/handshake.h"
#include "ipc/net_address.h"

namespace tandem::apps {
namespace {

// Data parallel: bind the request socket, say HELLO to the head, load, say READY, serve.
int RunDpEngine(EngineCoreConfig cfg) {
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
  cfg.group_backend = reply->group_backend;
  cfg.group_name = reply->group_name;
  cfg.ep_rendezvous = reply->ep_rendezvous;
  cfg.dp_rendezvous = reply->dp_rendezvous;
  auto stack = BuildEngineStack(cfg);
  if (!stack.ok()) {
    TLOG_ERROR("engine core failed to start: {}", stack.status().message());
    return 1;
  }
  if (Status st = handshake.Ready({cfg.dp_rank, (*stack)->num_kv_blocks}); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 1;
  }
  // `tandem agent` reads this line as a --headless follower's readiness (docs/manager.md).
  TLOG_INFO("DP rank {}: joined the head at {}; serving", cfg.dp_rank, head);
  engine::EngineLoopOptions loop;
  // An API machine's engine answers its own machine's API servers (the only ones that send
  // it requests); otherwise the head's.
  loop.output_endpoints =
      cfg.output_endpoints.empty() ? reply->output_endpoints : cfg.output_endpoints;
  loop.stats_endpoint = reply->stats_endpoint;
  loop.heartbeat_interval_s = 0.5;
  if ((*stack)->core->lockstep()) {
    comm::ProcessGroup* dp_group = (*stack)->expert_parallel.dp.get();
    loop.wave_endpoint = reply->publish_endpoint;
    loop.any_busy = [dp_group](bool local_busy) -> Result<bool> {
      float busy = local_busy ? 1.0f : 0.0f;
      TANDEM_RETURN_IF_ERROR(dp_group->AllReduceSum(&busy, 1));
      return busy > 0.0f;
    };
  }
  return engine::RunEngineLoop(*(*stack)->core, loop, std::move(input));
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
          {"--scheduling-policy", c.scheduling_policy},
          {"--dtype", c.dtype},
          {"--kv-cache-dtype", c.kv_cache_dtype},
          {"--quantization", c.quantization.empty() ? "auto" : c.quantization},
          {"--additional-config q8_0_dot", c.q8_0_dot},
          {"--speculative-config", DescribeSpeculativeConfig(SpeculativeOf(c))}};
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
  ExitWithParent();  // never outlive the process that started us
  if (!cfg.handshake_endpoint.empty()) return RunDpEngine(cfg);
  auto stack = BuildEngineStack(cfg);
  if (!stack.ok()) {
    TLOG_ERROR("engine core failed to start: {}", stack.status().message());
    return 1;
  }
  engine::EngineLoopOptions loop;
  loop.input_endpoint = cfg.input_endpoint;
  loop.output_endpoint = cfg.output_endpoint;
  loop.bind_input = true;    // the API server connects its PUSH here
  loop.bind_output = false;  // the API server bound its PULL before spawning us
  return engine::RunEngineLoop(*(*stack)->core, loop);
}

}  // namespace tandem::apps
