#include "server/cors.h"

#include <algorithm>
#include <utility>

namespace tandem::server {
namespace {

bool Lists(const std::vector<std::string>& list, std::string_view value, bool case_blind) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& item) {
    return item == "*" || (case_blind ? http::EqualsIgnoreCase(item, value) : item == value);
  });
}

bool HasWildcard(const std::vector<std::string>& list) {
  return std::find(list.begin(), list.end(), "*") != list.end();
}

std::string Join(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& item : list) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

bool ApplyCors(const CorsPolicy& policy, const HttpRequest& request, ResponseSink& sink) {
  const std::string origin(request.Header("origin"));
  if (origin.empty()) return false;
  const bool any_origin = HasWildcard(policy.allowed_origins);
  const bool origin_ok = Lists(policy.allowed_origins, origin, false);
  // "*" cannot go with credentials: the origin itself is echoed then (and caches vary by it).
  const bool echo = !any_origin || policy.allow_credentials;
  std::vector<std::pair<std::string, std::string>> headers;
  if (origin_ok) {
    headers.emplace_back("Access-Control-Allow-Origin", echo ? origin : "*");
    if (policy.allow_credentials) headers.emplace_back("Access-Control-Allow-Credentials", "true");
    if (echo) headers.emplace_back("Vary", "Origin");
  }
  const std::string requested_method(request.Header("access-control-request-method"));
  if (request.method != "OPTIONS" || requested_method.empty()) {
    for (auto& [name, value] : headers) sink.AddResponseHeader(name, value);
    return false;
  }
  // Preflight.
  std::string refused;
  if (!origin_ok) refused = "origin";
  if (!Lists(policy.allowed_methods, requested_method, false)) {
    refused += refused.empty() ? "method" : ", method";
  }
  const std::string requested_headers(request.Header("access-control-request-headers"));
  for (std::string_view name : http::SplitHeaderList(requested_headers)) {
    if (!Lists(policy.allowed_headers, name, true)) {
      refused += refused.empty() ? "headers" : ", headers";
      break;
    }
  }
  const bool all_methods = HasWildcard(policy.allowed_methods);
  const bool all_headers = HasWildcard(policy.allowed_headers);
  headers.emplace_back(
      "Access-Control-Allow-Methods",
      all_methods ? "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT" : Join(policy.allowed_methods));
  if (all_headers && !requested_headers.empty()) {
    headers.emplace_back("Access-Control-Allow-Headers", requested_headers);
  } else if (!all_headers) {
    headers.emplace_back("Access-Control-Allow-Headers", Join(policy.allowed_headers));
  }
  headers.emplace_back("Access-Control-Max-Age", "600");
  if (!refused.empty()) {
    sink.SendResponseWithHeaders(400, "text/plain; charset=utf-8", "Disallowed CORS " + refused,
                                 std::move(headers));
  } else {
    sink.SendResponseWithHeaders(200, "text/plain; charset=utf-8", "OK", std::move(headers));
  }
  return true;
}

}  // namespace tandem::server
