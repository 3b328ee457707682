// The golden greedy cases of the shared models as ready-to-run Seqs (testing.h), for the
// parallel parity tests: stories260K's llama2.c goldens (also the goldens of the stories MoE
// GGUF and the Qwen2-MoE HF folder made from it) and the tiny Qwen goldens (llama.cpp's).
// Each loader binds the parsed JSON to a local before iterating it (a range-for over a member
// of a temporary would read freed memory), and reads it through common/golden_json.h: a golden
// file that is missing, empty or has no cases throws, naming the file, instead of giving zero
// cases to check.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/golden_json.h"
#include "testing.h"

namespace tandem::model::testing {

using golden_files::LoadGoldenJson;
using golden_files::RequireCases;

inline std::string StoriesGoldenPath(const std::string& shared) {
  return shared + "/models/stories260k/stories260K.golden.json";
}

struct Golden {
  std::vector<Seq> seqs;                       // ready to run, keeping every sampled logit row
  std::vector<std::vector<int32_t>> expected;  // golden generated ids per case
};

// `shared`/models/stories260k/stories260K.golden.json: prompt ids, steps → generated ids.
inline Golden StoriesGolden(const std::string& shared) {
  const std::string path = StoriesGoldenPath(shared);
  const nlohmann::json golden = LoadGoldenJson(path);
  Golden g;
  for (const auto& c : RequireCases(golden, "generation", path)) {
    Seq s;
    s.tokens = c["prompt_ids"].get<std::vector<int32_t>>();
    s.num_to_generate = c["steps"].get<int32_t>() - (static_cast<int32_t>(s.tokens.size()) - 1);
    s.keep_sampled_logits = s.num_to_generate;
    g.seqs.push_back(s);
    g.expected.push_back(c["generated_ids"].get<std::vector<int32_t>>());
  }
  return g;
}

// `dir`/golden.json of a tiny Qwen model: cases with prompt ids and generated ids.
inline Golden QwenGolden(const std::string& dir) {
  const std::string path = dir + "/golden.json";
  const nlohmann::json golden = LoadGoldenJson(path);
  Golden g;
  for (const auto& c : RequireCases(golden, "cases", path)) {
    Seq s;
    s.tokens = c["prompt_ids"].get<std::vector<int32_t>>();
    g.expected.push_back(c["generated_ids"].get<std::vector<int32_t>>());
    s.num_to_generate = static_cast<int32_t>(g.expected.back().size());
    s.keep_sampled_logits = s.num_to_generate;
    g.seqs.push_back(s);
  }
  return g;
}

// A case of a golden.json in the tiny-Qwen layout (also the W8A8 folders'): prompt ids, the
// exact greedy ids and the top-5 (id, logprob) of the first generated positions.
struct QwenCase {
  std::string name;
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> generated_ids;
  std::vector<std::vector<std::pair<int32_t, double>>> top5_first4;  // [step][rank] (id, logprob)
};

inline std::vector<QwenCase> LoadQwenCases(const std::string& dir) {
  const std::string path = dir + "/golden.json";
  const nlohmann::json golden = LoadGoldenJson(path);
  std::vector<QwenCase> cases;
  for (const auto& c : RequireCases(golden, "cases", path)) {
    QwenCase q{c["name"],
               c["prompt_ids"].get<std::vector<int32_t>>(),
               c["generated_ids"].get<std::vector<int32_t>>(),
               {}};
    for (const auto& step : RequireCases(c, "top5_first4", path)) {
      std::vector<std::pair<int32_t, double>> top;
      for (const auto& e : step) top.emplace_back(e[0].get<int32_t>(), e[1].get<double>());
      q.top5_first4.push_back(top);
    }
    cases.push_back(std::move(q));
  }
  return cases;
}

inline Seq MakeQwenSeq(const QwenCase& c) {
  Seq s;
  s.tokens = c.prompt_ids;
  s.num_to_generate = static_cast<int32_t>(c.generated_ids.size());
  s.keep_sampled_logits = static_cast<int32_t>(c.top5_first4.size());
  return s;
}

// Each case of `dir`/golden.json alone (one prefill, then one token per step, as llama.cpp and
// the W8A8 references did): exact ids and the golden top-5 logprobs of the first generated
// positions within `logprob_tolerance` (the golden's own: 1e-3 for an fp32 / exact-arithmetic
// engine). `model_path`: the folder itself, or a GGUF of the same weights shipped in it.
inline void ExpectGoldenOneByOne(const std::string& dir, const std::string& model_path = "",
                                 double logprob_tolerance = 1e-3) {
  auto model = Load(model_path.empty() ? dir : model_path);
  ASSERT_NE(model, nullptr);
  const int32_t vocab = model->info().vocab_size;
  const auto cases = LoadQwenCases(dir);
  ASSERT_FALSE(cases.empty());
  for (const QwenCase& c : cases) {
    GreedyRunner runner(*model, /*stop_token_id=*/-1, /*num_blocks=*/128);
    std::vector<Seq> seqs = {MakeQwenSeq(c)};
    runner.Run(seqs, /*chunk=*/0, /*collect_all_logits=*/false);
    EXPECT_EQ(seqs[0].generated, c.generated_ids) << dir << ", case " << c.name;
    ASSERT_EQ(seqs[0].sampled_logits.size(), c.top5_first4.size() * vocab) << c.name;
    for (size_t step = 0; step < c.top5_first4.size(); ++step) {
      const auto logprobs = LogSoftmax(&seqs[0].sampled_logits[step * vocab], vocab);
      for (const auto& [id, want] : c.top5_first4[step]) {
        EXPECT_NEAR(logprobs[id], want, logprob_tolerance)
            << dir << ", case " << c.name << ", step " << step << ", token " << id;
      }
    }
  }
}

}  // namespace tandem::model::testing
