// Logging: spdlog behind a few macros, so every process logs in one format
// ("<time> <level> [<process>] message"). Process-wide; thread-safe.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace tandem {

// Names this process in every log line ("api", "engine0", ...) and sets the level from
// TANDEM_LOG_LEVEL (trace|debug|info|warn|error; default info). Call once at start.
void InitLogging(const std::string& process_name);

}  // namespace tandem

#define TLOG_DEBUG(...) ::spdlog::debug(__VA_ARGS__)  // runtime level: TANDEM_LOG_LEVEL=debug
#define TLOG_INFO(...) ::spdlog::info(__VA_ARGS__)
#define TLOG_WARN(...) ::spdlog::warn(__VA_ARGS__)
#define TLOG_ERROR(...) ::spdlog::error(__VA_ARGS__)
