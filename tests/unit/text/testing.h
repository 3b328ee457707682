// Builders shared by the text/ tests: the stories260k tokenizers and their golden file; the
// Qwen3 byte-level tokenizer (tokenizer.json and tiny-qwen3 GGUF) and its goldens. Golden files
// are read through common/golden_json.h, and their case lists through StoriesGoldenCases /
// Qwen3GoldenCases: a file that is missing, empty or has no cases throws, naming the file,
// instead of giving a test zero cases to check.
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

#include "common/golden_json.h"
#include "gguf_vocab_testing.h"
#include "text/gguf_byte_level_vocab.h"
#include "text/hf_tokenizer_loader.h"
#include "text/spm_bpe_tokenizer.h"

namespace tandem::text::testing {

inline std::string SharedPath(const std::string& relative) {
  return std::string(TANDEM_SHARED_DIR) + "/" + relative;
}

using golden_files::LoadGoldenJson;
using golden_files::RequireCaseMap;
using golden_files::RequireCases;

inline std::string StoriesGoldenPath() {
  return SharedPath("models/stories260k/stories260K.golden.json");
}

inline const nlohmann::json& StoriesGolden() {
  static const nlohmann::json golden = LoadGoldenJson(StoriesGoldenPath());
  return golden;
}

// StoriesGolden()[key], a non-empty array ("generation"); throws naming the file otherwise.
inline const nlohmann::json& StoriesGoldenCases(const std::string& key) {
  return RequireCases(StoriesGolden(), key, StoriesGoldenPath());
}

// StoriesGolden()[key], a non-empty object ("tokenize_no_bos": text → ids); throws naming the
// file otherwise.
inline const nlohmann::json& StoriesGoldenCaseMap(const std::string& key) {
  return RequireCaseMap(StoriesGolden(), key, StoriesGoldenPath());
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

inline std::string Qwen3GoldensPath() {
  return SharedPath("models/qwen3-tokenizer/qwen3_token_goldens.json");
}

// qwen3_token_goldens.json[key], a non-empty array ("strings", "chat_cases"); throws naming the
// file otherwise.
inline const nlohmann::json& Qwen3GoldenCases(const std::string& key) {
  static const nlohmann::json golden = LoadGoldenJson(Qwen3GoldensPath());
  return RequireCases(golden, key, Qwen3GoldensPath());
}

// llama.cpp's test vectors: (text, ids) pairs of ggml-vocab-<name>.gguf.inp/.out. Throws
// std::runtime_error naming the file when the .inp is missing or holds no case, or the .out has
// a different number of lines.
inline std::vector<std::pair<std::string, std::vector<int32_t>>> LlamaCppVocabCases(
    const std::string& name) {
  std::string base = SharedPath("models/llamacpp-vocab-tests/ggml-vocab-" + name + ".gguf");
  std::ifstream inp(base + ".inp", std::ios::binary);
  if (!inp) throw std::runtime_error("llama.cpp vocab test '" + base + ".inp' cannot be opened");
  std::stringstream buffer;
  buffer << inp.rdbuf();
  std::string all = buffer.str();
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::pair<std::string, std::vector<int32_t>>> cases;
  for (size_t pos = 0, end; (end = all.find(separator, pos)) != std::string::npos;
       pos = end + separator.size()) {
    cases.emplace_back(all.substr(pos, end - pos), std::vector<int32_t>{});
  }
  if (cases.empty()) {
    throw std::runtime_error("llama.cpp vocab test '" + base +
                             ".inp' holds no case: a test over it would check zero cases");
  }
  std::ifstream out(base + ".out");
  std::string line;
  size_t num_lines = 0;
  for (; std::getline(out, line); ++num_lines) {
    if (num_lines >= cases.size()) continue;
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) cases[num_lines].second.push_back(id);
  }
  if (num_lines != cases.size()) {
    throw std::runtime_error("llama.cpp vocab test '" + base + ".out' has " +
                             std::to_string(num_lines) + " lines; expected one per case of its " +
                             ".inp (" + std::to_string(cases.size()) + ")");
  }
  return cases;
}

}  // namespace tandem::text::testing
