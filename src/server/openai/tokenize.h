// POST /tokenize and POST /detokenize, as vLLM's OpenAI server has them (not under /v1).
//   /tokenize {"prompt": str, "add_special_tokens": true}  or
//             {"messages": [...], "add_generation_prompt": true, "continue_final_message",
//              "add_special_tokens": false, "chat_template_kwargs", "tools"}
//             + "model", "return_token_strs" (false)
//     → {"count", "max_model_len", "tokens": [ids], "token_strs": [pieces] | null}
//       and, for messages, "prompt": the rendered template text (a tandem addition).
//   /detokenize {"tokens": [ids], "model"} → {"prompt": text} (special tokens kept).
// Reference: vLLM entrypoints/openai/protocol.py TokenizeCompletionRequest,
// TokenizeChatRequest, TokenizeResponse, DetokenizeRequest; serving_tokenization.py.
#pragma once

#include <memory>

#include "server/http_types.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// Errors: 400 (malformed body, neither/both prompt and messages, bad messages, a token id
// outside the vocabulary), 404 unknown model.
void HandleTokenize(const ServerContext& context, const HttpRequest& request,
                    std::shared_ptr<ResponseSink> sink);
void HandleDetokenize(const ServerContext& context, const HttpRequest& request,
                      std::shared_ptr<ResponseSink> sink);

}  // namespace tandem::server::openai
