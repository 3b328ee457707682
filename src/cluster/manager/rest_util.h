// Small helpers of the manager's HTTP handlers: JSON responses, the two error shapes (GPUStack's
// {"code", "reason", "message"} on management routes, OpenAI's on /v1), body parsing, and path
// segments.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_limits.h"
#include "core/status.h"
#include "http/types.h"

namespace tandem::cluster::manager {

// 200 (or `http_status`) with `body` as compact JSON.
void SendJson(http::ResponseSink& sink, const nlohmann::json& body, int http_status = 200);

// The management error shape: {"code": 404, "reason": "NotFound", "message": "..."}.
std::string ManagementErrorBody(int http_status, const std::string& message);
void SendError(http::ResponseSink& sink, const Status& status);

// kPermissionDenied "not allowed: <what>" (a 403 for a caller without the right).
inline Status Forbidden(const std::string& what) {
  return PermissionDenied("not allowed: " + what);
}

// 405 in the management shape with the Allow header (RFC 9110 §15.5.6): `allow` lists the
// methods the path takes, e.g. "GET, HEAD"; the message names the method, the path and them.
void SendMethodNotAllowed(http::ResponseSink& sink, std::string_view method, std::string_view path,
                          std::string_view allow);

// The OpenAI error shape: {"error": {"message", "type", "param": null, "code"}}.
std::string OpenAiErrorBody(int http_status, const std::string& message);
void SendOpenAiError(http::ResponseSink& sink, int http_status, const std::string& message);

// Whether `text` opens more than `max_depth` nested arrays/objects (strings skipped), checked
// before parsing so that no recursive step ever sees a deeper value. Request bodies, on /v2 and
// the /v1 gateway alike, nest at most kMaxJsonDepth levels (core/json_limits.h: the limit of
// `tandem serve`, which the gateway passes them on to).
bool JsonNestsDeeperThan(std::string_view text, int max_depth);

// The message of a body nesting deeper than kMaxJsonDepth (the same words as `tandem serve`).
std::string TooDeepMessage();

// The body as a JSON object. Errors: kInvalidArgument ("request body is not valid JSON: ..."
// (a number beyond double range included), "request body must be a JSON object", or
// TooDeepMessage()).
Result<nlohmann::json> ParseJsonBody(const std::string& body);

// body[field] when it is a string, `fallback` when absent or null. Errors: kInvalidArgument
// naming the field when it holds another type.
Result<std::string> StringField(const nlohmann::json& body, const char* field,
                                std::string fallback = "");

// A JSON value as text for an error message, cut to `limit` characters.
std::string Shown(const nlohmann::json& value, size_t limit = 120);

// "/v2/models/12/logs" → {"v2", "models", "12", "logs"} (empty segments dropped).
std::vector<std::string> PathSegments(std::string_view path);

// A positive decimal id, or nullopt.
std::optional<int64_t> ParseId(std::string_view text);

// The value of cookie `name` in a Cookie header, or "".
std::string CookieValue(std::string_view cookie_header, std::string_view name);

}  // namespace tandem::cluster::manager
