// Builders shared by the text/ tests: the stories260k tokenizers and their golden file; the
// Qwen3 byte-level tokenizer (tokenizer.json and tiny-qwen3 GGUF) and its goldens.
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gguf_vocab_testing.h"
#include "text/gguf_byte_level_vocab.h"
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

// The real Qwen3 tokenizer (qwen3-tokenizer/tokenizer.json + tokenizer_config.json), loaded once
// per test binary (~1 s): shared by every test that needs it.
inline const Tokenizer& Qwen3Tokenizer() {
  static const std::unique_ptr<Tokenizer> tokenizer = [] {
    auto loaded = LoadHfTokenizerJson(SharedPath("models/qwen3-tokenizer/tokenizer.json"),
                                      SharedPath("models/qwen3-tokenizer/tokenizer_config.json"));
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return loaded.ok() ? std::move(loaded).value() : nullptr;
  }();
  if (tokenizer == nullptr) throw std::runtime_error("the Qwen3 tokenizer did not load");
  return *tokenizer;
}

// The same vocab from the GGUF metadata of tiny-qwen3-f16.gguf (llama.cpp's converter).
inline const Tokenizer& TinyQwen3GgufTokenizer() {
  static const std::unique_ptr<Tokenizer> tokenizer = [] {
    GgufKvReader reader(SharedPath("models/tiny-qwen3/tiny-qwen3-f16.gguf"));
    auto made = MakeGgufByteLevelBpeTokenizer(reader.ReadByteLevelVocab());
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? std::move(made).value() : nullptr;
  }();
  if (tokenizer == nullptr) throw std::runtime_error("the tiny-qwen3 GGUF tokenizer did not load");
  return *tokenizer;
}

inline const nlohmann::json& Qwen3Goldens() {
  static const nlohmann::json golden =
      ReadJson(SharedPath("models/qwen3-tokenizer/qwen3_token_goldens.json"));
  return golden;
}

// llama.cpp's test vectors: (text, ids) pairs of ggml-vocab-<name>.gguf.inp/.out.
inline std::vector<std::pair<std::string, std::vector<int32_t>>> LlamaCppVocabCases(
    const std::string& name) {
  std::string base = SharedPath("models/llamacpp-vocab-tests/ggml-vocab-" + name + ".gguf");
  std::ifstream inp(base + ".inp", std::ios::binary);
  std::stringstream buffer;
  buffer << inp.rdbuf();
  std::string all = buffer.str();
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::pair<std::string, std::vector<int32_t>>> cases;
  for (size_t pos = 0, end; (end = all.find(separator, pos)) != std::string::npos;
       pos = end + separator.size()) {
    cases.emplace_back(all.substr(pos, end - pos), std::vector<int32_t>{});
  }
  std::ifstream out(base + ".out");
  std::string line;
  for (size_t i = 0; i < cases.size() && std::getline(out, line); ++i) {
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) cases[i].second.push_back(id);
  }
  return cases;
}

}  // namespace tandem::text::testing
