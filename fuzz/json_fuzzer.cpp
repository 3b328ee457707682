// Fuzzes the bounded JSON parser (text/bounded_json.h) every request body and every JSON text
// from a client or the model goes through, into both DOM kinds.
// Invariants beyond "no crash, no UB, no leak, no hang" (scripts/fuzz.sh caps time and RSS per
// input): the ordered and the sorted parse agree on success; a parsed value dumps into text
// that parses again into an equal value; a refusal leaves a null value.
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "text/bounded_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::ordered_json ordered;
  nlohmann::json sorted;
  tandem::text::BoundedJsonError error;
  const bool ok = tandem::text::ParseBoundedJson(text, tandem::kMaxJsonDepth, &ordered, &error);
  if (ok != tandem::text::ParseBoundedJson(text, tandem::kMaxJsonDepth, &sorted, &error)) {
    tandem::fuzz::Fail("the ordered and the sorted parse disagree");
  }
  if (!ok) {
    if (!ordered.is_null() || !sorted.is_null()) tandem::fuzz::Fail("a refusal left a value");
    return 0;
  }
  const std::string dumped =
      ordered.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::strict);
  nlohmann::ordered_json again;
  if (!tandem::text::ParseBoundedJson(dumped, tandem::kMaxJsonDepth, &again, &error) ||
      again != ordered) {
    tandem::fuzz::Fail("a parsed value does not survive dump and parse: " + dumped);
  }
  if (nlohmann::json(ordered) != sorted) tandem::fuzz::Fail("the two parses hold other values");
  return 0;
}
