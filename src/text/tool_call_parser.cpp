#include "text/tool_call_parser.h"

#include <algorithm>

#include "text/string_search.h"

namespace tandem::text {
namespace {

constexpr std::string_view kBlockStart = "<tool_call>";
constexpr std::string_view kBlockEnd = "</tool_call>";

bool AllSpace(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
}

}  // namespace

Result<std::unique_ptr<ToolCallParser>> ToolCallParser::Create(
    std::string_view name, const nlohmann::ordered_json& tools) {
  if (name == "hermes") return MakeHermesToolCallParser();
  if (name == "qwen3_coder") return MakeQwen3CoderToolCallParser(tools);
  return InvalidArgument("unknown tool call parser '" + std::string(name) +
                         "'; expected hermes or qwen3_coder");
}

void ToolCallParser::EmitContent(ToolCallDelta* out, std::string_view text) {
  if (text.empty()) return;
  if (num_calls_ > 0 && AllSpace(text)) {
    pending_ws_.append(text);
    return;
  }
  out->content += pending_ws_;
  pending_ws_.clear();
  out->content.append(text);
}

void ToolCallParser::CloseBlock(ToolCallDelta* out, bool terminated) {
  std::optional<std::vector<ToolCall>> calls = ParseBlock(buffer_);
  if (calls && !calls->empty()) {
    pending_ws_.clear();
    num_calls_ += static_cast<int32_t>(calls->size());
    for (ToolCall& call : *calls) out->calls.push_back(std::move(call));
  } else {  // not a tool call after all: the model's text, verbatim
    std::string raw = std::string(kBlockStart) + buffer_;
    if (terminated) raw += kBlockEnd;
    EmitContent(out, raw);
  }
  buffer_.clear();
  in_block_ = false;
}

ToolCallDelta ToolCallParser::Feed(std::string_view text) {
  ToolCallDelta out;
  buffer_.append(text);
  while (true) {
    if (in_block_) {
      const size_t end = buffer_.find(kBlockEnd);
      if (end == std::string::npos) break;
      const std::string rest = buffer_.substr(end + kBlockEnd.size());
      buffer_.resize(end);
      CloseBlock(&out, /*terminated=*/true);
      buffer_ = rest;
      continue;
    }
    const size_t start = buffer_.find(kBlockStart);
    if (start != std::string::npos) {
      EmitContent(&out, std::string_view(buffer_).substr(0, start));
      buffer_.erase(0, start + kBlockStart.size());
      in_block_ = true;
      continue;
    }
    const size_t hold = PartialTagSuffix(buffer_, kBlockStart);
    EmitContent(&out, std::string_view(buffer_).substr(0, buffer_.size() - hold));
    buffer_.erase(0, buffer_.size() - hold);
    break;
  }
  return out;
}

ToolCallDelta ToolCallParser::Finish() {
  ToolCallDelta out;
  if (in_block_) {
    CloseBlock(&out, /*terminated=*/false);
  } else {
    EmitContent(&out, buffer_);
    buffer_.clear();
  }
  pending_ws_.clear();
  return out;
}

ToolCallDelta ToolCallParser::ParseAll(std::string_view text) {
  ToolCallDelta out = Feed(text);
  ToolCallDelta tail = Finish();
  out.content += tail.content;
  for (ToolCall& call : tail.calls) out.calls.push_back(std::move(call));
  return out;
}

}  // namespace tandem::text
