// The nesting limit of JSON that clients send, one for every server in the binary: `tandem
// serve`'s request bodies (text/bounded_json.h) and `tandem manager`'s /v2 API and /v1 gateway
// (cluster/manager/rest_util.h), so that a body the gateway passes on is one the instance
// takes, and a body the instance takes is never refused by the gateway in front of it.
#pragma once

#include <cstdint>

namespace tandem {

// Arrays/objects inside each other, the outermost value counting 1. Generous for tool schemas
// and arguments (OpenAI's own structured output schemas allow 10 levels), and small enough that
// recursive walks (nlohmann's copy, dump, comparison and destruction; template rendering) use a
// few KiB of stack.
inline constexpr int32_t kMaxJsonDepth = 128;

// Keys of one JSON object: a logit_bias over a 262,144-token vocabulary (Gemma's) fits. Counted
// while parsing; objects are built in linear time (text/bounded_json.h), so this bounds what
// later lookups in one object cost, not the parse.
inline constexpr int64_t kMaxJsonObjectKeys = 262'144;

// Values in one JSON text (every scalar, array and object, keys not counted): 4,194,304, so a
// 16 MiB body of `[0,0,...]` (8M values, 128 MiB as nlohmann values) is refused at 64 MiB.
inline constexpr int64_t kMaxJsonValues = int64_t{1} << 22;

}  // namespace tandem
