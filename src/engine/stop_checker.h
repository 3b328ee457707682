// Token-level stop conditions, checked after each generated token. Stop *strings* are not
// checked here: the API server detokenizes, matches them and aborts the request.
// Reference: vLLM v1 core/sched/utils.check_stop. Deviation: EOS and stop_token_ids are checked
// before the length limits, so a stop token sampled as the last allowed token reports kStop
// (OpenAI finish_reason "stop"), and the length limits apply even before min_tokens.
#pragma once

#include <cstdint>

#include "engine/request.h"
#include "protocol/engine_output.h"

namespace tandem::engine {

// Decides whether `request`, whose last output token was just appended, is finished:
//  - kStop when num_output_tokens >= min_tokens and the last token is an EOS id (unless
//    ignore_eos) or one of stop_token_ids (then request.stop_token_id is set to it);
//  - kLength when num_output_tokens reaches max_tokens or num_tokens reaches max_model_len;
//  - kNone otherwise.
// Sets request.status to the matching finished status when it returns a reason.
protocol::FinishReason CheckStop(Request& request, int32_t max_model_len);

}  // namespace tandem::engine
