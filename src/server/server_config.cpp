#include "server/server_config.h"

#include <fmt/format.h>

#include <utility>

namespace tandem::server {

Status ServerConfig::Validate() const {
  if (served_model_names.empty()) {
    return InvalidArgument(
        "ServerConfig.served_model_names is empty; expected at least one name "
        "(--served-model-name or the model path)");
  }
  if (max_model_len < 1) {
    return InvalidArgument(
        fmt::format("ServerConfig.max_model_len is {}; expected >= 1", max_model_len));
  }
  if (max_body_bytes == 0) return InvalidArgument("ServerConfig.max_body_bytes must be > 0");
  if (num_io_threads < 1) {
    return InvalidArgument(
        fmt::format("ServerConfig.num_io_threads is {}; expected >= 1", num_io_threads));
  }
  for (const auto& [flag, value] :
       {std::pair<const char*, int64_t>{"--max-chat-messages", max_chat_messages},
        {"--max-chat-tools", max_chat_tools},
        {"--chat-template-max-recursion", chat_template_limits.max_recursion_depth},
        {"--chat-template-max-loop-iterations", chat_template_limits.max_loop_iterations},
        {"--chat-template-max-output-bytes", chat_template_limits.max_output_bytes},
        {"ServerConfig.num_preprocess_threads", num_preprocess_threads},
        {"ServerConfig.max_queued_preprocess", max_queued_preprocess}}) {
    if (value < 1) return InvalidArgument(fmt::format("{} is {}; expected >= 1", flag, value));
  }
  if (!(chat_template_limits.timeout_s > 0)) {
    return InvalidArgument(fmt::format("--chat-template-timeout is {}; expected seconds > 0",
                                       chat_template_limits.timeout_s));
  }
  if (!reasoning_parser.empty() && reasoning_parser != "qwen3") {
    return InvalidArgument(
        fmt::format("--reasoning-parser '{}' is not supported; expected qwen3", reasoning_parser));
  }
  if (!tool_call_parser.empty() && tool_call_parser != "hermes" &&
      tool_call_parser != "qwen3_coder") {
    return InvalidArgument(
        fmt::format("--tool-call-parser '{}' is not supported; expected "
                    "hermes or qwen3_coder",
                    tool_call_parser));
  }
  if (enable_auto_tool_choice && tool_call_parser.empty()) {
    return InvalidArgument("--enable-auto-tool-choice needs --tool-call-parser");
  }
  if (!default_chat_template_kwargs.is_object()) {
    return InvalidArgument(
        fmt::format("--default-chat-template-kwargs must be a JSON object; "
                    "found JSON {}",
                    default_chat_template_kwargs.type_name()));
  }
  return Status::Ok();
}

}  // namespace tandem::server
