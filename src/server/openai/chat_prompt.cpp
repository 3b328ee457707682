#include "server/openai/chat_prompt.h"

#include "server/openai/chat_output.h"
#include "text/chat_template.h"
#include "text/reasoning_parser.h"
#include "text/string_search.h"

namespace tandem::server::openai {
namespace {

std::string_view Strip(std::string_view s, bool left, bool right) {
  auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (left && !s.empty() && space(s.front())) s.remove_prefix(1);
  while (right && !s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

nlohmann::ordered_json ChatTemplateContext(const ChatInput& input, const ServerConfig& config,
                                           const text::Tokenizer& tokenizer) {
  nlohmann::ordered_json context = config.default_chat_template_kwargs.is_object()
                                       ? config.default_chat_template_kwargs
                                       : nlohmann::ordered_json::object();
  for (const auto& [key, value] : input.chat_template_kwargs.items()) context[key] = value;
  if (!input.documents.is_null()) context["documents"] = input.documents;
  if (!input.reasoning_effort.empty()) context["reasoning_effort"] = input.reasoning_effort;
  context["messages"] = input.messages;
  if (input.tools.is_array() && !input.tools.empty()) context["tools"] = input.tools;
  context["add_generation_prompt"] = input.add_generation_prompt;
  context["bos_token"] = tokenizer.bos_token();
  context["eos_token"] = tokenizer.eos_token();
  return context;
}

Result<std::shared_ptr<const text::ChatTemplate>> LoadChatTemplate(
    const ServerConfig& config, const text::Tokenizer& tokenizer) {
  auto parsed = text::ChatTemplate::Parse(*config.chat_template);
  if (!parsed.ok()) {
    return InvalidArgument(
        "cannot parse the chat template (--chat-template, or the model's "
        "own): " +
        parsed.status().message());
  }
  auto chat_template = std::make_shared<const text::ChatTemplate>(std::move(parsed).value());
  ChatInput minimal;
  minimal.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "Hello"}}});
  auto rendered = chat_template->Render(ChatTemplateContext(minimal, config, tokenizer),
                                        config.chat_template_limits);
  if (!rendered.ok()) {
    return InvalidArgument(
        "the chat template (--chat-template, or the model's own) cannot "
        "render a minimal conversation [{\"role\": \"user\", \"content\": "
        "\"Hello\"}]: " +
        rendered.status().message());
  }
  return std::shared_ptr<const text::ChatTemplate>(std::move(chat_template));
}

ApiResult<std::string> CutAfterFinalMessage(const std::string& rendered,
                                            const std::string& final_content) {
  const std::string_view stripped = Strip(final_content, true, true);
  const size_t at = text::FindLast(rendered, stripped);  // linear: rfind is O(n·m)
  if (stripped.empty() || at == std::string::npos) {
    return BadParam("messages",
                    "continue_final_message is set but the final message's content "
                    "does not appear in the prompt the chat template rendered");
  }
  const std::string_view lstripped = Strip(final_content, true, false);
  if (std::string_view(rendered).substr(at, lstripped.size()) == lstripped) {
    return rendered.substr(0, at + lstripped.size());
  }
  return rendered.substr(0, at + stripped.size());
}

ApiResult<std::string> RenderChatPrompt(const ServerContext& context, const ChatInput& input) {
  std::shared_ptr<const text::ChatTemplate> request_template;
  if (input.chat_template) {
    if (!context.config.trust_request_chat_template) {
      return BadParam("chat_template",
                      "Chat template is passed with request, but "
                      "--trust-request-chat-template is not set. Refused "
                      "request with untrusted chat template.");
    }
    auto parsed = text::ChatTemplate::Parse(*input.chat_template);
    if (!parsed.ok()) {
      return BadParam("chat_template",
                      "cannot parse the request's chat_template: " + parsed.status().message());
    }
    request_template = std::make_shared<const text::ChatTemplate>(std::move(parsed).value());
  }
  const text::ChatTemplate* chat_template =
      request_template ? request_template.get() : context.chat_template.get();
  if (chat_template == nullptr) {
    return BadParam("messages",
                    "the model has no chat template; start the server with "
                    "--chat-template FILE, or use /v1/completions");
  }
  const nlohmann::ordered_json template_context =
      ChatTemplateContext(input, context.config, *context.tokenizer);
  text::ChatTemplateLimits limits = context.config.chat_template_limits;
  limits.client_gone = input.client_gone.get();
  auto rendered = chat_template->Render(template_context, limits);
  if (!rendered.ok() && rendered.status().code() == StatusCode::kUnavailable) {
    return ApiError{rendered.status(), ""};  // cancelled: shutdown, or the client has gone
  }
  if (!rendered.ok()) {
    return BadParam("messages", "cannot apply the chat template to these messages: " +
                                    rendered.status().message());
  }
  if (!input.continue_final_message) return std::move(rendered).value();
  const auto& last = input.messages.back();
  return CutAfterFinalMessage(rendered.value(), last.value("content", std::string()));
}

ApiResult<ChatPrompt> TokenizeChatPrompt(const ServerContext& context, const ChatInput& input) {
  ChatPrompt prompt;
  TANDEM_API_ASSIGN_OR_RETURN(prompt.text, RenderChatPrompt(context, input));
  const text::Tokenizer& tokenizer = *context.tokenizer;
  const std::string bos = tokenizer.bos_token();
  const bool starts_with_bos = !bos.empty() && prompt.text.rfind(bos, 0) == 0;
  prompt.token_ids = tokenizer.Encode(prompt.text, /*add_special_tokens=*/!starts_with_bos);
  if (prompt.token_ids.empty()) {
    return BadParam("messages", "the chat template rendered an empty prompt");
  }
  return prompt;
}

ApiResult<ChatPrompt> PrepareChatPrompt(const ServerContext& context,
                                        ChatCompletionRequest* request) {
  TANDEM_API_ASSIGN_OR_RETURN(bool tools_ok, CheckToolChoice(request->input, context.config));
  (void)tools_ok;
  TANDEM_API_ASSIGN_OR_RETURN(ChatPrompt prompt, TokenizeChatPrompt(context, request->input));
  protocol::SamplingParams& sampling = request->common.sampling;
  const text::ThinkState think = text::PromptThinkState(prompt.text);
  if (!sampling.structured_grammar.empty() && !context.config.reasoning_parser.empty() &&
      think != text::ThinkState::kClosed) {
    const std::vector<int32_t> think_end = context.tokenizer->Encode("</think>", false);
    const std::vector<int32_t> think_start = context.tokenizer->Encode("<think>", false);
    if (think_end.size() == 1) {
      sampling.structured_after_token_id = think_end[0];
      // No open block in the prompt: the model may open one with its first token, else its
      // output is content and constrained from the start (as the reasoning parser reads it).
      if (think == text::ThinkState::kNone && think_start.size() == 1) {
        sampling.structured_think_start_token_id = think_start[0];
      }
    }
  }
  TANDEM_API_ASSIGN_OR_RETURN(
      bool unused, ResolveMaxTokens(&request->common, static_cast<int32_t>(prompt.token_ids.size()),
                                    Endpoint::kChatCompletions, context.config));
  (void)unused;
  return prompt;
}

}  // namespace tandem::server::openai
