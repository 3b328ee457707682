#include "server/cors.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace tandem::server {
namespace {

bool Lists(const std::vector<std::string>& list, std::string_view value, bool case_blind) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& item) {
    if (item == "*") return true;
    if (!case_blind) return item == value;
    return item.size() == value.size() &&
           std::equal(item.begin(), item.end(), value.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) ==
                    std::tolower(static_cast<unsigned char>(b));
           });
  });
}

std::string Join(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& item : list) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The comma-separated names of an Access-Control-Request-Headers value, trimmed.
std::vector<std::string> SplitHeaderNames(std::string_view value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string_view::npos) end = value.size();
    std::string_view name = value.substr(start, end - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) out.emplace_back(name);
    start = end + 1;
  }
  return out;
}

}  // namespace

bool ApplyCors(const CorsPolicy& policy, const HttpRequest& request, ResponseSink& sink) {
  const std::string origin(request.Header("origin"));
  if (origin.empty()) return false;
  const bool any_origin = std::find(policy.allowed_origins.begin(),
                                    policy.allowed_origins.end(), "*") != policy.allowed_origins.end();
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
  for (const std::string& name : SplitHeaderNames(requested_headers)) {
    if (!Lists(policy.allowed_headers, name, true)) {
      refused += refused.empty() ? "headers" : ", headers";
      break;
    }
  }
  const bool all_methods = std::find(policy.allowed_methods.begin(), policy.allowed_methods.end(),
                                     "*") != policy.allowed_methods.end();
  const bool all_headers = std::find(policy.allowed_headers.begin(), policy.allowed_headers.end(),
                                     "*") != policy.allowed_headers.end();
  headers.emplace_back("Access-Control-Allow-Methods",
                       all_methods ? "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT"
                                   : Join(policy.allowed_methods));
  if (all_headers && !requested_headers.empty()) {
    headers.emplace_back("Access-Control-Allow-Headers", requested_headers);
  } else if (!all_headers) {
    headers.emplace_back("Access-Control-Allow-Headers", Join(policy.allowed_headers));
  }
  headers.emplace_back("Access-Control-Max-Age", "600");
  if (!refused.empty()) {
    sink.SendResponseWithHeaders(400, "text/plain; charset=utf-8",
                                 "Disallowed CORS " + refused, std::move(headers));
  } else {
    sink.SendResponseWithHeaders(200, "text/plain; charset=utf-8", "OK", std::move(headers));
  }
  return true;
}

}  // namespace tandem::server
