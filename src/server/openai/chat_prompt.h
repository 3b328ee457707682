// The chat prompt of a request: ChatInput → the model's chat template → prompt text, with
// vLLM/HF continue_final_message semantics. Shared by /v1/chat/completions and /tokenize.
// Reference: HF transformers apply_chat_template (continue_final_message), vLLM
// entrypoints/chat_utils.py apply_hf_chat_template.
#pragma once

#include <string>

#include "server/errors.h"
#include "server/openai/chat_completions_types.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// Renders the template with ChatTemplateContext(input). With continue_final_message the text
// is cut right after the last message's content so the model continues it.
// Errors (400, param "messages"): no chat template; the template raised or failed (its
// message); continue_final_message when the final message's content is not in the prompt.
ApiResult<std::string> RenderChatPrompt(const ServerContext& context, const ChatInput& input);

// HF's cut: `rendered` up to the end of the last occurrence of `final_content` (stripped);
// trailing whitespace of the content is kept only when the template kept it.
// Errors: 400 when the stripped content does not occur.
ApiResult<std::string> CutAfterFinalMessage(const std::string& rendered,
                                            const std::string& final_content);

}  // namespace tandem::server::openai
