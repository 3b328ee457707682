// ServerConfig: everything the OpenAI-compatible HTTP server needs, filled by apps/ from the
// `tandem serve` flags (vLLM names in comments) and the model's generation_config.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "http/tls_options.h"
#include "server/cors.h"
#include "text/jinja/render_limits.h"

namespace tandem::server {

struct ServerConfig {
  std::string host = "0.0.0.0";                 // --host
  uint16_t port = 8000;                         // --port; 0 = pick a free port (tests)
  std::vector<std::string> served_model_names;  // --served-model-name; [0] is the default
  std::string model_root;                       // the model path, shown as `root` in /v1/models
  std::vector<std::string> api_keys;            // --api-key; empty = no authentication
  bool enable_ui = true;                        // --no-ui: no playground page at /
  std::string root_path;                        // --root-path: stripped from request paths
  bool enable_server_load_tracking = false;     // --enable-server-load-tracking: GET /load counts
  bool enable_request_id_headers = false;       // --enable-request-id-headers: X-Request-Id echo
  bool enable_log_requests = false;             // --enable-log-requests: log each request
  int32_t max_log_len = -1;                     // --max-log-len: prompt chars/ids logged; -1 = all
  bool enable_prompt_tokens_details = false;    // --enable-prompt-tokens-details: usage shows
                                                // prompt_tokens_details.cached_tokens
  http::TlsOptions tls;                         // --ssl-*: HTTPS when keyfile/certfile are set
  CorsPolicy cors;  // --allowed-origins/-methods/-headers, --allow-credentials
  std::set<std::string> disable_access_log_for_endpoints;  // paths never access-logged
  int32_t max_model_len = 2048;              // --max-model-len: prompt + output tokens
  size_t max_body_bytes = 16u << 20;         // larger bodies get 413
  std::optional<std::string> chat_template;  // --chat-template source text (Jinja)
  // Chat output parsing and template variables (vLLM flags of the same names).
  std::string reasoning_parser;          // --reasoning-parser: "" | "qwen3"
  std::string reasoning_field = "both";  // --reasoning-field: both | reasoning | reasoning_content
  bool enable_auto_tool_choice = false;  // --enable-auto-tool-choice
  bool trust_request_chat_template = false;  // --trust-request-chat-template
  std::string tool_call_parser;              // --tool-call-parser: "" | hermes | qwen3_coder
  // --default-chat-template-kwargs: an object; each request's chat_template_kwargs override it.
  nlohmann::ordered_json default_chat_template_kwargs = nlohmann::ordered_json::object();
  // Defaults from generation_config.json, used when a request omits the field.
  std::optional<float> default_temperature;
  std::optional<float> default_top_p;
  std::optional<int32_t> default_top_k;
  std::optional<float> default_repetition_penalty;
  std::vector<int32_t> eos_token_ids;  // the model's EOS ids, sent with every request
  int32_t max_logprobs = 20;           // --max-logprobs
  bool priority_scheduling = false;    // --scheduling-policy priority: `priority` taken
  bool reuse_port = false;             // SO_REUSEPORT, for --api-server-count > 1
  int32_t num_io_threads = 2;          // threads running the io_context
  // Request preprocessing (JSON parsing, chat template rendering, tokenization) runs on a pool
  // of this many threads, never on the I/O threads, so /health, /metrics and streams go on
  // whatever a render does.
  // Half the machine's hardware threads, 2 to 16 (PreprocessPool::DefaultThreads).
  int32_t num_preprocess_threads = 2;
  // Requests waiting for a preprocessing thread beyond this get 503.
  int32_t max_queued_preprocess = 1024;
  int32_t max_chat_messages = 10000;  // --max-chat-messages: per chat request
  int32_t max_chat_tools = 1024;      // --max-chat-tools: per chat request
  // --chat-template-max-*, --chat-template-timeout. `cancelled` is set by HttpServer (shutdown).
  text::jinja::RenderLimits chat_template_limits;
  int32_t keep_alive_timeout_s = 5;  // idle keep-alive connections close after this
  // --limit-concurrency: open connections at most; a connection past it gets 503 (uvicorn's
  // flag). 0: no cap.
  int64_t limit_concurrency = 8192;
  // Request bytes held (bodies being received, queued or preprocessed) over all connections and
  // per client address; a body past either is refused with 503 before it is read.
  int64_t max_held_body_bytes = int64_t{512} << 20;
  int64_t max_held_body_bytes_per_address = int64_t{128} << 20;
  double stalled_client_timeout_s = 30;  // --stalled-client-timeout (backpressure)
  std::string version = "0.1.0";         // GET /version

  // The model name /v1/models lists first and responses carry by default.
  const std::string& default_model_name() const { return served_model_names.front(); }

  // Errors: kInvalidArgument naming the field (no served model name, max_model_len < 1, ...).
  Status Validate() const;
};

}  // namespace tandem::server
