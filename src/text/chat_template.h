// ChatTemplate: a model's Jinja chat template (tokenizer_config.json "chat_template"), parsed
// once and rendered per request into the prompt text.
//
// Rendering follows Hugging Face apply_chat_template: trim_blocks and lstrip_blocks on,
// loop controls (break/continue) on, raise_exception() available, tojson = json.dumps with
// ensure_ascii=False. The Jinja subset is listed in jinja/parser.h. Every render is bounded
// (ChatTemplateLimits), and a template nested too deeply to parse safely is refused by Parse.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "text/jinja/render_limits.h"

namespace tandem::text {

namespace jinja {
struct Node;
}  // namespace jinja

// What one render may spend (loop iterations, recursion, output bytes, wall time) and its
// cancellation flag; see jinja/render_limits.h.
using ChatTemplateLimits = jinja::RenderLimits;

class ChatTemplate {
 public:
  // Errors: kInvalidArgument "chat template line L, column C: <what was expected/found>".
  static Result<ChatTemplate> Parse(std::string source);

  // Renders with `context` (an object) as the global variables: typically `messages` (array of
  // {role, content}), `add_generation_prompt`, `bos_token`, `eos_token`, `tools`, plus any
  // chat_template_kwargs, within `limits`.
  // Errors: kInvalidArgument with the template's own message for raise_exception('...'), else
  // "chat template line L, column C: <error>" — a limit reached names the limit and its flag;
  // kUnavailable when limits.cancelled or limits.client_gone was set during the render.
  // Thread-safe: a ChatTemplate may be rendered concurrently. Runs on the caller's thread and
  // uses at most jinja::kMaxRenderStackBytes of its stack.
  Result<std::string> Render(const nlohmann::json& context,
                             const ChatTemplateLimits& limits = {}) const;
  // Same, keeping the key order of dicts (what tojson prints) as the caller parsed it.
  Result<std::string> Render(const nlohmann::ordered_json& context,
                             const ChatTemplateLimits& limits = {}) const;

  const std::string& source() const { return *source_; }

 private:
  ChatTemplate() = default;

  std::shared_ptr<const std::string> source_;
  std::shared_ptr<const std::vector<std::unique_ptr<jinja::Node>>> body_;
};

}  // namespace tandem::text
