// ParseGbnf: llama.cpp's GBNF grammar text into a Grammar — the form of vLLM's
// structured_outputs.grammar / guided_grammar field, and the text that carries every compiled
// constraint from the API server to the workers.
//
// Syntax (llama.cpp grammars/README.md): rules `name ::= alternatives`, names [A-Za-z0-9_-]+;
// alternatives `a | b`; sequences by juxtaposition; "literal" and [class] / [^class] with
// escapes \n \r \t \\ \" \[ \] \- \^ \/ \xHH \uHHHH \UHHHHHHHH; "." any code point; groups (...);
// quantifiers * + ? {m} {m,} {m,n} (n <= 10000); comments from # to the end of the line. A rule
// ends at a newline unless inside parentheses or right after "|". The start rule is "root".
// Errors: kInvalidArgument with line:column and what was expected; an undefined or twice-defined
// rule; nesting deeper than 256.
#pragma once

#include <string_view>

#include "core/status.h"
#include "structured/grammar.h"

namespace tandem::structured {

Result<Grammar> ParseGbnf(std::string_view text);

}  // namespace tandem::structured
