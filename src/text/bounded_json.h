// ParseBoundedJson: JSON text → a JSON value, refusing nesting deeper than a limit (and more
// keys or values than core/json_limits.h allows) *while* parsing, so that no later step (copy,
// dump, comparison, template rendering — all recursive in nlohmann::json and in our own walks) ever
// sees a value deeper than that limit.
//
// Every JSON that comes from a user or from the model goes through here: request bodies, tool
// call arguments sent as JSON text, tool calls the model writes. The parse itself is nlohmann's
// (iterative, with an explicit stack); the DOM is built by our SAX handler, which stops at the
// first array or object opening past `max_depth` (or value past a size limit) and builds
// objects in linear time.
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
  bool too_deep = false;   // the text nests deeper than max_depth
  std::string message;     // what was wrong, e.g. "JSON nests deeper than 128 levels ..."
  bool too_large = false;  // past kMaxJsonObjectKeys or kMaxJsonValues (message names which)
};

// Parses `text` (one JSON value, nothing after it but whitespace) into *out, in time linear in
// its length (objects included: keys are appended, not searched; a repeated key keeps its
// first place and its last value, as nlohmann's parser).
// Returns true on success; false with *error filled on malformed JSON (a raw NUL byte included:
// nlohmann would end the text there), invalid UTF-8, a number beyond double range, nesting
// deeper than `max_depth` levels, an object of more than kMaxJsonObjectKeys keys or more than
// kMaxJsonValues values in all (core/json_limits.h); then *out is null.
// Never throws. Thread-safe.
bool ParseBoundedJson(std::string_view text, int32_t max_depth, nlohmann::json* out,
                      BoundedJsonError* error);
bool ParseBoundedJson(std::string_view text, int32_t max_depth, nlohmann::ordered_json* out,
                      BoundedJsonError* error);

// The same with kMaxJsonDepth, a discarded value (is_discarded()) on any error.
nlohmann::ordered_json ParseBoundedOrderedOrDiscarded(std::string_view text);

}  // namespace tandem::text
