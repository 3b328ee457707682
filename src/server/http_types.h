// The HTTP exchange types of http/, under the names the OpenAI handlers use.
#pragma once

#include "http/types.h"

namespace tandem::server {

using http::HttpRequest;
using http::RequestHandler;
using http::ResponseSink;

// The X-data-parallel-rank header (pins a DP rank), "" = none.
inline std::string DataParallelRankHeader(const HttpRequest& request) {
  return std::string(request.Header("x-data-parallel-rank"));
}

}  // namespace tandem::server
