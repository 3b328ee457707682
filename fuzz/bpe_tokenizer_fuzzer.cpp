// Fuzzes text::ByteLevelBpeTokenizer (GPT-2 style byte-level BPE) with Qwen3's tokenizer.json
// (../shared/models/qwen3-tokenizer, loaded by LoadHfTokenizerJson as `tandem serve` does):
// Encode of arbitrary bytes (added tokens, NFC, the PCRE2 pre-tokenizer, merges) and Decode of
// arbitrary ids.
// Invariants beyond "no crash, no UB, no leak": see tokenizer_fuzz.h — ids inside the
// vocabulary, Decode always valid UTF-8, and Decode(Encode(text)) == text for every valid UTF-8
// text already in NFC (the tokenizer normalizes to NFC first; added tokens decode to their
// text, so they round-trip too).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "text/hf_tokenizer_loader.h"
#include "text/nfc_normalizer.h"
#include "tokenizer_fuzz.h"

namespace {

std::unique_ptr<tandem::text::Tokenizer> Load() {
  const std::string dir = tandem::fuzz::SharedDir() + "/models/qwen3-tokenizer";
  auto tok =
      tandem::text::LoadHfTokenizerJson(dir + "/tokenizer.json", dir + "/tokenizer_config.json");
  if (!tok.ok()) tandem::fuzz::Fail("loading " + dir + ": " + tok.status().message());
  return std::move(tok).value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<tandem::text::Tokenizer> tokenizer = Load();
  tandem::fuzz::FuzzTokenizer(*tokenizer, data, size, [](std::string_view text) {
    return tandem::text::NormalizeNfc(text) == text;
  });
  return 0;
}
