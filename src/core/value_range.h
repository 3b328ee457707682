// Parsing a flag's or a config field's number with its accepted range, refused in words a person
// reads: "must be an integer in [1, 65536], got '0'". Two traps this avoids: CLI11's Range prints
// an int flag's bounds as doubles (300 digits for the largest double), and CLI11's Range and
// PositiveNumber compare, so NaN, which compares false to everything, passes both.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace tandem {

// Parses the whole of `text` (spaces around it allowed) as a base-10 integer in [min, max].
// Errors: kInvalidArgument "must be an integer in [MIN, MAX], got 'TEXT'" — also for a number
// beyond int64 or anything that is not an integer (1e3, 2.5, 0x10). Bounds that are a type's
// limit read 2^31-1, 2^63-1, -2^31, -2^63.
Result<int64_t> ParseIntInRange(const std::string& text, int64_t min, int64_t max);

// Parses the whole of `text` (strtod's syntax) as a finite number in [min, max], or (min, max]
// when `min_exclusive`. Errors: kInvalidArgument "must be a finite number in (0, 1], got 'nan'"
// for NaN, ±inf, out of range, or not a number.
Result<double> ParseFiniteInRange(const std::string& text, double min, double max,
                                  bool min_exclusive = false);

// The ranges as those messages write them: "[1, 65536]", "[0, 2^63-1]", "(0, 1]", "[0.1, 86400]".
std::string IntRangeText(int64_t min, int64_t max);
std::string NumberRangeText(double min, double max, bool min_exclusive = false);

}  // namespace tandem
