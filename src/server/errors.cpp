#include "server/errors.h"

#include <nlohmann/json.hpp>

namespace tandem::server {

std::string ErrorBody(const ApiError& error) {
  return ErrorBody(error, HttpStatusFor(error.status.code()));
}

std::string ErrorBody(const ApiError& error, int http_status) {
  nlohmann::json info = {
      {"message", error.status.message()},
      {"type", http::OpenAiErrorTypeFor(http_status)},
      {"param", error.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.param)},
      {"code", http_status},
  };
  return nlohmann::json{{"error", std::move(info)}}.dump(-1, ' ', false,
                                                         nlohmann::json::error_handler_t::replace);
}

}  // namespace tandem::server
