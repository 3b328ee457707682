#include "server/openai/response_output.h"

#include "server/server_context.h"

namespace tandem::server::openai {

using nlohmann::json;

namespace {

bool IsSpace(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

json OutputTextPart(const std::string& text) {
  return {{"type", "output_text"},
          {"text", text},
          {"annotations", json::array()},
          {"logprobs", json::array()}};
}

json ReasoningTextPart(const std::string& text) {
  return {{"type", "reasoning_text"}, {"text", text}};
}

}  // namespace

ResponseOutputBuilder::ResponseOutputBuilder(ChatOutputParser parser, EventSink on_event)
    : parser_(std::move(parser)), on_event_(std::move(on_event)) {}

void ResponseOutputBuilder::Feed(std::string_view text, int32_t num_tokens) {
  Add(parser_.Feed(text), num_tokens);
}

void ResponseOutputBuilder::Finish(bool incomplete) {
  Add(parser_.Finish(), 0);
  if (items_.empty() && !pending_space_.empty()) {  // only whitespace, and nothing else: say it
    OpenItem(Open::kMessage);
    AddContent("");
  }
  CloseItem(incomplete ? "incomplete" : "completed");
}

void ResponseOutputBuilder::Add(ChatOutputParts parts, int32_t num_tokens) {
  const bool nothing = parts.content.empty() && parts.calls.empty();
  if (nothing && (!parts.reasoning.empty() || open_ == Open::kReasoning)) {
    num_reasoning_tokens_ += num_tokens;  // reasoning text, or a tag inside the think block
  }
  if (!parts.reasoning.empty()) AddReasoning(parts.reasoning);
  if (!parts.content.empty()) AddContent(parts.content);
  for (const text::ToolCall& call : parts.calls) AddCall(call);
}

void ResponseOutputBuilder::AddReasoning(const std::string& text) {
  if (open_ != Open::kReasoning) {
    CloseItem("completed");
    OpenItem(Open::kReasoning);
  }
  open_text_ += text;
  Emit("response.reasoning_text.delta", {{"item_id", items_.back()["id"]},
                                         {"output_index", open_index()},
                                         {"content_index", 0},
                                         {"delta", text}});
}

void ResponseOutputBuilder::AddContent(const std::string& text) {
  std::string delta = text;
  if (open_ != Open::kMessage) {
    if (IsSpace(text)) {  // wait: a message of blank lines next to reasoning or a call is noise
      pending_space_ += text;
      return;
    }
    CloseItem("completed");
    OpenItem(Open::kMessage);
  }
  if (!pending_space_.empty()) {
    delta = pending_space_ + delta;
    pending_space_.clear();
  }
  open_text_ += delta;
  Emit("response.output_text.delta", {{"item_id", items_.back()["id"]},
                                      {"output_index", open_index()},
                                      {"content_index", 0},
                                      {"delta", delta},
                                      {"logprobs", json::array()}});
}

void ResponseOutputBuilder::AddCall(const text::ToolCall& call) {
  CloseItem("completed");
  pending_space_.clear();
  json item = {{"type", "function_call"},
               {"id", RandomRequestId("fc_")},
               {"call_id", RandomRequestId("call_")},
               {"name", call.name},
               {"arguments", ""},
               {"status", "in_progress"}};
  items_.push_back(item);
  const int32_t index = open_index();
  Emit("response.output_item.added", {{"output_index", index}, {"item", item}});
  Emit("response.function_call_arguments.delta",
       {{"item_id", item["id"]}, {"output_index", index}, {"delta", call.arguments}});
  Emit("response.function_call_arguments.done", {{"item_id", item["id"]},
                                                 {"output_index", index},
                                                 {"name", call.name},
                                                 {"arguments", call.arguments}});
  item["arguments"] = call.arguments;
  item["status"] = "completed";
  items_.back() = item;
  Emit("response.output_item.done", {{"output_index", index}, {"item", std::move(item)}});
}

void ResponseOutputBuilder::OpenItem(Open kind) {
  const bool reasoning = kind == Open::kReasoning;
  json item = reasoning ? json{{"type", "reasoning"},
                               {"id", RandomRequestId("rs_")},
                               {"summary", json::array()},
                               {"content", json::array()},
                               {"status", "in_progress"}}
                        : json{{"type", "message"},
                               {"id", RandomRequestId("msg_")},
                               {"role", "assistant"},
                               {"status", "in_progress"},
                               {"content", json::array()}};
  items_.push_back(item);
  open_ = kind;
  open_text_.clear();
  const int32_t index = open_index();
  Emit("response.output_item.added", {{"output_index", index}, {"item", item}});
  Emit("response.content_part.added",
       {{"item_id", item["id"]},
        {"output_index", index},
        {"content_index", 0},
        {"part", reasoning ? ReasoningTextPart("") : OutputTextPart("")}});
}

void ResponseOutputBuilder::CloseItem(const char* status) {
  if (open_ == Open::kNone) return;
  const bool reasoning = open_ == Open::kReasoning;
  json& item = items_.back();
  const int32_t index = open_index();
  json done = {
      {"item_id", item["id"]}, {"output_index", index}, {"content_index", 0}, {"text", open_text_}};
  if (!reasoning) done["logprobs"] = json::array();
  Emit(reasoning ? "response.reasoning_text.done" : "response.output_text.done", std::move(done));
  json part = reasoning ? ReasoningTextPart(open_text_) : OutputTextPart(open_text_);
  Emit("response.content_part.done",
       {{"item_id", item["id"]}, {"output_index", index}, {"content_index", 0}, {"part", part}});
  item["content"] = json::array({std::move(part)});
  item["status"] = status;
  Emit("response.output_item.done", {{"output_index", index}, {"item", item}});
  open_ = Open::kNone;
  open_text_.clear();
}

void ResponseOutputBuilder::Emit(const char* type, json fields) {
  if (!on_event_) return;
  fields["type"] = type;
  on_event_(std::move(fields));
}

nlohmann::ordered_json ResponseOutputBuilder::AssistantMessage() const {
  std::string content;
  nlohmann::ordered_json tool_calls = nlohmann::ordered_json::array();
  for (const json& item : items_) {
    if (item["type"] == "message" && !item["content"].empty()) {
      content += item["content"][0]["text"].get<std::string>();
    } else if (item["type"] == "function_call") {
      tool_calls.push_back(
          {{"id", item["call_id"]},
           {"type", "function"},
           {"function", {{"name", item["name"]}, {"arguments", item["arguments"]}}}});
    }
  }
  nlohmann::ordered_json message = {{"role", "assistant"}, {"content", content}};
  if (!tool_calls.empty()) message["tool_calls"] = std::move(tool_calls);
  return message;
}

}  // namespace tandem::server::openai
