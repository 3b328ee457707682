// Fuzzes the GBNF grammar parser and the automaton compiler (structured/gbnf_parser.h,
// automaton.h): a client's `structured_outputs.grammar` goes through exactly these.
// Invariants beyond "no crash, no UB, no leak, no hang" (run with -timeout and -rss_limit_mb:
// scripts/fuzz.sh): a grammar that parses prints back (ToGbnf) into text that parses again into
// the same text, and compiles the same way (both ok, or both refused).
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "structured/automaton.h"
#include "structured/gbnf_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto grammar = tandem::structured::ParseGbnf(text);
  if (!grammar.ok()) return 0;
  const std::string printed = tandem::structured::ToGbnf(grammar.value());
  auto reparsed = tandem::structured::ParseGbnf(printed);
  if (!reparsed.ok()) tandem::fuzz::Fail("ToGbnf text does not parse: " + printed);
  if (tandem::structured::ToGbnf(reparsed.value()) != printed) {
    tandem::fuzz::Fail("ToGbnf is not a fixed point: " + printed);
  }
  const bool compiled = tandem::structured::Automaton::Compile(grammar.value()).ok();
  if (compiled != tandem::structured::Automaton::Compile(reparsed.value()).ok()) {
    tandem::fuzz::Fail("a grammar and its printed text compile differently: " + printed);
  }
  return 0;
}
