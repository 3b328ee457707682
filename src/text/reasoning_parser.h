// ReasoningParser: splits generated text into reasoning (inside <think>…</think>) and content,
// incrementally, for `--reasoning-parser qwen3` (Qwen3, Qwen3-MoE, Qwen3.5, QwQ).
//
// Where the output starts is decided from the rendered prompt's tail (PromptThinkState), not
// only from the output: a prompt that already closed the think block (Qwen3 with
// enable_thinking=false pre-fills "<think>\n\n</think>\n\n") means everything is content; a
// prompt that opened it (Qwen3.5 with thinking on ends with "<think>\n") means the output
// starts inside reasoning. vLLM #17349 / #53284 decided from the output alone and got both wrong.
//
// The tags themselves are dropped. A trailing partial tag ("<thi") is held back until the next
// Feed or Finish decides; the tags are ASCII, so splitting never cuts a UTF-8 sequence that
// Feed received whole. Once the block closed, later "<think>" text is plain content; so is a
// "<think>" after content (the block opens the output, after whitespace only, or not at all).
// Reference: vLLM reasoning/qwen3_reasoning_parser.py (tags), HF Qwen3 chat templates.
#pragma once

#include <string>
#include <string_view>

namespace tandem::text {

// Where the generated text starts, from the prompt's tail.
enum class ThinkState {
  kNone,    // no open block at the end of the prompt: content until the model writes <think>
  kOpen,    // the prompt ends inside <think>: output starts as reasoning
  kClosed,  // the prompt ends right after </think>: everything is content
};

// kOpen when the prompt's last think tag is an unclosed "<think>"; kClosed when the prompt
// ends with "</think>" plus whitespace; else kNone.
ThinkState PromptThinkState(std::string_view prompt);

struct ReasoningDelta {
  std::string reasoning;
  std::string content;
};

class ReasoningParser {
 public:
  explicit ReasoningParser(ThinkState start);

  // The split of `text` (new generated text) given everything fed before.
  ReasoningDelta Feed(std::string_view text);
  // Flushes a held-back partial tag (as what it would have been: reasoning or content).
  ReasoningDelta Finish();

  // True once text inside a think block was seen or the output started in one.
  bool saw_reasoning() const { return saw_reasoning_; }

 private:
  enum class Mode { kBeforeThink, kInThink, kAfterThink };
  void Append(ReasoningDelta* out, std::string_view text) const;

  Mode mode_;
  bool saw_reasoning_ = false;
  std::string held_;  // a suffix that may be the start of the next tag
};

}  // namespace tandem::text
