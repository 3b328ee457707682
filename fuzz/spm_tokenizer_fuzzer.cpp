// Fuzzes text::SpmBpeTokenizer (SentencePiece-BPE, Llama-2 style) with stories260K.gguf's vocab
// (read by model::GgufReader, as `tandem serve` does): Encode of arbitrary bytes (special-token
// matching, dummy prefix, merges, byte fallback) and Decode of arbitrary ids.
// Invariants beyond "no crash, no UB, no leak": see tokenizer_fuzz.h — ids inside the
// vocabulary, Decode always valid UTF-8, and Decode(Encode(text)) == text for valid UTF-8 text
// without U+2581 (SentencePiece's space mark decodes to a space) and without the text of a
// control, user-defined or unknown token (each text fragment around one gets its own dummy
// prefix).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "model/loader/gguf_reader.h"
#include "text/spm_bpe_tokenizer.h"
#include "tokenizer_fuzz.h"

namespace {

struct Loaded {
  std::unique_ptr<tandem::text::SpmBpeTokenizer> tokenizer;
  std::vector<std::string> special_pieces;  // text that Encode matches as one token
};

template <typename T>
T OrFail(tandem::Result<T> r) {
  if (!r.ok()) tandem::fuzz::Fail("loading stories260K.gguf: " + r.status().message());
  return std::move(r).value();
}

Loaded Load() {
  const std::string path = tandem::fuzz::SharedDir() + "/models/stories260k/stories260K.gguf";
  auto gguf = OrFail(tandem::model::GgufReader::Open(path));
  tandem::text::SpmVocab vocab;
  vocab.tokens = OrFail(gguf->GetStringArray("tokenizer.ggml.tokens"));
  vocab.scores = OrFail(gguf->GetFloatArray("tokenizer.ggml.scores"));
  for (int64_t t : OrFail(gguf->GetIntArray("tokenizer.ggml.token_type"))) {
    vocab.token_types.push_back(static_cast<int32_t>(t));
  }
  vocab.bos_id = static_cast<int32_t>(OrFail(gguf->GetIntOr("tokenizer.ggml.bos_token_id", -1)));
  vocab.eos_id = static_cast<int32_t>(OrFail(gguf->GetIntOr("tokenizer.ggml.eos_token_id", -1)));
  vocab.unk_id =
      static_cast<int32_t>(OrFail(gguf->GetIntOr("tokenizer.ggml.unknown_token_id", -1)));
  Loaded loaded;
  for (size_t i = 0; i < vocab.tokens.size(); ++i) {
    using tandem::text::TokenType;
    const auto type = static_cast<TokenType>(vocab.token_types[i]);
    if (type == TokenType::kControl || type == TokenType::kUserDefined ||
        type == TokenType::kUnknown) {
      loaded.special_pieces.push_back(vocab.tokens[i]);
    }
  }
  loaded.tokenizer = OrFail(tandem::text::SpmBpeTokenizer::Create(std::move(vocab)));
  return loaded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Loaded loaded = Load();
  tandem::fuzz::FuzzTokenizer(*loaded.tokenizer, data, size, [](std::string_view text) {
    if (text.find("\xE2\x96\x81") != std::string_view::npos) return false;  // U+2581
    for (const std::string& piece : loaded.special_pieces) {
      if (text.find(piece) != std::string_view::npos) return false;
    }
    return true;
  });
  return 0;
}
