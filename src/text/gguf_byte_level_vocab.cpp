#include "text/gguf_byte_level_vocab.h"

#include "text/byte_level_bpe_tokenizer.h"
#include "text/tokenizer_json.h"

namespace tandem::text {
namespace {

// Qwen2/2.5/3 tokenizer.json Split regex (llama.cpp LLAMA_VOCAB_PRE_TYPE_QWEN2 is the same
// with the contractions spelled out case by case).
constexpr const char* kQwen2Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Llama-3: as Qwen2 but digits in groups of up to three.
constexpr const char* kLlama3Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

}  // namespace

Result<std::vector<std::string>> ByteLevelPatternsForGgufPre(const std::string& pre) {
  if (pre == "qwen2") return std::vector<std::string>{kQwen2Pattern};
  if (pre == "llama-bpe" || pre == "llama3") return std::vector<std::string>{kLlama3Pattern};
  if (pre.empty() || pre == "default" || pre == "gpt2") {
    return std::vector<std::string>{kGpt2SplitPattern};
  }
  return Unimplemented("tokenizer.ggml.pre '" + pre +
                       "' is not supported; expected qwen2, llama-bpe, gpt2 or default");
}

Result<std::unique_ptr<Tokenizer>> MakeGgufByteLevelBpeTokenizer(GgufByteLevelVocabFields fields) {
  ByteLevelBpeVocab vocab;
  TANDEM_ASSIGN_OR_RETURN(vocab.split_patterns, ByteLevelPatternsForGgufPre(fields.pre));
  vocab.normalize_nfc = fields.pre == "qwen2";
  vocab.ignore_merges = fields.pre == "llama-bpe" || fields.pre == "llama3";
  vocab.merges.reserve(fields.merges.size());
  for (const std::string& merge : fields.merges) {
    size_t space = merge.find(' ');
    if (space == std::string::npos || merge.find(' ', space + 1) != std::string::npos) {
      return InvalidArgument("tokenizer.ggml.merges entry \"" + merge +
                             "\" should be two pieces separated by one space");
    }
    vocab.merges.emplace_back(merge.substr(0, space), merge.substr(space + 1));
  }
  vocab.tokens = std::move(fields.tokens);
  vocab.token_types = std::move(fields.token_types);
  vocab.bos_id = fields.bos_id;
  vocab.eos_id = fields.eos_id;
  vocab.add_bos = fields.add_bos.value_or(false) && fields.bos_id >= 0;
  auto tokenizer = ByteLevelBpeTokenizer::Create(std::move(vocab));
  if (!tokenizer.ok()) return tokenizer.status();
  return std::unique_ptr<Tokenizer>(std::move(tokenizer).value());
}

}  // namespace tandem::text
