// Fuzzes the regex compiler (structured/regex_compiler.h) and the automaton of its grammar, as
// `structured_outputs.regex` / `guided_regex` take them.
// Invariants beyond "no crash, no UB, no leak, no hang" (scripts/fuzz.sh caps time and RSS per
// input): the grammar of a compiled regex prints into GBNF that parses.
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "structured/automaton.h"
#include "structured/gbnf_parser.h"
#include "structured/regex_compiler.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string pattern(reinterpret_cast<const char*>(data), size);
  auto expr = tandem::structured::CompileRegex(pattern);
  if (!expr.ok()) return 0;
  tandem::structured::Grammar grammar;
  grammar.Add("root", std::move(expr).value());
  const std::string gbnf = tandem::structured::ToGbnf(grammar);
  auto reparsed = tandem::structured::ParseGbnf(gbnf);
  if (!reparsed.ok()) tandem::fuzz::Fail("a regex's grammar does not parse back: " + gbnf);
  (void)tandem::structured::Automaton::Compile(reparsed.value());
  return 0;
}
