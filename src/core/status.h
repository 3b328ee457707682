// Status and Result<T>: the channel for expected failures (bad request, prompt too long,
// peer gone, bad model file). Broken invariants use TANDEM_CHECK (check.h) instead.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tandem {

// Each code maps to exactly one HTTP status in server/errors.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // 400: the caller sent something malformed or out of range
  kUnauthenticated,    // 401
  kPermissionDenied,   // 403: authenticated, but not allowed to do this
  kNotFound,           // 404
  kMethodNotAllowed,   // 405
  kConflict,           // 409: the resource changed since it was read, or already exists
  kPayloadTooLarge,    // 413
  kResourceExhausted,  // 429/503: no capacity now
  kUnavailable,        // 503: a peer is gone or not ready
  kDataLoss,           // a file is truncated or corrupt
  kUnimplemented,      // a feature not built yet
  kInternal,           // 500
};

const char* StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status Conflict(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Result<T>: a value or a non-ok Status.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace tandem

// Propagate a non-ok Status / Result to the caller.
#define TANDEM_RETURN_IF_ERROR(expr) \
  do {                               \
    ::tandem::Status _st = (expr);   \
    if (!_st.ok()) return _st;       \
  } while (0)

#define TANDEM_CONCAT_INNER(a, b) a##b
#define TANDEM_CONCAT(a, b) TANDEM_CONCAT_INNER(a, b)
// (__COUNTER__, not __LINE__: an invocation spread over several lines must name one temporary.)
#define TANDEM_ASSIGN_OR_RETURN(lhs, expr) \
  TANDEM_ASSIGN_OR_RETURN_IMPL(TANDEM_CONCAT(_res_, __COUNTER__), lhs, expr)
#define TANDEM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
