#include "text/reasoning_parser.h"

#include <algorithm>

#include "text/string_search.h"

namespace tandem::text {
namespace {

constexpr std::string_view kThinkStart = "<think>";
constexpr std::string_view kThinkEnd = "</think>";

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

ThinkState PromptThinkState(std::string_view prompt) {
  size_t end = prompt.size();
  while (end > 0 && IsSpace(prompt[end - 1])) --end;
  const std::string_view trimmed = prompt.substr(0, end);
  if (trimmed.size() >= kThinkEnd.size() &&
      trimmed.substr(trimmed.size() - kThinkEnd.size()) == kThinkEnd) {
    return ThinkState::kClosed;
  }
  const size_t last_open = prompt.rfind(kThinkStart);
  if (last_open == std::string_view::npos) return ThinkState::kNone;
  const size_t last_close = prompt.rfind(kThinkEnd);
  if (last_close == std::string_view::npos || last_close < last_open) return ThinkState::kOpen;
  return ThinkState::kNone;
}

ReasoningParser::ReasoningParser(ThinkState start) {
  switch (start) {
    case ThinkState::kNone:
      mode_ = Mode::kBeforeThink;
      break;
    case ThinkState::kOpen:
      mode_ = Mode::kInThink;
      saw_reasoning_ = true;
      break;
    case ThinkState::kClosed:
      mode_ = Mode::kAfterThink;
      break;
  }
}

void ReasoningParser::Append(ReasoningDelta* out, std::string_view text) const {
  (mode_ == Mode::kInThink ? out->reasoning : out->content).append(text);
}

ReasoningDelta ReasoningParser::Feed(std::string_view text) {
  ReasoningDelta out;
  std::string buffer = std::move(held_);
  held_.clear();
  buffer.append(text);
  std::string_view rest = buffer;
  while (!rest.empty()) {
    if (mode_ == Mode::kAfterThink) {
      out.content.append(rest);
      break;
    }
    if (mode_ == Mode::kBeforeThink) {
      // The block opens the output or not at all: once text other than whitespace and the
      // start of a tag came, the output is content, a later "<think>" included (e.g. inside
      // JSON that a structured-output grammar made the model write).
      const size_t first = rest.find_first_not_of(" \t\r\n");
      const std::string_view from = first == std::string_view::npos ? "" : rest.substr(first);
      const bool tag_or_part = from.empty() || from.starts_with(kThinkStart) ||
                               from.starts_with(kThinkEnd) || kThinkStart.starts_with(from) ||
                               kThinkEnd.starts_with(from);
      if (!tag_or_part) {
        mode_ = Mode::kAfterThink;
        continue;
      }
    }
    const std::string_view tag = mode_ == Mode::kInThink ? kThinkEnd : kThinkStart;
    const size_t at = rest.find(tag);
    if (at != std::string_view::npos) {
      Append(&out, rest.substr(0, at));
      rest.remove_prefix(at + tag.size());
      if (mode_ == Mode::kInThink) {
        mode_ = Mode::kAfterThink;
      } else {
        mode_ = Mode::kInThink;
        saw_reasoning_ = true;
      }
      continue;
    }
    // Before the block a stray "</think>" is dropped as vLLM does; hold a partial of either.
    size_t hold = PartialTagSuffix(rest, tag);
    if (mode_ == Mode::kBeforeThink) {
      const size_t end_at = rest.find(kThinkEnd);
      if (end_at != std::string_view::npos) {
        Append(&out, rest.substr(0, end_at));
        rest.remove_prefix(end_at + kThinkEnd.size());
        mode_ = Mode::kAfterThink;
        continue;
      }
      hold = std::max(hold, PartialTagSuffix(rest, kThinkEnd));
    }
    Append(&out, rest.substr(0, rest.size() - hold));
    held_ = std::string(rest.substr(rest.size() - hold));
    break;
  }
  return out;
}

ReasoningDelta ReasoningParser::Finish() {
  ReasoningDelta out;
  Append(&out, held_);
  held_.clear();
  return out;
}

}  // namespace tandem::text
