#include "apps/token_vocabulary_loader.h"

#include <chrono>

#include "apps/model_files.h"
#include "core/check.h"
#include "core/logging.h"

namespace tandem::apps {

worker::TokenVocabularyLoader MakeTokenVocabularyLoader(const EngineCoreConfig& config) {
  return [model = config.model_path, tokenizer_path = config.tokenizer_path](
             int32_t vocab_size) -> std::shared_ptr<const structured::TokenVocabulary> {
    const auto start = std::chrono::steady_clock::now();
    auto files = InspectModelFiles(model, tokenizer_path);
    TANDEM_CHECK(files.ok()) << "structured outputs: cannot read the tokenizer: "
                             << files.status().message();
    auto tokenizer = LoadTokenizer(*files);
    TANDEM_CHECK(tokenizer.ok()) << "structured outputs: cannot load the tokenizer: "
                                 << tokenizer.status().message();
    const text::Tokenizer& tok = **tokenizer;
    const int32_t n = std::min(tok.vocab_size(), vocab_size);
    std::vector<std::string> token_bytes(n);
    for (int32_t id = 0; id < n; ++id) {
      if (!tok.IsSpecial(id)) token_bytes[id] = tok.TokenBytes(id);
    }
    auto vocabulary =
        std::make_shared<const structured::TokenVocabulary>(std::move(token_bytes), vocab_size);
    TLOG_INFO("structured outputs: token vocabulary of {} tokens ready in {:.0f} ms", n,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count());
    return vocabulary;
  };
}

}  // namespace tandem::apps
