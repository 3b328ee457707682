// Golden and reference JSON files of ../shared, read so that a test over them cannot pass on
// zero cases. Invariant: a loader either returns cases to check or throws. A file that is
// missing, unreadable, empty or not JSON, and a list of cases that is absent, of the wrong kind
// or empty, is a std::runtime_error naming the file (gtest reports an exception thrown in a test
// body as that test's failure). Every C++ test that reads a golden or reference JSON goes
// through LoadGoldenJson and RequireCases / RequireCaseMap; tests/e2e/harness.py has the same
// pair (load_golden_json, golden_cases) for the e2e tier.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

namespace tandem::golden_files {

namespace internal {

[[noreturn]] inline void Fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("golden file '" + path + "': " + what);
}

// golden[key], `key` a dot-separated path ("invariants.mtp.cases"); every step an object.
template <typename Json>
const Json& Lookup(const Json& golden, const std::string& key, const std::string& path) {
  const Json* node = &golden;
  std::string walked;
  for (size_t begin = 0; begin <= key.size();) {
    const size_t end = std::min(key.find('.', begin), key.size());
    const std::string part = key.substr(begin, end - begin);
    if (!node->is_object()) {
      Fail(path, "'" + (walked.empty() ? std::string("(top level)") : walked) + "' is " +
                     node->type_name() + "; expected an object holding '" + part +
                     "' (the file's layout changed, or it is not this test's golden)");
    }
    walked += (walked.empty() ? "" : ".") + part;
    const auto it = node->find(part);
    if (it == node->end()) Fail(path, "no '" + walked + "': a test over it would check zero cases");
    node = &*it;
    begin = end + 1;
  }
  return *node;
}

}  // namespace internal

// Reads and parses the golden file `path` (as nlohmann::json, or nlohmann::ordered_json where
// key order matters, as in chat-template contexts). Throws std::runtime_error naming `path`
// when it is missing, not a regular file, unreadable, empty (only whitespace) or not JSON.
// Any thread.
template <typename Json = nlohmann::json>
Json LoadGoldenJson(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    internal::Fail(path,
                   "missing or not a regular file; point TANDEM_SHARED_DIR (cmake "
                   "-DTANDEM_SHARED_DIR=...) at the shared folder that holds models/");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) internal::Fail(path, std::string("cannot be opened: ") + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) internal::Fail(path, "could not be read to the end");
  const std::string text = buffer.str();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    internal::Fail(path, "empty (" + std::to_string(text.size()) +
                             " bytes): a test over it would check zero cases");
  }
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    internal::Fail(path, std::string("not JSON: ") + e.what());
  }
}

// golden[key] of the file `path` (named in errors), `key` a dot-separated path such as "cases"
// or "invariants.mtp.cases": a non-empty array, returned by reference into `golden` (keep
// `golden` alive while iterating). Throws std::runtime_error naming `path` and `key` when a step
// is missing or not an object, or the value is not an array or is empty.
template <typename Json>
const Json& RequireCases(const Json& golden, const std::string& key, const std::string& path) {
  const Json& cases = internal::Lookup(golden, key, path);
  if (!cases.is_array()) {
    internal::Fail(
        path, "'" + key + "' is " + cases.type_name() + "; expected a non-empty array of cases");
  }
  if (cases.empty()) {
    internal::Fail(path, "'" + key + "' is an empty array: a test over it would check zero cases");
  }
  return cases;
}

// As RequireCases for cases keyed by name (stories260K's "tokenize_no_bos": text → ids): a
// non-empty object.
template <typename Json>
const Json& RequireCaseMap(const Json& golden, const std::string& key, const std::string& path) {
  const Json& cases = internal::Lookup(golden, key, path);
  if (!cases.is_object()) {
    internal::Fail(
        path, "'" + key + "' is " + cases.type_name() + "; expected a non-empty object of cases");
  }
  if (cases.empty()) {
    internal::Fail(path, "'" + key + "' is an empty object: a test over it would check zero cases");
  }
  return cases;
}

}  // namespace tandem::golden_files
