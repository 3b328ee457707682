// Compact JSON for response bodies and SSE events. Token text may hold a partial UTF-8
// sequence (byte-fallback tokens); invalid bytes become U+FFFD instead of throwing.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace tandem::server {

inline std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tandem::server
