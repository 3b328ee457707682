// CORS as vLLM's API server does it (Starlette's CORSMiddleware with vLLM's defaults: every
// origin, method and header allowed, no credentials), narrowed by --allowed-origins,
// --allowed-methods, --allowed-headers and --allow-credentials. Source of the rules: the Fetch
// standard's CORS protocol and Starlette's middleware (preflight answered before any auth).
#pragma once

#include <string>
#include <vector>

#include "server/http_types.h"

namespace tandem::server {

struct CorsPolicy {
  std::vector<std::string> allowed_origins = {"*"};
  std::vector<std::string> allowed_methods = {"*"};
  std::vector<std::string> allowed_headers = {"*"};
  bool allow_credentials = false;
};

// For a request with an Origin header: a preflight (OPTIONS with Access-Control-Request-Method)
// is answered here, 200 with the Access-Control-Allow-* headers or 400 naming what is not
// allowed, and true is returned; any other request from an allowed origin gets
// Access-Control-Allow-Origin (and -Credentials) added to its response, and false is returned.
// Requests without Origin are left alone (false).
bool ApplyCors(const CorsPolicy& policy, const HttpRequest& request, ResponseSink& sink);

}  // namespace tandem::server
