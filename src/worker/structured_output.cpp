#include "worker/structured_output.h"

#include <algorithm>
#include <limits>

#include "core/check.h"
#include "core/logging.h"
#include "kernels/ops.h"
#include "structured/automaton.h"
#include "structured/gbnf_parser.h"

namespace tandem::worker {

void CopyMaskedLogits(std::span<const float> logits, std::span<const uint32_t> bitmask,
                      std::span<float> out) {
  const size_t covered = std::min(logits.size(), bitmask.size() * 32);
  kernels::MaskedCopy(logits.data(), bitmask.data(), static_cast<int64_t>(covered), out.data());
  // Columns past the mask (a logits row wider than the vocabulary) are never allowed.
  std::fill(out.begin() + covered, out.end(), -std::numeric_limits<float>::infinity());
}

void ApplyTokenBitmask(std::span<const uint32_t> bitmask, std::span<float> logits) {
  CopyMaskedLogits(logits, bitmask, logits);
}

bool RequestGrammar::FillBitmask(std::vector<uint32_t>* bitmask) {
  if (failed) {
    return false;
  }
  const int32_t vocab_size = grammar->vocabulary().vocab_size();
  bitmask->resize(structured::BitmaskWords(vocab_size));
  auto set = [&](int32_t id, bool allowed) {
    if (id < 0 || id >= vocab_size) {
      return;
    }
    uint32_t& word = (*bitmask)[static_cast<size_t>(id) / 32];
    const uint32_t bit = 1u << (id % 32);
    word = allowed ? (word | bit) : (word & ~bit);
  };
  if (!active && !undecided) {  // reasoning: anything but the end
    std::fill(bitmask->begin(), bitmask->end(), ~0u);
    for (int32_t id : end_token_ids) {
      set(id, false);
    }
    return true;
  }
  grammar->FillNextTokenBitmask(*matcher, end_token_ids, *bitmask);
  if (undecided) {
    set(think_start_token_id, true);
  }
  return true;
}

void RequestGrammar::Accept(int32_t token_id) {
  if (failed) {
    return;
  }
  if (undecided) {
    undecided = false;
    if (token_id == think_start_token_id) {
      return;  // reasoning until start_after_token_id
    }
    active = true;  // content: this token is the grammar's
  }
  if (!active) {
    active = token_id == start_after_token_id;
    return;
  }
  if (std::find(end_token_ids.begin(), end_token_ids.end(), token_id) != end_token_ids.end()) {
    return;  // the sequence ends here
  }
  const structured::TokenVocabulary& vocab = grammar->vocabulary();
  const bool in_vocab =
      token_id >= 0 && token_id < vocab.vocab_size() && !vocab.bytes(token_id).empty();
  if (!in_vocab || !matcher->AcceptBytes(vocab.bytes(token_id))) {
    // Only a token the mask allowed can be sampled, so this is a broken invariant; the request
    // goes on unconstrained rather than taking the worker down.
    TLOG_ERROR(
        "request '{}': token {} is outside its grammar; the rest of its output is "
        "unconstrained",
        request_id, token_id);
    failed = true;
  }
}

StructuredOutputs::StructuredOutputs(TokenVocabularyLoader loader, int32_t vocab_size,
                                     size_t max_grammars, size_t max_bytes)
    : loader_(std::move(loader)),
      vocab_size_(vocab_size),
      max_grammars_(std::max<size_t>(1, max_grammars)),
      max_bytes_(max_bytes) {}

std::shared_ptr<const structured::CompiledGrammar> StructuredOutputs::Compile(
    const std::string& gbnf) {
  auto it = grammars_.find(gbnf);
  if (it != grammars_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }
  if (!vocabulary_) {
    TANDEM_CHECK(loader_ != nullptr)
        << "a structured-output request reached a worker built without a token vocabulary";
    vocabulary_ = loader_(vocab_size_);
    TANDEM_CHECK(vocabulary_ != nullptr) << "the worker could not load its token vocabulary";
  }
  auto grammar = structured::ParseGbnf(gbnf);
  TANDEM_CHECK(grammar.ok()) << "structured-output grammar from the API server does not parse: "
                             << grammar.status().message();
  auto automaton = structured::Automaton::Compile(*grammar);
  TANDEM_CHECK(automaton.ok()) << "structured-output grammar from the API server does not "
                               << "compile: " << automaton.status().message();
  auto compiled = std::make_shared<const structured::CompiledGrammar>(*automaton, vocabulary_);
  size_t bytes = compiled->memory_bytes();
  for (const auto& [text, entry] : grammars_) {
    bytes += entry.first->memory_bytes();
  }
  while (!lru_.empty() && (grammars_.size() >= max_grammars_ || bytes > max_bytes_)) {
    bytes -= grammars_.at(lru_.back()).first->memory_bytes();
    grammars_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(gbnf);
  grammars_.emplace(gbnf, std::make_pair(compiled, lru_.begin()));
  return compiled;
}

std::unique_ptr<RequestGrammar> StructuredOutputs::ForRequest(
    const protocol::SamplingParams& sampling, std::span<const int32_t> output_token_ids,
    int32_t eos_token_id, const std::string& request_id) {
  if (sampling.structured_grammar.empty()) {
    return nullptr;
  }
  auto state = std::make_unique<RequestGrammar>();
  state->request_id = request_id;
  state->end_token_ids = sampling.stop_token_ids;
  if (eos_token_id >= 0) {
    state->end_token_ids.push_back(eos_token_id);
  }
  state->grammar = Compile(sampling.structured_grammar);
  state->matcher = state->grammar->NewMatcher();
  state->start_after_token_id = sampling.structured_after_token_id;
  state->think_start_token_id = sampling.structured_think_start_token_id;
  state->active = sampling.structured_after_token_id < 0;
  state->undecided = !state->active && sampling.structured_think_start_token_id >= 0;
  for (int32_t token_id : output_token_ids) {
    state->Accept(token_id);
  }
  return state;
}

}  // namespace tandem::worker
