// The chat prompt of a request: ChatInput → the model's chat template → prompt text, with
// vLLM/HF continue_final_message semantics. Shared by /v1/chat/completions and /tokenize.
// Reference: HF transformers apply_chat_template (continue_final_message), vLLM
// entrypoints/chat_utils.py apply_hf_chat_template.
#pragma once

#include <string>
#include <vector>

#include "server/errors.h"
#include "server/openai/chat_completions_types.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// The template context: --default-chat-template-kwargs, overridden by the request's
// chat_template_kwargs (each a top-level variable, as HF apply_chat_template(**kwargs)), then
// documents and reasoning_effort (when given), messages, tools (when given),
// add_generation_prompt, bos_token, eos_token.
nlohmann::ordered_json ChatTemplateContext(const ChatInput& input, const ServerConfig& config,
                                           const text::Tokenizer& tokenizer);

// Parses config.chat_template (the --chat-template file or the model's own) once at start-up
// and renders a minimal conversation ([{"role": "user", "content": "Hello"}], with the
// generation prompt) within config.chat_template_limits, so a template that cannot serve any
// request is refused before the server listens.
// Errors: kInvalidArgument naming the template's line and column (a parse error, a runtime
// error, raise_exception or a limit reached on the minimal conversation).
Result<std::shared_ptr<const text::ChatTemplate>> LoadChatTemplate(
    const ServerConfig& config, const text::Tokenizer& tokenizer);

// Renders the template with ChatTemplateContext(input). With continue_final_message the text
// is cut right after the last message's content so the model continues it.
// Errors (400, param "messages"): no chat template; the template raised or failed (its
// message), or hit one of config.chat_template_limits (named in the message);
// continue_final_message when the final message's content is not in the prompt. 503 when the
// render was cancelled by shutdown or by the client leaving (input.client_gone; the connection
// is then gone and nothing is sent).
ApiResult<std::string> RenderChatPrompt(const ServerContext& context, const ChatInput& input);

// HF's cut: `rendered` up to the end of the last occurrence of `final_content` (stripped);
// trailing whitespace of the content is kept only when the template kept it.
// Errors: 400 when the stripped content does not occur.
ApiResult<std::string> CutAfterFinalMessage(const std::string& rendered,
                                            const std::string& final_content);

// A chat request's prompt: the rendered text and its token ids.
struct ChatPrompt {
  std::string text;
  std::vector<int32_t> token_ids;
};

// Renders `input` (RenderChatPrompt) and tokenizes the text: add_special_tokens=false when it
// already starts with the BOS string (templates that write `{{ bos_token }}`), else true, so BOS
// is never doubled nor lost. Used by /v1/chat/completions, /v1/messages and its count_tokens.
// Errors: those of RenderChatPrompt; 400 (param "messages") for an empty prompt.
ApiResult<ChatPrompt> TokenizeChatPrompt(const ServerContext& context, const ChatInput& input);

// What generation needs before and from the prompt: the tool choice checked against the
// server's flags (CheckToolChoice), TokenizeChatPrompt, then a reasoning model's grammar
// applies once its reasoning has ended (sampling.structured_after_token_id = the id of
// "</think>", unless the prompt already closed the think block, as vLLM), and max_tokens is
// resolved against --max-model-len (ResolveMaxTokens). Used by /v1/chat/completions,
// /v1/responses and /v1/messages. Errors: those of CheckToolChoice (400, "auto" without the
// flags), TokenizeChatPrompt and ResolveMaxTokens (400: prompt + max_tokens over max_model_len).
ApiResult<ChatPrompt> PrepareChatPrompt(const ServerContext& context,
                                        ChatCompletionRequest* request);

}  // namespace tandem::server::openai
