#include "apps/model_files.h"

#include <filesystem>
#include <limits>

#include "core/logging.h"
#include "core/regular_file.h"
#include "model/config/model_config.h"
#include "model/loader/gguf_reader.h"
#include "text/gguf_byte_level_vocab.h"
#include "text/hf_tokenizer_loader.h"
#include "text/spm_bpe_tokenizer.h"

namespace tandem::apps {
namespace fs = std::filesystem;
namespace {

bool IsGgufPath(const std::string& path) {
  return fs::is_regular_file(path) && path.size() > 5 && path.substr(path.size() - 5) == ".gguf";
}

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  TANDEM_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, "model file"));
  nlohmann::json j;
  try {  // allow_exceptions=false still throws out_of_range for numbers beyond double range
    j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(path + " is not valid JSON: " + e.what());
  }
  if (j.is_discarded()) return InvalidArgument(path + " is not valid JSON");
  return j;
}

// EOS ids from a config value that may be an int or a list of ints.
void AppendEosIds(const nlohmann::json& v, std::vector<int32_t>* out) {
  auto add = [out](int32_t id) {
    if (std::find(out->begin(), out->end(), id) == out->end()) out->push_back(id);
  };
  if (v.is_number_integer()) add(v.get<int32_t>());
  if (v.is_array()) {
    for (const auto& e : v) {
      if (e.is_number_integer()) add(e.get<int32_t>());
    }
  }
}

Status InspectGguf(ModelFiles* files) {
  TANDEM_ASSIGN_OR_RETURN(auto gguf, model::GgufReader::Open(files->model_path));
  // One token per embedding row (an empty or short tokenizer.ggml.tokens refused here, before
  // the engine starts, with the rule the engine applies).
  TANDEM_RETURN_IF_ERROR(model::GgufVocabSize(*gguf).status());
  TANDEM_ASSIGN_OR_RETURN(std::string arch, gguf->GetString("general.architecture"));
  TANDEM_ASSIGN_OR_RETURN(int64_t ctx, gguf->GetIntOr(arch + ".context_length", 0));
  files->context_length = static_cast<int32_t>(ctx);
  TANDEM_ASSIGN_OR_RETURN(int64_t eos, gguf->GetIntOr("tokenizer.ggml.eos_token_id", -1));
  if (eos >= 0) files->eos_token_ids.push_back(static_cast<int32_t>(eos));
  if (gguf->Has("tokenizer.chat_template")) {
    TANDEM_ASSIGN_OR_RETURN(files->chat_template, gguf->GetString("tokenizer.chat_template"));
  }
  return Status::Ok();
}

Status InspectHfFolder(ModelFiles* files) {
  const fs::path dir(files->model_path);
  TANDEM_ASSIGN_OR_RETURN(nlohmann::json config, ReadJsonFile((dir / "config.json").string()));
  // A multimodal checkpoint (Qwen3.5's) keeps the language model's fields in text_config, where
  // vLLM reads them too (get_text_config).
  const nlohmann::json& text = config.contains("text_config") && config["text_config"].is_object()
                                   ? config["text_config"]
                                   : config;
  for (const nlohmann::json* c : {static_cast<const nlohmann::json*>(&config), &text}) {
    if (c->contains("max_position_embeddings") &&
        (*c)["max_position_embeddings"].is_number_integer()) {
      files->context_length = (*c)["max_position_embeddings"].get<int32_t>();
      break;
    }
  }
  if (config.contains("eos_token_id")) {
    AppendEosIds(config["eos_token_id"], &files->eos_token_ids);
  } else if (text.contains("eos_token_id")) {
    AppendEosIds(text["eos_token_id"], &files->eos_token_ids);
  }
  const fs::path gen = dir / "generation_config.json";
  if (fs::exists(gen)) {
    files->generation_config_path = gen.string();
    TANDEM_ASSIGN_OR_RETURN(files->generation_config, ReadJsonFile(gen.string()));
    if (files->generation_config.contains("eos_token_id")) {
      AppendEosIds(files->generation_config["eos_token_id"], &files->eos_token_ids);
    }
  }
  return Status::Ok();
}

// Chat template of an HF tokenizer folder: chat_template.jinja, else tokenizer_config.json's
// `chat_template` (a string; the list-of-named-templates form takes "default").
Status ReadHfChatTemplate(const fs::path& dir, std::string* out) {
  if (fs::exists(dir / "chat_template.jinja")) {
    TANDEM_ASSIGN_OR_RETURN(*out, ReadTextFile((dir / "chat_template.jinja").string(), "template"));
    return Status::Ok();
  }
  const fs::path tc = dir / "tokenizer_config.json";
  if (!fs::exists(tc)) return Status::Ok();
  TANDEM_ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(tc.string()));
  if (!j.contains("chat_template")) return Status::Ok();
  const auto& t = j["chat_template"];
  if (t.is_string()) *out = t.get<std::string>();
  if (t.is_array()) {
    for (const auto& e : t) {
      if (e.value("name", "") == "default" && e.contains("template")) {
        *out = e["template"].get<std::string>();
      }
    }
  }
  return Status::Ok();
}

// A "gpt2" (byte-level BPE, e.g. Qwen) GGUF vocab: tokens, token types, merges, pre-tokenizer.
Result<std::shared_ptr<const text::Tokenizer>> ByteLevelFromGguf(const model::GgufReader& gguf,
                                                                 const std::string& path) {
  text::GgufByteLevelVocabFields fields;
  if (gguf.Has("tokenizer.ggml.pre")) {
    TANDEM_ASSIGN_OR_RETURN(fields.pre, gguf.GetString("tokenizer.ggml.pre"));
  }
  TANDEM_ASSIGN_OR_RETURN(fields.tokens, gguf.GetStringArray("tokenizer.ggml.tokens"));
  if (gguf.Has("tokenizer.ggml.token_type")) {
    TANDEM_ASSIGN_OR_RETURN(std::vector<int64_t> types,
                            gguf.GetIntArray("tokenizer.ggml.token_type"));
    fields.token_types.assign(types.begin(), types.end());
  }
  TANDEM_ASSIGN_OR_RETURN(fields.merges, gguf.GetStringArray("tokenizer.ggml.merges"));
  TANDEM_ASSIGN_OR_RETURN(int64_t bos, gguf.GetIntOr("tokenizer.ggml.bos_token_id", -1));
  TANDEM_ASSIGN_OR_RETURN(int64_t eos, gguf.GetIntOr("tokenizer.ggml.eos_token_id", -1));
  fields.bos_id = static_cast<int32_t>(bos);
  fields.eos_id = static_cast<int32_t>(eos);
  if (gguf.Has("tokenizer.ggml.add_bos_token")) {
    TANDEM_ASSIGN_OR_RETURN(fields.add_bos, gguf.GetBool("tokenizer.ggml.add_bos_token"));
  }
  auto tok = text::MakeGgufByteLevelBpeTokenizer(std::move(fields));
  if (!tok.ok()) return Status(tok.status().code(), path + ": " + tok.status().message());
  return std::shared_ptr<const text::Tokenizer>(std::move(tok).value());
}

// The tokenizer of a GGUF: "llama" (SentencePiece-BPE) here, "gpt2" by ByteLevelFromGguf.
Result<std::shared_ptr<const text::Tokenizer>> SpmFromGguf(const std::string& path) {
  TANDEM_ASSIGN_OR_RETURN(auto gguf, model::GgufReader::Open(path));
  TANDEM_ASSIGN_OR_RETURN(std::string kind, gguf->GetString("tokenizer.ggml.model"));
  if (kind == "gpt2") return ByteLevelFromGguf(*gguf, path);
  if (kind != "llama") {
    return Unimplemented(path + ": tokenizer.ggml.model '" + kind +
                         "' is not supported yet (only 'llama' SentencePiece-BPE and 'gpt2' "
                         "byte-level BPE)");
  }
  text::SpmVocab vocab;
  TANDEM_ASSIGN_OR_RETURN(vocab.tokens, gguf->GetStringArray("tokenizer.ggml.tokens"));
  TANDEM_ASSIGN_OR_RETURN(vocab.scores, gguf->GetFloatArray("tokenizer.ggml.scores"));
  TANDEM_ASSIGN_OR_RETURN(std::vector<int64_t> types,
                          gguf->GetIntArray("tokenizer.ggml.token_type"));
  vocab.token_types.assign(types.begin(), types.end());
  TANDEM_ASSIGN_OR_RETURN(int64_t bos, gguf->GetIntOr("tokenizer.ggml.bos_token_id", -1));
  TANDEM_ASSIGN_OR_RETURN(int64_t eos, gguf->GetIntOr("tokenizer.ggml.eos_token_id", -1));
  TANDEM_ASSIGN_OR_RETURN(int64_t unk, gguf->GetIntOr("tokenizer.ggml.unknown_token_id", -1));
  vocab.bos_id = static_cast<int32_t>(bos);
  vocab.eos_id = static_cast<int32_t>(eos);
  vocab.unk_id = static_cast<int32_t>(unk);
  if (gguf->Has("tokenizer.ggml.add_bos_token")) {
    TANDEM_ASSIGN_OR_RETURN(vocab.add_bos, gguf->GetBool("tokenizer.ggml.add_bos_token"));
  }
  if (gguf->Has("tokenizer.ggml.add_space_prefix")) {
    TANDEM_ASSIGN_OR_RETURN(vocab.add_space_prefix,
                            gguf->GetBool("tokenizer.ggml.add_space_prefix"));
  }
  auto tok = text::SpmBpeTokenizer::Create(std::move(vocab));
  if (!tok.ok()) return InvalidArgument(path + ": " + tok.status().message());
  return std::shared_ptr<const text::Tokenizer>(std::move(tok).value());
}

}  // namespace

Result<std::string> ReadTextFile(const std::string& path, const std::string& what) {
  auto text = ReadRegularFile(path);  // a FIFO is refused, not waited on
  if (text.ok()) return text;
  if (text.status().code() == StatusCode::kNotFound) {
    return NotFound(what + ": cannot read '" + path + "'");
  }
  return Status(text.status().code(), what + ": " + text.status().message());
}

Result<ModelFiles> InspectModelFiles(const std::string& model_path,
                                     const std::string& tokenizer_path) {
  ModelFiles files;
  files.model_path = model_path;
  files.tokenizer_path = tokenizer_path.empty() ? model_path : tokenizer_path;
  if (!fs::exists(model_path)) {
    return NotFound("model '" + model_path +
                    "' does not exist (want a .gguf file or a Hugging "
                    "Face folder with config.json)");
  }
  if (!fs::is_directory(model_path)) {  // a FIFO would block the GGUF reader's open(2)
    const Status regular = CheckRegularFile(model_path);
    if (!regular.ok()) return Status(regular.code(), "model " + regular.message());
  }
  files.is_gguf = IsGgufPath(model_path);
  if (files.is_gguf) {
    TANDEM_RETURN_IF_ERROR(InspectGguf(&files));
  } else if (fs::is_directory(model_path)) {
    TANDEM_RETURN_IF_ERROR(InspectHfFolder(&files));
  } else {
    return InvalidArgument("model '" + model_path +
                           "' is neither a .gguf file nor a folder with config.json");
  }
  if (!IsGgufPath(files.tokenizer_path) && fs::is_directory(files.tokenizer_path) &&
      files.chat_template.empty()) {
    TANDEM_RETURN_IF_ERROR(ReadHfChatTemplate(files.tokenizer_path, &files.chat_template));
  }
  return files;
}

Result<int> ResolveMaxModelLen(int flag_value, const ModelFiles& files) {
  if (flag_value > 0) {
    if (files.context_length > 0 && flag_value > files.context_length) {
      return InvalidArgument("--max-model-len " + std::to_string(flag_value) +
                             " exceeds the model's context length " +
                             std::to_string(files.context_length) + " (" + files.model_path +
                             "); use at most " + std::to_string(files.context_length));
    }
    return flag_value;
  }
  if (files.context_length <= 0) {
    return InvalidArgument("the model states no context length; pass --max-model-len");
  }
  return files.context_length;
}

Result<std::shared_ptr<const text::Tokenizer>> LoadTokenizer(const ModelFiles& files) {
  const std::string& path = files.tokenizer_path;
  if (IsGgufPath(path)) return SpmFromGguf(path);
  const fs::path dir(path);
  if (!fs::exists(dir / "tokenizer.json")) {
    return NotFound("no tokenizer: '" + (dir / "tokenizer.json").string() +
                    "' does not exist; pass --tokenizer PATH");
  }
  const fs::path config = dir / "tokenizer_config.json";
  auto tok = text::LoadHfTokenizerJson((dir / "tokenizer.json").string(),
                                       fs::exists(config) ? config.string() : "");
  if (!tok.ok()) return tok.status();
  return std::shared_ptr<const text::Tokenizer>(std::move(tok).value());
}

namespace {

// The sampling defaults a generation config may set, checked as a request's fields are: a bad
// one would otherwise turn every request that omits the field into a 400 blaming the client.
Status CheckSamplingDefaults(const nlohmann::json& gen, const std::string& source) {
  const auto bad = [&](const char* key, const char* want) {
    return InvalidArgument(source + ": '" + key + "' must be " + want + ", got " + gen[key].dump());
  };
  if (gen.contains("temperature") &&
      !(gen["temperature"].is_number() && gen["temperature"].get<double>() >= 0 &&
        gen["temperature"].get<double>() <= 1e6)) {
    return bad("temperature", "a number >= 0");
  }
  if (gen.contains("top_p") && !(gen["top_p"].is_number() && gen["top_p"].get<double>() > 0 &&
                                 gen["top_p"].get<double>() <= 1)) {
    return bad("top_p", "a number in (0, 1]");
  }
  if (gen.contains("top_k") &&
      !(gen["top_k"].is_number_integer() && gen["top_k"].get<int64_t>() >= -1 &&
        gen["top_k"].get<int64_t>() <= std::numeric_limits<int32_t>::max())) {
    return bad("top_k", "an integer: -1 or 0 (off) or a count up to 2^31-1");
  }
  if (gen.contains("repetition_penalty") &&
      !(gen["repetition_penalty"].is_number() && gen["repetition_penalty"].get<double>() > 0 &&
        gen["repetition_penalty"].get<double>() <= 1e6)) {
    return bad("repetition_penalty", "a number > 0");
  }
  return Status::Ok();
}

}  // namespace

Status ApplyGenerationConfig(const std::string& mode, const std::string& override_json,
                             const ModelFiles& files, server::ServerConfig* config) {
  nlohmann::json gen = nlohmann::json::object();
  std::string source = "generation_config.json";  // what a bad default's message names
  if (mode == "vllm") {
    // vLLM's own defaults: only --override-generation-config's fields.
  } else if (mode == "auto") {
    gen = files.generation_config;
    if (!files.generation_config_path.empty()) source = files.generation_config_path;
  } else {
    const fs::path p =
        fs::is_directory(mode) ? fs::path(mode) / "generation_config.json" : fs::path(mode);
    if (!fs::exists(p)) {
      return NotFound("--generation-config: '" + p.string() +
                      "' does not exist (want auto, "
                      "vllm or a folder with generation_config.json)");
    }
    TANDEM_ASSIGN_OR_RETURN(gen, ReadJsonFile(p.string()));
    source = "--generation-config " + p.string();
  }
  if (!gen.is_object()) gen = nlohmann::json::object();
  TANDEM_RETURN_IF_ERROR(CheckSamplingDefaults(gen, source));
  // --override-generation-config's fields replace the file's (vLLM merges them the same way).
  const bool overridden = !override_json.empty();
  if (overridden) {
    const nlohmann::json fields = nlohmann::json::parse(override_json);  // outlives the loop
    TANDEM_RETURN_IF_ERROR(CheckSamplingDefaults(fields, "--override-generation-config"));
    for (const auto& [key, value] : fields.items()) gen[key] = value;
  }
  // vLLM applies these only when sampling is on (do_sample may be false: then greedy stays the
  // request's choice, but vLLM still takes the listed values as defaults).
  if (gen.contains("temperature") && gen["temperature"].is_number()) {
    config->default_temperature = gen["temperature"].get<float>();
  }
  if (gen.contains("top_p") && gen["top_p"].is_number())
    config->default_top_p = gen["top_p"].get<float>();
  if (gen.contains("top_k") && gen["top_k"].is_number_integer()) {
    config->default_top_k = gen["top_k"].get<int32_t>();
  }
  if (gen.contains("repetition_penalty") && gen["repetition_penalty"].is_number()) {
    config->default_repetition_penalty = gen["repetition_penalty"].get<float>();
  }
  std::vector<std::string> applied;
  for (const char* k : {"temperature", "top_p", "top_k", "repetition_penalty"}) {
    if (gen.contains(k)) applied.push_back(std::string(k) + "=" + gen[k].dump());
  }
  if (!applied.empty()) {
    std::string joined;
    for (auto& a : applied) joined += (joined.empty() ? "" : ", ") + a;
    TLOG_INFO("default sampling from {}: {}",
              overridden ? "generation_config.json and --override-generation-config"
                         : "generation_config.json",
              joined);
  }
  return Status::Ok();
}

}  // namespace tandem::apps
