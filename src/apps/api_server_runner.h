// ApiServerRunner: one API server (HTTP + its EngineClient), built from the serve flags.
// `tandem serve` runs API server 0 in its own process; with --api-server-count K > 1 the head
// also starts K-1 `_api-server` children, which share the port (SO_REUSEPORT).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "apps/serve_flags.h"
#include "router/mp_engine_client.h"
#include "server/http_server.h"

namespace tandem::apps {

// Set when every DP rank this API server talks to was lost (the client's on_all_ranks_lost).
struct EnginesLost {
  std::atomic<server::HttpServer*> http{nullptr};  // drained and stopped then; null once gone
  std::atomic<bool> lost{false};
};

struct ApiServerParts {
  std::shared_ptr<router::MpEngineClient> client;
  std::unique_ptr<server::HttpServer> http;
  int max_model_len = 0;
  // lost: the server stopped because no engine is left; its command exits non-zero (vLLM's
  // API server exits too, so that a supervisor restarts the deployment).
  std::shared_ptr<EnginesLost> engines_lost;

  ~ApiServerParts() {
    if (engines_lost) engines_lost->http = nullptr;
  }
  ApiServerParts() = default;
  ApiServerParts(ApiServerParts&&) = default;
  ApiServerParts& operator=(ApiServerParts&&) = default;
};

// Reads the model's tokenizer/template/config, builds the client with `client_options` (its
// served ranks limited to this machine's with hybrid / external DP load balancing) and the
// HTTP server (not started). When every rank is lost the server answers the requests in
// flight (their engine requests failed: 503), stops, and parts.engines_lost->lost is set.
// Errors name the file or flag.
Result<ApiServerParts> BuildApiServer(const ServeFlags& flags,
                                      const router::MpEngineClientOptions& client_options,
                                      bool reuse_port);

// API server 0 of a data-parallel machine (the head, or an API machine of hybrid / external
// load balancing): outputs arrive at `output_endpoint`, ranks and loads come from the
// coordinator's feed `publish_endpoint`; its client and HTTP server are started. Errors as
// BuildApiServer's, or kUnavailable when a socket cannot be bound.
Result<ApiServerParts> StartDataParallelApiServer(const ServeFlags& flags,
                                                  const std::string& output_endpoint,
                                                  const std::string& publish_endpoint);

// Parses serve flags (argv[0] is the subcommand name) with vLLM spellings; CLI11's exit code
// in *exit_code when parsing ends the program (--help, bad flag).
bool ParseServeFlags(int argc, char** argv, ServeFlags* flags, int* exit_code);

// Entry of the hidden `_api-server` subcommand:
// `tandem _api-server CLIENT_INDEX OUTPUT_ENDPOINT SNAPSHOT_ENDPOINT <serve args...>`.
int RunApiServerCommand(int argc, char** argv);

}  // namespace tandem::apps
