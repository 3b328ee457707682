#include "apps/tokenize_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/model_files.h"

namespace tandem::apps {
namespace {

std::string JoinWithSpaces(const std::vector<std::string>& parts) {
  std::string joined;
  for (const std::string& part : parts) {
    if (!joined.empty()) joined += ' ';
    joined += part;
  }
  return joined;
}

}  // namespace

int RunTokenizeCommand(int argc, char** argv) {
  CLI::App app("tandem tokenize: print the token ids / pieces of a text as JSON",
               "tandem tokenize");
  std::string tokenizer_path;
  bool ids_only = false;
  bool pieces_only = false;
  bool no_add_special_tokens = false;
  std::vector<std::string> texts;
  app.add_option("--tokenizer", tokenizer_path,
                 "a .gguf file (vocab-only is fine) or a folder with tokenizer.json")
      ->required();
  app.add_flag("--ids", ids_only, "print only {\"ids\": [...]}");
  app.add_flag("--pieces", pieces_only, "print only {\"pieces\": [...]}");
  app.add_flag("--no-add-special-tokens", no_add_special_tokens, "do not prepend BOS");
  app.add_option("text", texts, "text to tokenize, joined by spaces (default: all of stdin)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (ids_only && pieces_only) {
    std::fprintf(stderr,
                 "tandem tokenize: --ids and --pieces exclude each other; give one or "
                 "neither (neither prints both)\n");
    return 2;
  }
  // Only the tokenizer is needed: no config.json, context length or weights.
  ModelFiles files;
  files.model_path = tokenizer_path;
  files.tokenizer_path = tokenizer_path;
  auto tokenizer = LoadTokenizer(files);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "tandem tokenize: %s\n", tokenizer.status().ToString().c_str());
    return 1;
  }
  std::string text = texts.empty() ? std::string(std::istreambuf_iterator<char>(std::cin),
                                                 std::istreambuf_iterator<char>())
                                   : JoinWithSpaces(texts);
  std::vector<int32_t> ids = (*tokenizer)->Encode(text, !no_add_special_tokens);
  nlohmann::json out = nlohmann::json::object();
  if (!pieces_only) out["ids"] = ids;
  if (!ids_only) {
    nlohmann::json pieces = nlohmann::json::array();
    for (int32_t id : ids) pieces.push_back((*tokenizer)->IdToPiece(id));
    out["pieces"] = std::move(pieces);
  }
  std::string json_text =
      out.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  std::printf("%s\n", json_text.c_str());
  return 0;
}

}  // namespace tandem::apps
