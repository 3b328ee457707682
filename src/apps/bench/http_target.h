// HttpTarget: where `tandem bench serve` sends its requests, parsed from --base-url or
// --host/--port.
#pragma once

#include <string>

#include "core/status.h"

namespace tandem::apps::bench {

struct HttpTarget {
  std::string host;         // name or address, no brackets
  std::string port;         // decimal
  std::string path_prefix;  // "" or "/prefix" (no trailing '/'), prepended to each endpoint

  std::string ToString() const { return "http://" + host + ":" + port + path_prefix; }
};

// Parses "http://host[:port][/prefix]" (port defaults to 80). https is InvalidArgument (the
// client speaks plain HTTP only), as is a URL without "http://".
Result<HttpTarget> ParseBaseUrl(const std::string& base_url);

}  // namespace tandem::apps::bench
