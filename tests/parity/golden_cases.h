// The golden greedy cases of the shared models as ready-to-run Seqs (testing.h), for the
// parallel parity tests: stories260K's llama2.c goldens (also the goldens of the stories MoE
// GGUF and the Qwen2-MoE HF folder made from it) and the tiny Qwen goldens (llama.cpp's).
// Each loader binds the parsed JSON to a local before iterating it (a range-for over a member
// of a temporary would read freed memory).
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing.h"

namespace tandem::model::testing {

struct Golden {
  std::vector<Seq> seqs;                       // ready to run, keeping every sampled logit row
  std::vector<std::vector<int32_t>> expected;  // golden generated ids per case
};

// `shared`/models/stories260k/stories260K.golden.json: prompt ids, steps → generated ids.
inline Golden StoriesGolden(const std::string& shared) {
  std::ifstream in(shared + "/models/stories260k/stories260K.golden.json");
  const nlohmann::json golden = nlohmann::json::parse(in);
  Golden g;
  for (const auto& c : golden["generation"]) {
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
  std::ifstream in(dir + "/golden.json");
  const nlohmann::json golden = nlohmann::json::parse(in);
  Golden g;
  for (const auto& c : golden["cases"]) {
    Seq s;
    s.tokens = c["prompt_ids"].get<std::vector<int32_t>>();
    g.expected.push_back(c["generated_ids"].get<std::vector<int32_t>>());
    s.num_to_generate = static_cast<int32_t>(g.expected.back().size());
    s.keep_sampled_logits = s.num_to_generate;
    g.seqs.push_back(s);
  }
  return g;
}

}  // namespace tandem::model::testing
