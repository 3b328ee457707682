#include "server/openai/chat_prompt.h"

#include "server/openai/chat_completions.h"
#include "text/chat_template.h"
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

Result<std::shared_ptr<const text::ChatTemplate>> LoadChatTemplate(
    const ServerConfig& config, const text::Tokenizer& tokenizer) {
  auto parsed = text::ChatTemplate::Parse(*config.chat_template);
  if (!parsed.ok()) {
    return InvalidArgument("cannot parse the chat template (--chat-template, or the model's "
                           "own): " + parsed.status().message());
  }
  auto chat_template = std::make_shared<const text::ChatTemplate>(std::move(parsed).value());
  ChatInput minimal;
  minimal.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "Hello"}}});
  auto rendered = chat_template->Render(ChatTemplateContext(minimal, config, tokenizer),
                                        config.chat_template_limits);
  if (!rendered.ok()) {
    return InvalidArgument("the chat template (--chat-template, or the model's own) cannot "
                           "render a minimal conversation [{\"role\": \"user\", \"content\": "
                           "\"Hello\"}]: " + rendered.status().message());
  }
  return std::shared_ptr<const text::ChatTemplate>(std::move(chat_template));
}

ApiResult<std::string> CutAfterFinalMessage(const std::string& rendered,
                                            const std::string& final_content) {
  const std::string_view stripped = Strip(final_content, true, true);
  const size_t at = text::FindLast(rendered, stripped);  // linear: rfind is O(n·m)
  if (stripped.empty() || at == std::string::npos) {
    return BadParam("messages", "continue_final_message is set but the final message's content "
                                "does not appear in the prompt the chat template rendered");
  }
  const std::string_view lstripped = Strip(final_content, true, false);
  if (std::string_view(rendered).substr(at, lstripped.size()) == lstripped) {
    return rendered.substr(0, at + lstripped.size());
  }
  return rendered.substr(0, at + stripped.size());
}

ApiResult<std::string> RenderChatPrompt(const ServerContext& context, const ChatInput& input) {
  if (!context.chat_template) {
    return BadParam("messages", "the model has no chat template; start the server with "
                                "--chat-template FILE, or use /v1/completions");
  }
  const nlohmann::ordered_json template_context =
      ChatTemplateContext(input, context.config, *context.tokenizer);
  auto rendered = context.chat_template->Render(template_context,
                                                context.config.chat_template_limits);
  if (!rendered.ok() && rendered.status().code() == StatusCode::kUnavailable) {
    return ApiError{rendered.status(), ""};  // cancelled: the server is shutting down
  }
  if (!rendered.ok()) {
    return BadParam("messages", "cannot apply the chat template to these messages: " +
                                    rendered.status().message());
  }
  if (!input.continue_final_message) return std::move(rendered).value();
  const auto& last = input.messages.back();
  return CutAfterFinalMessage(rendered.value(), last.value("content", std::string()));
}

}  // namespace tandem::server::openai
