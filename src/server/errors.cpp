#include "server/errors.h"

#include <nlohmann/json.hpp>

namespace tandem::server {

const char* ErrorTypeFor(int http_status) {
  // vLLM names errors after the openai-python exception classes for the status.
  switch (http_status) {
    case 400:
      return "BadRequestError";
    case 401:
      return "AuthenticationError";
    case 403:
      return "PermissionDeniedError";
    case 404:
      return "NotFoundError";
    case 405:
      return "MethodNotAllowedError";
    case 409:
      return "ConflictError";
    case 408:
      return "RequestTimeoutError";
    case 413:
      return "RequestEntityTooLargeError";
    case 501:
      return "NotImplementedError";
    case 503:
      return "ServiceUnavailableError";
    default:
      return "InternalServerError";
  }
}

std::string ErrorBody(const ApiError& error) {
  return ErrorBody(error, HttpStatusFor(error.status.code()));
}

std::string ErrorBody(const ApiError& error, int http_status) {
  nlohmann::json info = {
      {"message", error.status.message()},
      {"type", ErrorTypeFor(http_status)},
      {"param", error.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.param)},
      {"code", http_status},
  };
  return nlohmann::json{{"error", std::move(info)}}.dump(-1, ' ', false,
                                                         nlohmann::json::error_handler_t::replace);
}

}  // namespace tandem::server
