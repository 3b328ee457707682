#include "server/openai/forced_tool_call_stream.h"

#include <nlohmann/json.hpp>

#include <utility>

namespace tandem::server::openai {

namespace {

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The value of a complete JSON string literal ("\"a\\u00e9\"" → "aé"); "" if it is not one.
std::string DecodeJsonString(const std::string& literal) {
  const nlohmann::json value = nlohmann::json::parse(literal, nullptr, /*allow_exceptions=*/false);
  return value.is_string() ? value.get<std::string>() : std::string();
}

}  // namespace

ForcedToolCallStream::ForcedToolCallStream(std::string named_function)
    : named_function_(std::move(named_function)) {}

void ForcedToolCallStream::Append(ToolCallStreamDelta delta,
                                  std::vector<ToolCallStreamDelta>* out) {
  if (!out->empty() && out->back().index == delta.index && delta.name.empty()) {
    out->back().arguments += delta.arguments;
    return;
  }
  out->push_back(std::move(delta));
}

std::vector<ToolCallStreamDelta> ForcedToolCallStream::Feed(std::string_view text) {
  std::vector<ToolCallStreamDelta> out;
  if (text.empty()) return out;
  if (!named_function_.empty()) {
    if (num_calls_ == 0) {
      num_calls_ = 1;
      out.push_back({0, named_function_, std::string(text)});
    } else {
      out.push_back({0, "", std::string(text)});
    }
    return out;
  }
  for (char c : text) Char(c, &out);
  return out;
}

void ForcedToolCallStream::Emit(std::string_view arguments, std::vector<ToolCallStreamDelta>* out) {
  if (arguments.empty()) return;
  if (name_.empty()) {
    pending_ += arguments;  // "parameters" before "name": held until the call can start
    return;
  }
  Append({num_calls_ - 1, "", std::string(arguments)}, out);
}

void ForcedToolCallStream::EndValue(std::vector<ToolCallStreamDelta>* out) {
  if (key_ == "name" && collecting_) {
    collecting_ = false;
    name_ = DecodeJsonString(collected_);
    if (!name_.empty()) {
      ++num_calls_;
      Append({num_calls_ - 1, name_, std::move(pending_)}, out);
      pending_.clear();
    }
  }
  streaming_ = false;
  phase_ = Phase::kAfterValue;
}

void ForcedToolCallStream::Char(char c, std::vector<ToolCallStreamDelta>* out) {
  if (in_string_) {
    if (collecting_) collected_ += c;
    if (streaming_) Emit(std::string_view(&c, 1), out);
    if (escape_) {
      escape_ = false;
    } else if (c == '\\') {
      escape_ = true;
    } else if (c == '"') {
      in_string_ = false;
      if (depth_ == 2) {  // a string at the call object's level ended: a key or a value
        if (phase_ == Phase::kKey) {
          key_ = DecodeJsonString(collected_);
          collecting_ = false;
          phase_ = Phase::kColon;
        } else if (phase_ == Phase::kInValue) {
          EndValue(out);
        }
      }
    }
    return;
  }
  if (phase_ == Phase::kInValue && depth_ == 2 && value_kind_ == ValueKind::kLiteral &&
      (c == ',' || c == '}' || IsJsonSpace(c))) {
    EndValue(out);  // a number, true, false or null ended; `c` is structure
  }
  if (phase_ == Phase::kValue && depth_ == 2 && !IsJsonSpace(c)) {
    phase_ = Phase::kInValue;
    value_kind_ = c == '{' || c == '[' ? ValueKind::kContainer
                  : c == '"'           ? ValueKind::kString
                                       : ValueKind::kLiteral;
    streaming_ = key_ == "parameters";
    if (key_ == "name" && c == '"') {
      collecting_ = true;
      collected_.clear();
    }
  }
  if (streaming_) Emit(std::string_view(&c, 1), out);
  switch (c) {
    case '"':
      in_string_ = true;
      if (depth_ == 2 && phase_ == Phase::kKey) {
        collecting_ = true;
        collected_ = "\"";
      } else if (collecting_) {
        collected_ = "\"";
      }
      break;
    case '{':
    case '[':
      ++depth_;
      if (depth_ == 2 && c == '{') {  // a new call object
        phase_ = Phase::kKey;
        name_.clear();
        pending_.clear();
      }
      break;
    case '}':
    case ']':
      --depth_;
      if (depth_ == 2 && phase_ == Phase::kInValue && value_kind_ == ValueKind::kContainer) {
        EndValue(out);
      }
      break;
    case ':':
      if (depth_ == 2 && phase_ == Phase::kColon) phase_ = Phase::kValue;
      break;
    case ',':
      if (depth_ == 2 && phase_ == Phase::kAfterValue) phase_ = Phase::kKey;
      break;
    default:
      break;
  }
}

}  // namespace tandem::server::openai
