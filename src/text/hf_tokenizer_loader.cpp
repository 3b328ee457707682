#include "text/hf_tokenizer_loader.h"

#include <nlohmann/json.hpp>

#include "text/hf_byte_level_bpe_loader.h"
#include "text/spm_bpe_tokenizer.h"
#include "text/tokenizer_json.h"
#include "text/tokenizer_json_reader.h"

namespace tandem::text {
namespace {

using nlohmann::json;

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581 '▁'

Result<json> ReadJsonFile(const std::string& path) {
  TANDEM_ASSIGN_OR_RETURN(const std::string text,
                          ReadTokenizerFile(path, "a tokenizer JSON file there"));
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return InvalidArgument("'" + path + "' is not valid JSON");
  }
  return parsed;
}

bool MentionsByteLevel(const json& node, const char* list_key) {
  for (const json& step : SequenceSteps(node, list_key)) {
    if (TokenizerNodeType(step) == "ByteLevel") {
      return true;
    }
  }
  return false;
}

// Decides add_space_prefix from the normalizer / pre-tokenizer. Errors name what is unsupported.
Status ReadSpacePrefix(const json& root, const std::string& path, bool* add_space_prefix) {
  *add_space_prefix = false;
  for (const json& step : SequenceSteps(root.value("normalizer", json()), "normalizers")) {
    std::string type = TokenizerNodeType(step);
    if (type == "Prepend" && step.value("prepend", "") == kSpaceMarker) {
      *add_space_prefix = true;
    } else if (type == "Replace" && step.contains("pattern") &&
               step["pattern"].value("String", "") == " " &&
               step.value("content", "") == kSpaceMarker) {
      // Always applied by SpmBpeTokenizer.
    } else {
      return Unimplemented("'" + path + "': normalizer step '" + step.dump() +
                           "' is not supported; expected Prepend(\"▁\") and Replace(\" \"→\"▁\")");
    }
  }
  for (const json& step : SequenceSteps(root.value("pre_tokenizer", json()), "pretokenizers")) {
    if (TokenizerNodeType(step) == "Metaspace" && !step.value("split", false)) {
      std::string scheme =
          step.value("prepend_scheme", step.value("add_prefix_space", true) ? "always" : "never");
      *add_space_prefix = scheme != "never";
    } else {
      return Unimplemented("'" + path + "': pre_tokenizer '" + step.dump() +
                           "' is not supported by the SentencePiece-BPE tokenizer");
    }
  }
  return Status::Ok();
}

Status ReadVocab(TokenizerJsonFile* file, const std::string& path, SpmVocab* vocab) {
  if (!file->has_vocab) {
    return InvalidArgument("'" + path + "': model.vocab should be an object {piece: id}");
  }
  const json& root = file->root;
  std::vector<std::pair<std::string, int64_t>> entries = std::move(file->vocab);
  std::vector<std::pair<std::string, bool>> added;  // id-indexed later
  std::vector<int64_t> added_ids;
  TANDEM_ASSIGN_OR_RETURN(const std::vector<AddedTokenEntry> added_tokens,
                          ReadAddedTokens(root, path));
  for (const AddedTokenEntry& token : added_tokens) {
    entries.emplace_back(token.content, token.id);
    added.emplace_back(token.content, token.special);
    added_ids.push_back(token.id);
  }
  int64_t size = 0;
  for (const auto& [piece, id] : entries) {
    if (id < 0 || id > (int64_t{1} << 24)) {
      return InvalidArgument("'" + path + "': token '" + piece + "' has id " + std::to_string(id) +
                             "; expected 0 <= id < 2^24");
    }
    size = std::max(size, id + 1);
  }
  vocab->tokens.assign(size, "");
  vocab->token_types.assign(size, static_cast<int32_t>(TokenType::kUnused));
  for (const auto& [piece, id] : entries) {
    vocab->tokens[id] = piece;
    vocab->token_types[id] = static_cast<int32_t>(TokenType::kNormal);
  }
  for (size_t i = 0; i < added.size(); ++i) {
    vocab->token_types[added_ids[i]] =
        static_cast<int32_t>(added[i].second ? TokenType::kControl : TokenType::kUserDefined);
  }
  vocab->scores.assign(size, 0.0f);
  return Status::Ok();
}

int32_t FindId(const SpmVocab& vocab, const std::string& piece) {
  if (piece.empty()) {
    return -1;
  }
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (vocab.tokens[id] == piece) {
      return static_cast<int32_t>(id);
    }
  }
  return -1;
}

// BOS and add_bos as the post-processor implies: TemplateProcessing whose `single` starts with a
// SpecialToken.
void ReadPostProcessor(const json& root, const SpmVocab& vocab, std::string* bos, bool* add_bos) {
  *add_bos = false;
  for (const json& step : SequenceSteps(root.value("post_processor", json()), "processors")) {
    if (TokenizerNodeType(step) != "TemplateProcessing" || !step.contains("single")) {
      continue;
    }
    const json& single = step["single"];
    if (single.is_array() && !single.empty() && single[0].contains("SpecialToken")) {
      *bos = single[0]["SpecialToken"].value("id", "");
      *add_bos = FindId(vocab, *bos) >= 0;
    }
  }
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> LoadHfTokenizerJson(
    const std::string& tokenizer_json_path, const std::string& tokenizer_config_json_path) {
  TANDEM_ASSIGN_OR_RETURN(TokenizerJsonFile file, ReadTokenizerJson(tokenizer_json_path));
  const json& root = file.root;
  const std::string& path = tokenizer_json_path;
  if (!root.is_object() || !root.contains("model") || !root["model"].is_object()) {
    return InvalidArgument("'" + path + "' has no \"model\" object; expected an HF tokenizer.json");
  }
  if (MentionsByteLevel(root.value("pre_tokenizer", json()), "pretokenizers") ||
      MentionsByteLevel(root.value("decoder", json()), "decoders")) {
    return LoadHfByteLevelBpe(std::move(file), path, tokenizer_config_json_path);
  }
  std::string model_type = TokenizerNodeType(root["model"]);
  if (model_type != "BPE") {
    return Unimplemented("'" + path + "': model.type '" + model_type +
                         "' is not supported; expected \"BPE\" (SentencePiece-style)");
  }
  SpmVocab vocab;
  TANDEM_RETURN_IF_ERROR(ReadVocab(&file, path, &vocab));
  TANDEM_ASSIGN_OR_RETURN(vocab.merges, TakeMerges(&file, path));
  TANDEM_RETURN_IF_ERROR(ReadSpacePrefix(root, path, &vocab.add_space_prefix));
  const json& unk = root["model"].value("unk_token", json());
  vocab.unk_id = unk.is_string() ? FindId(vocab, unk.get<std::string>()) : -1;

  std::string bos;
  std::string eos;
  ReadPostProcessor(root, vocab, &bos, &vocab.add_bos);
  if (!tokenizer_config_json_path.empty()) {
    TANDEM_ASSIGN_OR_RETURN(json config, ReadJsonFile(tokenizer_config_json_path));
    if (config.contains("bos_token")) {
      bos = AddedTokenContent(config["bos_token"]);
    }
    if (config.contains("eos_token")) {
      eos = AddedTokenContent(config["eos_token"]);
    }
    if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean()) {
      vocab.add_bos = config["add_bos_token"].get<bool>();
    }
  }
  vocab.bos_id = FindId(vocab, bos);
  vocab.eos_id = FindId(vocab, eos);
  if (vocab.bos_id < 0) {
    vocab.add_bos = false;
  }
  TANDEM_ASSIGN_OR_RETURN(std::unique_ptr<SpmBpeTokenizer> tokenizer,
                          SpmBpeTokenizer::Create(std::move(vocab)));
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

}  // namespace tandem::text
