// Fuzzes the JSON Schema compiler end to end as a request's schema takes it: the text through
// the bounded JSON parser (text/bounded_json.h), CompileJsonSchema, the GBNF round trip and the
// automaton (the API server's path in server/openai/structured_outputs.cpp).
// Invariants beyond "no crash, no UB, no leak, no hang" (scripts/fuzz.sh caps time and RSS per
// input): a compiled grammar prints into GBNF that parses.
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "structured/automaton.h"
#include "structured/gbnf_parser.h"
#include "structured/json_schema_compiler.h"
#include "text/bounded_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::ordered_json schema;
  tandem::text::BoundedJsonError error;
  if (!tandem::text::ParseBoundedJson(text, tandem::kMaxJsonDepth, &schema, &error)) return 0;
  auto grammar = tandem::structured::CompileJsonSchema(schema);
  if (!grammar.ok()) return 0;
  const std::string gbnf = tandem::structured::ToGbnf(grammar.value());
  auto reparsed = tandem::structured::ParseGbnf(gbnf);
  if (!reparsed.ok()) tandem::fuzz::Fail("a schema's grammar does not parse back: " + gbnf);
  (void)tandem::structured::Automaton::Compile(reparsed.value());
  return 0;
}
