#include "worker/structured_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "structured/automaton.h"
#include "structured/gbnf_parser.h"
#include "structured/grammar.h"
#include "testing.h"
#include "worker/model_runner.h"

namespace tandem::worker {
namespace structured_output_test {
namespace {

using testing::Cached;
using ::testing::ElementsAre;
using testing::FakeModel;
using testing::NewRequest;
using testing::Schedule;

constexpr int32_t kVocab = 16;
constexpr int32_t kEos = 15;
constexpr int32_t kBlockSize = 4;

// Token i is the letter 'a' + i; the last id is EOS (no bytes).
TokenVocabularyLoader LetterVocabulary() {
  return [](int32_t vocab_size) {
    std::vector<std::string> bytes;
    for (int32_t i = 0; i < kEos; ++i) bytes.push_back(std::string(1, static_cast<char>('a' + i)));
    bytes.push_back("");
    return std::make_shared<const structured::TokenVocabulary>(std::move(bytes), vocab_size);
  };
}

protocol::SamplingParams Constrained(const std::string& gbnf) {
  protocol::SamplingParams p = testing::Greedy();
  p.structured_grammar = gbnf;
  p.max_tokens = 10;
  return p;
}

std::unique_ptr<ModelRunner> MakeRunner() {
  auto runner = std::make_unique<ModelRunner>(std::make_unique<FakeModel>(kVocab),
                                              /*num_blocks=*/8, kBlockSize, /*engine_seed=*/0);
  runner->set_eos_token_id(kEos);
  runner->set_token_vocabulary_loader(LetterVocabulary());
  return runner;
}

int32_t Step(ModelRunner& runner, protocol::StepPlan plan) {
  const protocol::StepResult result = runner.Execute(plan);
  return result.sampled_token_ids.at(0).empty() ? -1 : result.sampled_token_ids[0].back();
}

// The fake model wants the next letter each step; the grammar overrides it wherever they differ,
// and EOS comes exactly when the text is complete.
TEST(StructuredOutputTest, GreedyOutputFollowsTheGrammarOverTheModel) {
  auto runner = MakeRunner();
  protocol::StepPlan first;
  first.new_requests.push_back(NewRequest("r", {1}, {0, 1}, Constrained("root ::= \"cdkl\"")));
  Schedule(first, "r", 1);
  std::vector<int32_t> out{Step(*runner, first)};
  for (int32_t n = 1; n <= 4; ++n) {
    protocol::StepPlan next;
    next.cached_requests.push_back(Cached("r", n));
    Schedule(next, "r", 1);
    out.push_back(Step(*runner, next));
  }
  EXPECT_THAT(out, ElementsAre(2, 3, 10, 11, kEos));  // c d k l <eos>
}

TEST(StructuredOutputTest, ResumedRequestReplaysItsOutputIntoTheMatcher) {
  auto runner = MakeRunner();
  protocol::StepPlan plan;
  // Preempted after "c" (id 2): comes back with prompt + output; the grammar says 'j' (9)
  // next, where the model wants 'd'.
  plan.new_requests.push_back(
      NewRequest("r", {1, 2}, {0, 1}, Constrained("root ::= \"cj\""), /*num_prompt_tokens=*/1));
  Schedule(plan, "r", 2);
  EXPECT_EQ(Step(*runner, plan), 9);
}

// Drafts are verified against the mask of the state after the drafts accepted before them.
TEST(StructuredOutputTest, SpeculativeDraftsAreMaskedPositionByPosition) {
  auto runner = MakeRunner();
  protocol::StepPlan first;
  first.new_requests.push_back(NewRequest("r", {1}, {0, 1}, Constrained("root ::= \"cdkl\"")));
  Schedule(first, "r", 1);
  ASSERT_EQ(Step(*runner, first), 2);  // c
  protocol::StepPlan verify;
  verify.cached_requests.push_back(Cached("r", 1));
  Schedule(verify, "r", 4);
  verify.scheduled_spec_decode_tokens = {{3, 4, 5}};  // d (allowed), e (not: k), f
  const protocol::StepResult result = runner->Execute(verify);
  EXPECT_THAT(result.sampled_token_ids.at(0), ElementsAre(3, 10));  // d accepted, then k
}

TEST(StructuredOutputTest, StartAfterTokenLeavesTheOutputFreeUntilThatToken) {
  auto runner = MakeRunner();
  protocol::SamplingParams sampling = Constrained("root ::= \"m\"");
  sampling.structured_after_token_id = 3;  // like </think>
  protocol::StepPlan first;
  first.new_requests.push_back(NewRequest("r", {1}, {0, 1}, sampling));
  Schedule(first, "r", 1);
  std::vector<int32_t> out{Step(*runner, first)};
  for (int32_t n = 1; n <= 3; ++n) {
    protocol::StepPlan next;
    next.cached_requests.push_back(Cached("r", n));
    Schedule(next, "r", 1);
    out.push_back(Step(*runner, next));
  }
  EXPECT_THAT(out, ElementsAre(2, 3, 12, kEos));  // c d (free), then m <eos>
}

// The outputs of one request, first step from `prompt`, `steps` steps in all.
std::vector<int32_t> RunRequest(const protocol::SamplingParams& sampling,
                                std::vector<int32_t> prompt, int32_t steps) {
  auto runner = MakeRunner();
  protocol::StepPlan first;
  first.new_requests.push_back(NewRequest("r", prompt, {0, 1}, sampling));
  Schedule(first, "r", static_cast<int32_t>(prompt.size()));
  std::vector<int32_t> out{Step(*runner, first)};
  for (int32_t n = 1; n < steps && out.back() != kEos; ++n) {
    protocol::StepPlan next;
    next.cached_requests.push_back(Cached("r", n));
    Schedule(next, "r", 1);
    out.push_back(Step(*runner, next));
  }
  return out;
}

TEST(StructuredOutputTest, ReasoningThatWouldEndBeforeItsCloseCannotEndTheSequence) {
  // The model wants EOS right after 'o' (14): while reasoning (until 'd', like </think>) the
  // end is masked, so it goes on (a b c d), then the grammar's "m" and the end (issue 31).
  protocol::SamplingParams sampling = Constrained("root ::= \"m\"");
  sampling.structured_after_token_id = 3;
  EXPECT_THAT(RunRequest(sampling, {13}, 10), ElementsAre(14, 0, 1, 2, 3, 12, kEos));
}

TEST(StructuredOutputTest, TheFirstTokenMayOpenTheThinkBlock) {
  protocol::SamplingParams sampling = Constrained("root ::= \"m\"");
  sampling.structured_think_start_token_id = 2;  // like <think>: the model wants it first
  sampling.structured_after_token_id = 4;        // like </think>
  EXPECT_THAT(RunRequest(sampling, {1}, 10), ElementsAre(2, 3, 4, 12, kEos));  // c d e (free), m
}

TEST(StructuredOutputTest, AnOutputThatDoesNotOpenTheThinkBlockIsConstrainedFromItsStart) {
  // Without an opening <think>, the output is content (as the reasoning parser reads it):
  // constrained from its first token, never free text ending in "stop".
  protocol::SamplingParams sampling = Constrained("root ::= \"cm\"");
  sampling.structured_think_start_token_id = 9;
  sampling.structured_after_token_id = 10;
  EXPECT_THAT(RunRequest(sampling, {1}, 10), ElementsAre(2, 12, kEos));
}

TEST(StructuredOutputTest, ApplyTokenBitmaskMasksClearedBitsAndColumnsPastTheMask) {
  std::vector<float> logits(40, 1.0f);
  std::vector<uint32_t> bitmask = {0x00000005u};  // ids 0 and 2 of the first 32
  ApplyTokenBitmask(bitmask, logits);
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(std::isinf(logits[i]), i != 0 && i != 2) << i;
  }
}

}  // namespace
}  // namespace structured_output_test
}  // namespace tandem::worker
