// Fuzzes the OpenAI request parsers on arbitrary request bodies: ParseOrderedJsonObject (the one
// parse of a body, nesting bounded), ParseGenerationRequest for both endpoints,
// ParseCompletionRequest and ParseChatCompletionRequest (prompts tokenized by a byte tokenizer,
// messages, tools, tool_choice, structured outputs compiled to grammars) — no engine needed.
// Invariants beyond "no crash, no UB, no leak": every refusal is a 4xx with a message; an
// accepted request has n ≥ 1, temperature ≥ 0 and finite, top_p in (0, 1], prompt token ids
// inside the vocabulary, and prompt + max_tokens within max_model_len.
// Seeds: fuzz/seeds/openai_request/*.json.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "server/openai/chat_completions_types.h"
#include "server/openai/completions_types.h"
#include "server/openai/request_parsing.h"

namespace so = tandem::server::openai;
using tandem::server::ApiError;

namespace {

// One token per byte (id = byte value); 256 = "<s>", 257 = "</s>".
class ByteTokenizer : public tandem::text::Tokenizer {
 public:
  std::vector<int32_t> Encode(std::string_view text, bool) const override {
    std::vector<int32_t> ids;  // through unsigned char: a byte >= 0x80 is id 128..255
    for (unsigned char byte : text) ids.push_back(byte);
    return ids;
  }
  std::string IdToPiece(int32_t id) const override { return TokenBytes(id); }
  std::string TokenBytes(int32_t id) const override {
    if (id == 256) return "<s>";
    if (id == 257) return "</s>";
    return id >= 0 && id < 256 ? std::string(1, static_cast<char>(id)) : "";
  }
  bool decode_strips_leading_space() const override { return false; }
  int32_t vocab_size() const override { return 258; }
  int32_t bos_token_id() const override { return 256; }
  int32_t eos_token_id() const override { return 257; }
  std::string bos_token() const override { return "<s>"; }
  std::string eos_token() const override { return "</s>"; }
  bool IsSpecial(int32_t id) const override { return id >= 256; }
  bool add_bos() const override { return false; }
};

tandem::server::ServerContext MakeContext() {
  tandem::server::ServerContext context;
  context.config.served_model_names = {"tiny"};
  context.config.max_model_len = 512;
  context.tokenizer = std::make_shared<ByteTokenizer>();
  return context;
}

void CheckRefusal(const char* parser, const ApiError& error) {
  const int http = tandem::server::HttpStatusFor(error.status.code());
  if (http < 400 || http >= 500 || error.status.message().empty()) {
    tandem::fuzz::Fail(std::string(parser) + " refused with HTTP " + std::to_string(http) + ": " +
                       error.status.message());
  }
}

void CheckAccepted(const char* parser, const so::GenerationRequest& r, int32_t prompt_tokens,
                   const tandem::server::ServerConfig& config) {
  const auto& s = r.sampling;
  if (r.n < 1 || !(s.temperature >= 0) || !std::isfinite(s.temperature) || !(s.top_p > 0) ||
      s.top_p > 1 || s.max_tokens < 0 ||
      int64_t{prompt_tokens} + s.max_tokens > config.max_model_len) {
    tandem::fuzz::Fail(std::string(parser) + " accepted out-of-range sampling fields");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tandem::server::ServerContext context = MakeContext();
  auto body =
      so::ParseOrderedJsonObject(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!body.ok()) {
    CheckRefusal("ParseOrderedJsonObject", body.error());
    return 0;
  }
  const nlohmann::json sorted = body.value();  // what ParseGenerationRequest reads
  for (auto endpoint : {so::Endpoint::kCompletions, so::Endpoint::kChatCompletions}) {
    auto common = so::ParseGenerationRequest(sorted, endpoint, context.config, &body.value());
    if (!common.ok()) CheckRefusal("ParseGenerationRequest", common.error());
  }
  if (auto completion = so::ParseCompletionRequest(body.value(), context); completion.ok()) {
    for (const auto& prompt : completion.value().prompts) {
      for (int32_t id : prompt) {
        if (id < 0 || id >= context.tokenizer->vocab_size()) {
          tandem::fuzz::Fail("ParseCompletionRequest accepted token id " + std::to_string(id));
        }
      }
      CheckAccepted("ParseCompletionRequest", completion.value().common,
                    static_cast<int32_t>(prompt.size()), context.config);
    }
  } else {
    CheckRefusal("ParseCompletionRequest", completion.error());
  }
  if (auto chat = so::ParseChatCompletionRequest(body.value(), context); !chat.ok()) {
    CheckRefusal("ParseChatCompletionRequest", chat.error());
  }
  return 0;
}
