#include "text/hf_byte_level_bpe_loader.h"

#include "text/byte_level_bpe_tokenizer.h"
#include "text/tokenizer_json.h"

namespace tandem::text {
namespace {

using nlohmann::json;

Status ReadNormalizer(const json& root, const std::string& path, ByteLevelBpeVocab* vocab) {
  for (const json& step : SequenceSteps(root.value("normalizer", json()), "normalizers")) {
    if (TokenizerNodeType(step) != "NFC") {
      return Unimplemented("'" + path + "': normalizer '" + step.dump() +
                           "' is not supported by the byte-level BPE tokenizer; expected NFC");
    }
    vocab->normalize_nfc = true;
  }
  return Status::Ok();
}

Status ReadPreTokenizer(const json& root, const std::string& path, ByteLevelBpeVocab* vocab) {
  for (const json& step : SequenceSteps(root.value("pre_tokenizer", json()), "pretokenizers")) {
    std::string type = TokenizerNodeType(step);
    if (type == "Split" && step.value("behavior", "") == "Isolated" &&
        !step.value("invert", false) && step.contains("pattern")) {
      const json& pattern = step["pattern"];
      if (pattern.contains("Regex") && pattern["Regex"].is_string()) {
        vocab->split_patterns.push_back(pattern["Regex"].get<std::string>());
      } else if (pattern.contains("String") && pattern["String"].is_string()) {
        vocab->split_patterns.push_back("\\Q" + pattern["String"].get<std::string>() + "\\E");
      } else {
        return InvalidArgument("'" + path + "': Split pattern " + pattern.dump() +
                               " should be {\"Regex\": ...} or {\"String\": ...}");
      }
    } else if (type == "ByteLevel") {
      if (step.value("add_prefix_space", false)) {
        // HF prepends the space to every piece present when ByteLevel runs; with nothing
        // before it, that is the whole fragment, which is all we implement.
        if (!vocab->split_patterns.empty()) {
          return Unimplemented("'" + path + "': ByteLevel add_prefix_space after a Split");
        }
        vocab->add_prefix_space = true;
      }
      if (step.value("use_regex", true)) {
        vocab->split_patterns.push_back(kGpt2SplitPattern);
      }
    } else {
      return Unimplemented("'" + path + "': pre_tokenizer step '" + step.dump() +
                           "' is not supported; expected Split(behavior Isolated) or ByteLevel");
    }
  }
  return Status::Ok();
}

// model.vocab and added_tokens into id-indexed tokens/types; ids not named are kUnused.
Status ReadVocab(TokenizerJsonFile* file, const std::string& path, ByteLevelBpeVocab* vocab) {
  if (!file->has_vocab) {
    return InvalidArgument("'" + path + "': model.vocab should be an object {piece: id}");
  }
  struct Entry {
    std::string piece;
    int64_t id;
    TokenType type;
  };
  std::vector<Entry> entries;
  entries.reserve(file->vocab.size());
  for (auto& [piece, id] : file->vocab) {
    entries.push_back({std::move(piece), id, TokenType::kNormal});
  }
  file->vocab.clear();
  TANDEM_ASSIGN_OR_RETURN(const std::vector<AddedTokenEntry> added_tokens,
                          ReadAddedTokens(file->root, path));
  for (const AddedTokenEntry& token : added_tokens) {
    entries.push_back(
        {token.content, token.id, token.special ? TokenType::kControl : TokenType::kUserDefined});
  }
  int64_t size = 0;
  for (const Entry& entry : entries) {
    if (entry.id < 0 || entry.id >= (int64_t{1} << 24)) {
      return InvalidArgument("'" + path + "': token '" + entry.piece + "' has id " +
                             std::to_string(entry.id) + "; expected 0 <= id < 2^24");
    }
    size = std::max(size, entry.id + 1);
  }
  vocab->tokens.assign(size, "");
  vocab->token_types.assign(size, static_cast<int32_t>(TokenType::kUnused));
  for (Entry& entry : entries) {  // added tokens come last and win over a vocab entry
    vocab->tokens[entry.id] = std::move(entry.piece);
    vocab->token_types[entry.id] = static_cast<int32_t>(entry.type);
  }
  return Status::Ok();
}

Status ReadModel(TokenizerJsonFile* file, const std::string& path, ByteLevelBpeVocab* vocab) {
  const json& model = file->root["model"];
  if (TokenizerNodeType(model) != "BPE") {
    return Unimplemented("'" + path + "': model.type '" + TokenizerNodeType(model) +
                         "' is not supported with a ByteLevel pre-tokenizer; expected \"BPE\"");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && model[key].is_string() && !model[key].get<std::string>().empty()) {
      return Unimplemented("'" + path + "': model." + key + " is not supported");
    }
  }
  vocab->ignore_merges = model.value("ignore_merges", false);
  TANDEM_RETURN_IF_ERROR(ReadVocab(file, path, vocab));
  TANDEM_ASSIGN_OR_RETURN(vocab->merges, TakeMerges(file, path));
  return Status::Ok();
}

int32_t FindAddedOrPiece(const ByteLevelBpeVocab& vocab, const std::string& text) {
  if (text.empty()) {
    return -1;
  }
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (vocab.tokens[id] == text) {
      return static_cast<int32_t>(id);
    }
  }
  return -1;
}

Status ReadSpecialTokens(const json& root, const std::string& config_path,
                         ByteLevelBpeVocab* vocab) {
  std::string bos;
  std::string eos;
  for (const json& step : SequenceSteps(root.value("post_processor", json()), "processors")) {
    if (TokenizerNodeType(step) != "TemplateProcessing" || !step.contains("single")) {
      continue;
    }
    const json& single = step["single"];
    if (single.is_array() && !single.empty() && single[0].contains("SpecialToken")) {
      bos = single[0]["SpecialToken"].value("id", "");
      vocab->add_bos = true;
    }
  }
  if (!config_path.empty()) {
    TANDEM_ASSIGN_OR_RETURN(const std::string text,
                            ReadTokenizerFile(config_path, "tokenizer_config.json"));
    json config = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!config.is_object()) {
      return InvalidArgument("'" + config_path + "' is not a JSON object");
    }
    if (config.contains("bos_token")) {
      bos = AddedTokenContent(config["bos_token"]);
    }
    if (config.contains("eos_token")) {
      eos = AddedTokenContent(config["eos_token"]);
    }
    if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean()) {
      vocab->add_bos = config["add_bos_token"].get<bool>();
    }
  }
  vocab->bos_id = FindAddedOrPiece(*vocab, bos);
  vocab->eos_id = FindAddedOrPiece(*vocab, eos);
  if (vocab->bos_id < 0) {
    vocab->add_bos = false;
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> LoadHfByteLevelBpe(
    TokenizerJsonFile file, const std::string& path,
    const std::string& tokenizer_config_json_path) {
  const json& root = file.root;
  ByteLevelBpeVocab vocab;
  TANDEM_RETURN_IF_ERROR(ReadNormalizer(root, path, &vocab));
  TANDEM_RETURN_IF_ERROR(ReadPreTokenizer(root, path, &vocab));
  TANDEM_RETURN_IF_ERROR(ReadModel(&file, path, &vocab));
  TANDEM_RETURN_IF_ERROR(ReadSpecialTokens(root, tokenizer_config_json_path, &vocab));
  auto tokenizer = ByteLevelBpeTokenizer::Create(std::move(vocab));
  if (!tokenizer.ok()) {
    return Status(tokenizer.status().code(), "'" + path + "': " + tokenizer.status().message());
  }
  return std::unique_ptr<Tokenizer>(std::move(tokenizer).value());
}

}  // namespace tandem::text
