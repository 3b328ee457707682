#include "text/chat_template.h"

#include "text/jinja/error.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/lexer.h"
#include "text/jinja/parser.h"

namespace tandem::text {
namespace {

Status ToStatus(const jinja::TemplateError& error) {
  if (error.raised()) return InvalidArgument(error.what());
  return InvalidArgument("chat template line " + std::to_string(error.line()) + ", column " +
                         std::to_string(error.column()) + ": " + error.what());
}

}  // namespace

Result<ChatTemplate> ChatTemplate::Parse(std::string source) {
  ChatTemplate chat_template;
  try {
    jinja::LexerOptions options;  // trim_blocks + lstrip_blocks, as HF renders
    auto body = std::make_shared<jinja::Body>(jinja::Parse(jinja::Tokenize(source, options)));
    chat_template.body_ = std::move(body);
  } catch (const jinja::TemplateError& error) {
    return ToStatus(error);
  }
  chat_template.source_ = std::make_shared<const std::string>(std::move(source));
  return chat_template;
}

Result<std::string> ChatTemplate::Render(const nlohmann::json& context,
                                         const ChatTemplateLimits& limits) const {
  return Render(nlohmann::ordered_json(context), limits);
}

Result<std::string> ChatTemplate::Render(const nlohmann::ordered_json& context,
                                         const ChatTemplateLimits& limits) const {
  if (!context.is_object()) {
    return InvalidArgument("chat template context must be a JSON object, got " +
                           std::string(context.type_name()));
  }
  try {
    jinja::Interpreter interpreter(context, limits);
    return interpreter.Render(*body_);
  } catch (const jinja::TemplateError& error) {
    if (limits.cancelled != nullptr && limits.cancelled->load()) {
      return Unavailable("the chat template render was cancelled: the server is shutting down");
    }
    if (limits.client_gone != nullptr && limits.client_gone->load()) {
      return Unavailable(
          "the chat template render was cancelled: the client closed the connection");
    }
    return ToStatus(error);
  } catch (const nlohmann::json::exception& error) {
    return InvalidArgument(std::string("chat template render failed: ") + error.what());
  }
}

}  // namespace tandem::text
