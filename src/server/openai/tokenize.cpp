#include "server/openai/tokenize.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/json_dump.h"
#include "server/openai/chat_completions_types.h"
#include "server/openai/chat_prompt.h"
#include "server/openai/request_parsing.h"
#include "server/openai/serving.h"

namespace tandem::server::openai {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

ApiResult<bool> CheckModel(const json& body, const ServerConfig& config) {
  if (!body.contains("model") || body["model"].is_null()) return true;
  if (!body["model"].is_string()) return BadParam("model", "'model' must be a string");
  for (const std::string& name : config.served_model_names) {
    if (name == body["model"].get<std::string>()) return true;
  }
  return ApiError{
      NotFound(fmt::format("The model `{}` does not exist.", body["model"].get<std::string>())),
      "model"};
}

struct Tokenized {
  std::vector<int32_t> ids;
  json prompt = nullptr;  // the rendered chat prompt (messages only)
};

ApiResult<Tokenized> TokenizeBody(const ServerContext& context, const json& body,
                                  const OJson& ordered, const HttpRequest& request) {
  const bool has_prompt = body.contains("prompt") && !body["prompt"].is_null();
  const bool has_messages = body.contains("messages") && !body["messages"].is_null();
  if (has_prompt == has_messages) {
    return BadParam(has_prompt ? "messages" : "prompt",
                    "send exactly one of 'prompt' (a string) or 'messages' (chat messages)");
  }
  Tokenized out;
  if (has_prompt) {
    if (!body["prompt"].is_string()) return BadParam("prompt", "'prompt' must be a string");
    TANDEM_API_ASSIGN_OR_RETURN(const bool add_special, GetBool(body, "add_special_tokens", true));
    out.ids = context.tokenizer->Encode(body["prompt"].get<std::string>(), add_special);
    return out;
  }
  TANDEM_API_ASSIGN_OR_RETURN(ChatInput input, ParseChatInput(ordered, context.config));
  input.client_gone = request.client_gone;
  if (!request.authorized && input.chat_template.has_value()) {
    // /tokenize is outside /v1, open to anyone as in vLLM; running a request's own template
    // (--trust-request-chat-template) is not: it needs the key when one is set.
    return ApiError{Status(StatusCode::kUnauthenticated,
                           "'chat_template' in a /tokenize request needs an API key (--api-key "
                           "is set); send 'Authorization: Bearer <key>' or 'x-api-key: <key>'"),
                    "chat_template"};
  }
  TANDEM_API_ASSIGN_OR_RETURN(std::string prompt, RenderChatPrompt(context, input));
  // vLLM tokenizes chat prompts with add_special_tokens=false unless asked.
  TANDEM_API_ASSIGN_OR_RETURN(const bool add_special, GetBool(body, "add_special_tokens", false));
  out.ids = context.tokenizer->Encode(prompt, add_special);
  out.prompt = std::move(prompt);
  return out;
}

}  // namespace

void HandleTokenize(const ServerContext& context, const HttpRequest& request,
                    std::shared_ptr<ResponseSink> sink) {
  auto ordered = ParseOrderedJsonObject(request.body);  // key order kept for the template
  if (!ordered.ok()) return SendError(*sink, ordered.error());
  const json body = ordered.value();
  auto model = CheckModel(body, context.config);
  if (!model.ok()) return SendError(*sink, model.error());
  auto token_strs = GetBool(body, "return_token_strs", false);
  if (!token_strs.ok()) return SendError(*sink, token_strs.error());
  auto tokenized = TokenizeBody(context, body, ordered.value(), request);
  if (!tokenized.ok()) return SendError(*sink, tokenized.error());
  const std::vector<int32_t>& ids = tokenized.value().ids;
  json response = {{"count", ids.size()},
                   {"max_model_len", context.config.max_model_len},
                   {"tokens", ids},
                   {"token_strs", nullptr}};
  if (token_strs.value()) {
    response["token_strs"] = json::array();
    for (int32_t id : ids) response["token_strs"].push_back(context.tokenizer->IdToPiece(id));
  }
  if (!tokenized.value().prompt.is_null()) response["prompt"] = tokenized.value().prompt;
  sink->SendResponse(200, "application/json", DumpJson(response));
}

void HandleDetokenize(const ServerContext& context, const HttpRequest& request,
                      std::shared_ptr<ResponseSink> sink) {
  auto ordered = ParseOrderedJsonObject(request.body);
  if (!ordered.ok()) return SendError(*sink, ordered.error());
  const json body = ordered.value();
  auto model = CheckModel(body, context.config);
  if (!model.ok()) return SendError(*sink, model.error());
  const json& tokens = body.contains("tokens") ? body["tokens"] : json();
  if (!tokens.is_array()) {
    return SendError(*sink, BadParam("tokens", "'tokens' must be an array of token ids"));
  }
  std::vector<int32_t> ids;
  const int32_t vocab = context.tokenizer->vocab_size();
  for (const json& t : tokens) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab) {
      return SendError(*sink, BadParam("tokens", fmt::format("'tokens' must hold token ids in "
                                                             "[0, {}); found {}",
                                                             vocab, t.dump())));
    }
    ids.push_back(t.get<int32_t>());
  }
  const std::string text = context.tokenizer->Decode(ids, /*skip_special_tokens=*/false);
  sink->SendResponse(200, "application/json", DumpJson({{"prompt", text}}));
}

}  // namespace tandem::server::openai
