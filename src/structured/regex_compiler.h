// CompileRegex: a regular expression (the syntax JSON Schema "pattern" and vLLM's guided_regex /
// structured_outputs.regex users write: ECMA-262 / Python `re`, the regular subset) into a
// grammar Expr that matches exactly the strings the regex matches in full.
//
// Semantics: full match (as vLLM's backends do for guided_regex and JSON Schema patterns); a
// leading ^ and a trailing $ are accepted and mean nothing more. Supported: literals and
// escapes (\n \t \r \f \v \0 \xHH \uHHHH \u{H...} \\ \. etc.), classes [...] and [^...] with
// ranges and \d \w \s \D \W \S inside and outside, ".", groups (...) (?:...) and named groups
// (?<name>...) / (?P<name>...), alternation |, quantifiers * + ? {m} {m,} {m,n} and their lazy
// (?) forms (no effect on the set of full matches).
// Refused with kInvalidArgument naming the construct and its byte offset: back-references,
// lookaround, possessive quantifiers, \b \B, anchors elsewhere than the ends, unbalanced
// brackets, bad ranges, {m,n} with m > n or n > 10000, flags groups (?i) etc.
#pragma once

#include <string_view>

#include "core/status.h"
#include "structured/grammar.h"

namespace tandem::structured {

Result<Expr> CompileRegex(std::string_view pattern);

}  // namespace tandem::structured
