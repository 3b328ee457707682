// API errors: a Status plus the request field it concerns, mapped onto the HTTP status and the
// OpenAI error body that vLLM's OpenAI server returns:
//   {"error": {"message": "...", "type": "BadRequestError", "param": "temperature", "code": 400}}
// Reference: vLLM entrypoints/openai protocol.py ErrorInfo/ErrorResponse (code = HTTP status).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "core/status.h"
#include "http/status.h"

namespace tandem::server {

// One failed API call: what went wrong (Status) and which request field caused it.
struct ApiError {
  Status status;
  std::string param;  // offending request field ("temperature"); empty when none
};

// A 400 naming `param`.
inline ApiError BadParam(std::string param, std::string message) {
  return {InvalidArgument(std::move(message)), std::move(param)};
}

using http::HttpStatusFor;

// Serializes the error body (OpenAI shape, `param` null when empty).
std::string ErrorBody(const ApiError& error);
// The same with `http_status` as the code (one the session answers itself: 408, 413, 431, 501).
std::string ErrorBody(const ApiError& error, int http_status);

// A value or an ApiError (Result<T> with a `param`).
template <typename T>
class ApiResult {
 public:
  ApiResult(T value) : value_(std::move(value)) {}             // NOLINT: implicit by design
  ApiResult(ApiError error) : error_(std::move(error)) {}      // NOLINT
  ApiResult(Status status) : error_{std::move(status), ""} {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  const ApiError& error() const { return error_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  ApiError error_;
};

}  // namespace tandem::server

// Propagates the ApiError of an ApiResult expression, else assigns its value to `lhs`.
#define TANDEM_API_ASSIGN_OR_RETURN(lhs, expr)                                             \
  auto TANDEM_CONCAT(_api_, __LINE__) = (expr);                                            \
  if (!TANDEM_CONCAT(_api_, __LINE__).ok()) return TANDEM_CONCAT(_api_, __LINE__).error(); \
  lhs = std::move(TANDEM_CONCAT(_api_, __LINE__)).value()
