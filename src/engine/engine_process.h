// The engine core's main loop over ZeroMQ, without the model: frames in (kAddRequest,
// kAbortRequests, kShutdown) → EngineCore steps → frames out (kReady once, then kOutputs).
// The process that owns the model builds the EngineCore (with its Executor) and calls
// RunEngineLoop on its main thread.
// Reference: vLLM v1 engine/core.EngineCoreProc.run_busy_loop (input/output threads folded into
// one loop here: a step is far longer than decoding a frame).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/dp_wave.h"
#include "engine/engine_core.h"
#include "ipc/zmq_socket.h"

namespace tandem::engine {

struct EngineLoopOptions {
  // PULL endpoint for API server → engine frames (kAddRequest, kAbortRequests, kShutdown).
  std::string input_endpoint;
  // PUSH endpoint for engine → API server frames (kReady, kOutputs), when there is one API
  // server; `output_endpoints` (one per API server, indexed by EngineRequest::client_index)
  // takes precedence when not empty.
  std::string output_endpoint;
  std::vector<std::string> output_endpoints;
  // The DP coordinator's stats PULL (kEngineStats after a step in which a request arrived or
  // finished, else at most every stats_interval_s, and with every heartbeat); empty = no
  // coordinator.
  std::string stats_endpoint;
  double stats_interval_s = 0.05;
  // true: bind the endpoint; false (vLLM's layout): connect to the API server's bound sockets.
  bool bind_input = false;
  bool bind_output = false;
  // How long an idle loop waits for a frame before checking heartbeat / parent again.
  int idle_poll_ms = 100;
  // When nothing was sent for this long (idle, or a long prefill), the loop sends an
  // EngineOutputs with no outputs: a heartbeat carrying the stats.
  double heartbeat_interval_s = 1.0;
  // Exit when the parent process dies (getppid() changes), so no engine outlives its server.
  bool exit_when_parent_dies = true;

  // DP waves, when core.lockstep() (expert-parallel MoE with DP > 1): see dp_wave.h.
  // any_busy is the all-reduce over the DP ranks' engine cores; wave_endpoint the coordinator's
  // PUB; StartWave frames go to stats_endpoint. A failed sync ends the loop with 1.
  AnyBusyFn any_busy;
  std::string wave_endpoint;
  int wave_sync_interval_steps = 4;
};

// Runs until a kShutdown frame arrives (returns 0), the parent dies (returns 0), or a socket
// fails (logs why, returns 1). Sends kReady with the engine's stats first. Bad frames (unknown
// type, undecodable body) are logged and skipped; an invalid request gets an immediate
// kOutputs with FinishReason kError and the validation message, so its caller never waits.
int RunEngineLoop(EngineCore& core, const EngineLoopOptions& options);

// Same, over a request socket the caller already bound (the DP handshake advertises its
// endpoint before the model is loaded).
int RunEngineLoop(EngineCore& core, const EngineLoopOptions& options,
                  std::unique_ptr<ipc::ZmqSocket> bound_input);

}  // namespace tandem::engine
