// Structured outputs in the worker: each constrained request's grammar matcher, and the token
// mask applied to its logits rows before sampling (vLLM applies the grammar bitmask to the
// logits the same way, before the sampler, so logprobs see the mask too).
//
// The API server compiled and checked the constraint and sends it as GBNF text
// (SamplingParams::structured_grammar); the worker compiles it against its vocabulary once per
// text (an LRU of compiled grammars, whose per-position masks are shared by every request that
// uses the same constraint). A request with structured_after_token_id >= 0 (a reasoning model's
// end-of-thinking token) is unconstrained until that token has been generated.
//
// Speculative decoding: each verified position is masked from the matcher's state after the
// drafts accepted before it, so an accepted draft is always one the grammar allows.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/sampling_params.h"
#include "structured/compiled_grammar.h"
#include "structured/grammar_matcher.h"
#include "structured/token_vocabulary.h"

namespace tandem::worker {

// Loads the tokenizer's vocabulary for logits rows of `vocab_size` columns, the first time a
// constrained request comes (null: this worker was built without one, and a constrained
// request aborts it with a clear message).
using TokenVocabularyLoader =
    std::function<std::shared_ptr<const structured::TokenVocabulary>(int32_t vocab_size)>;

// One request's progress through its grammar.
struct RequestGrammar {
  std::shared_ptr<const structured::CompiledGrammar> grammar;
  std::unique_ptr<structured::GrammarMatcher> matcher;
  std::string request_id;              // for messages
  std::vector<int32_t> end_token_ids;  // EOS and the request's stop token ids: allowed when the
                                       // text may end, and they end it
  int32_t start_after_token_id = -1;   // reasoning until this token; -1 = constrained at once
  // The first token may be this one (opening the think block), else the output is content and
  // constrained from its first token; -1 = the output starts as reasoning.
  int32_t think_start_token_id = -1;
  bool active = false;     // the grammar's mask applies now
  bool undecided = false;  // the first token decides: think_start_token_id, or content
  bool failed = false;     // a token outside the grammar was emitted; unconstrained

  // Fills *bitmask ([BitmaskWords(vocab_size)] words; bit set = allowed) with the tokens that
  // may come next: the grammar's; while reasoning, any but the end tokens (a sequence must close
  // its reasoning before it ends: else it ends by length); at the first token of an undecided
  // output, the grammar's plus think_start_token_id. False (bitmask untouched) when nothing is
  // masked (a failed constraint).
  bool FillBitmask(std::vector<uint32_t>* bitmask);
  // Advances past `token_id` (reasoning ends on start_after_token_id).
  void Accept(int32_t token_id);
};

class StructuredOutputs {
 public:
  // `vocab_size`: the logits row width. Compiled grammars are kept, least recently used first
  // out, while there are at most `max_grammars` and they hold at most `max_bytes` (automata +
  // kept position masks; a grammar in use by a request lives on until the request ends).
  StructuredOutputs(TokenVocabularyLoader loader, int32_t vocab_size, size_t max_grammars = 64,
                    size_t max_bytes = size_t{512} << 20);

  // A RequestGrammar for `sampling`, replaying `output_token_ids` (a request resumed after
  // preemption); nullptr when the request has no constraint. Aborts (TANDEM_CHECK) when the
  // text does not compile: the API server compiled the same text before sending it.
  // `eos_token_id`: the model's (-1 = none).
  std::unique_ptr<RequestGrammar> ForRequest(const protocol::SamplingParams& sampling,
                                             std::span<const int32_t> output_token_ids,
                                             int32_t eos_token_id, const std::string& request_id);

 private:
  std::shared_ptr<const structured::CompiledGrammar> Compile(const std::string& gbnf);

  TokenVocabularyLoader loader_;
  int32_t vocab_size_;
  std::shared_ptr<const structured::TokenVocabulary> vocabulary_;
  size_t max_grammars_;
  size_t max_bytes_;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, std::pair<std::shared_ptr<const structured::CompiledGrammar>,
                                            std::list<std::string>::iterator>>
      grammars_;
};

// out[id] = logits[id] where bit id of `bitmask` is set, else -inf; ids past the bitmask are
// -inf. `out` may be `logits` itself. Sizes: out.size() == logits.size().
void CopyMaskedLogits(std::span<const float> logits, std::span<const uint32_t> bitmask,
                      std::span<float> out);
// In place: logits[id] = -inf for every id whose bit is clear in `bitmask`.
void ApplyTokenBitmask(std::span<const uint32_t> bitmask, std::span<float> logits);

}  // namespace tandem::worker
