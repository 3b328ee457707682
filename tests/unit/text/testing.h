// Builders shared by the text/ tests: the stories260k tokenizers and their golden file.
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gguf_vocab_testing.h"
#include "text/hf_tokenizer_loader.h"
#include "text/spm_bpe_tokenizer.h"

namespace tandem::text::testing {

inline std::string SharedPath(const std::string& relative) {
  return std::string(TANDEM_SHARED_DIR) + "/" + relative;
}

inline nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return nlohmann::json::parse(buffer.str());
}

inline const nlohmann::json& StoriesGolden() {
  static const nlohmann::json golden =
      ReadJson(SharedPath("models/stories260k/stories260K.golden.json"));
  return golden;
}

// The SentencePiece vocab stored in stories260K.gguf.
inline std::unique_ptr<Tokenizer> MakeGgufStoriesTokenizer() {
  GgufKvReader reader(SharedPath("models/stories260k/stories260K.gguf"));
  auto tokenizer = SpmBpeTokenizer::Create(reader.ReadVocab());
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  return std::move(tokenizer).value();
}

// The same vocab as an HF tokenizer.json (merge ranks instead of scores).
inline std::unique_ptr<Tokenizer> MakeHfStoriesTokenizer() {
  auto tokenizer = LoadHfTokenizerJson(SharedPath("models/stories260k-hf/tokenizer.json"),
                                       SharedPath("models/stories260k-hf/tokenizer_config.json"));
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  return std::move(tokenizer).value();
}

}  // namespace tandem::text::testing
