// ParseBoundedJson: JSON text → a JSON value, refusing nesting deeper than a limit *while*
// parsing, so that no later step (copy, dump, comparison, template rendering — all recursive in
// nlohmann::json and in our own walks) ever sees a value deeper than that limit.
//
// Every JSON that comes from a user or from the model goes through here: request bodies, tool
// call arguments sent as JSON text, tool calls the model writes. The parse itself is nlohmann's
// (iterative, with an explicit stack); the limit is a SAX handler around its DOM builder that
// stops at the first array or object opening past `max_depth`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/json_limits.h"

namespace tandem::text {

// The nesting limit for JSON from requests and model output is kMaxJsonDepth (core/json_limits.h,
// shared with the manager), found here by enclosing-namespace lookup.

struct BoundedJsonError {
  bool too_deep = false;  // the text nests deeper than max_depth (else: not JSON)
  std::string message;    // what was wrong, e.g. "JSON nests deeper than 128 levels ..."
};

// Parses `text` (one JSON value, nothing after it but whitespace) into *out.
// Returns true on success; false with *error filled on malformed JSON (a raw NUL byte included:
// nlohmann would end the text there), invalid UTF-8, a number beyond double range, or nesting
// deeper than `max_depth` levels (then *out is null).
// Never throws. Thread-safe.
bool ParseBoundedJson(std::string_view text, int32_t max_depth, nlohmann::json* out,
                      BoundedJsonError* error);
bool ParseBoundedJson(std::string_view text, int32_t max_depth, nlohmann::ordered_json* out,
                      BoundedJsonError* error);

// The same with kMaxJsonDepth, a discarded value (is_discarded()) on any error.
nlohmann::ordered_json ParseBoundedOrderedOrDiscarded(std::string_view text);

}  // namespace tandem::text
