#include "core/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>

namespace tandem {

void InitLogging(const std::string& process_name) {
  auto logger = spdlog::stderr_color_mt("tandem-" + process_name);
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ [" + process_name + "] %v");
  spdlog::set_default_logger(logger);
  const char* level = std::getenv("TANDEM_LOG_LEVEL");
  spdlog::set_level(level ? spdlog::level::from_str(level) : spdlog::level::info);
}

}  // namespace tandem
