// BoundedDomSax: a DOM builder for nlohmann::json's SAX parser with limits on nesting, keys and
// values, enforced while parsing (text/bounded_json.h's parser; text/tokenizer_json_reader.cpp
// builds the small part of a tokenizer.json with it).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/json_limits.h"

namespace tandem::text {

// A DOM builder for nlohmann's SAX parser (which is iterative, with an explicit stack) that
// refuses, while parsing, nesting past `max_depth`, objects with more than kMaxJsonObjectKeys
// keys and texts with more than kMaxJsonValues values: a callback returning false ends
// sax_parse at once, so no value past a limit is ever built.
//
// It also builds objects in linear time. nlohmann's own builder inserts each key with
// object_t::operator[], which for ordered_json (a vector of pairs) searches the keys so far:
// quadratic, 14 s for an object of 100k keys. Here a key is appended; an object past
// kLinearScanKeys keys gets a hash index of its keys to find a repeated one (the later value
// wins, in the first one's place, as nlohmann's builder does).
template <typename BasicJson>
class BoundedDomSax {
 public:
  using number_integer_t = typename BasicJson::number_integer_t;
  using number_unsigned_t = typename BasicJson::number_unsigned_t;
  using number_float_t = typename BasicJson::number_float_t;
  using string_t = typename BasicJson::string_t;
  using binary_t = typename BasicJson::binary_t;
  using object_t = typename BasicJson::object_t;

  BoundedDomSax(BasicJson* result, int32_t max_depth) : root_(*result), max_depth_(max_depth) {}

  bool null() { return Value(nullptr); }
  bool boolean(bool v) { return Value(v); }
  bool number_integer(number_integer_t v) { return Value(v); }
  bool number_unsigned(number_unsigned_t v) { return Value(v); }
  bool number_float(number_float_t v, const string_t&) { return Value(v); }
  bool string(string_t& v) { return Value(std::move(v)); }
  bool binary(binary_t& v) { return Value(BasicJson::binary(std::move(v))); }
  bool key(string_t& k) {
    Open& open = stack_.back();
    object_t& object = *open.value->template get_ptr<object_t*>();
    if (BasicJson* repeated = Find(open, object, k)) {
      slot_ = repeated;
      *slot_ = nullptr;  // a repeated key: the later value wins
      return true;
    }
    if (static_cast<int64_t>(object.size()) >= kMaxJsonObjectKeys) {
      limit_ = fmt::format("a JSON object with more than {} keys, the limit", kMaxJsonObjectKeys);
      return false;
    }
    slot_ = Append(open, object, std::move(k));
    return true;
  }
  bool start_object(std::size_t) { return Enter(BasicJson::value_t::object); }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return Enter(BasicJson::value_t::array); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& ex) {
    message_ = ex.what();
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string& limit() const { return limit_; }  // the size limit passed, or empty
  const std::string& message() const { return message_; }

 private:
  static constexpr size_t kLinearScanKeys = 16;

  struct Open {
    BasicJson* value;
    std::unordered_map<string_t, size_t> index;  // key -> position, once past kLinearScanKeys
  };

  // The object is a vector of pairs (ordered_json's ordered_map) or a std::map (json).
  static constexpr bool kVectorObject =
      std::is_base_of_v<std::vector<typename object_t::value_type>, object_t>;

  // The value of key `k` in the open object, or nullptr.
  static BasicJson* Find(Open& open, object_t& object, const string_t& k) {
    if constexpr (kVectorObject) {
      if (!open.index.empty()) {
        const auto it = open.index.find(k);
        if (it == open.index.end()) {
          return nullptr;
        }
        return &static_cast<std::vector<typename object_t::value_type>&>(object)[it->second].second;
      }
      for (auto& [name, value] : object) {
        if (name == k) {
          return &value;
        }
      }
      return nullptr;
    } else {
      const auto it = object.find(k);
      return it == object.end() ? nullptr : &it->second;
    }
  }

  // Appends (k, null) without searching the keys, returning the new value.
  static BasicJson* Append(Open& open, object_t& object, string_t k) {
    if constexpr (kVectorObject) {
      auto& pairs = static_cast<std::vector<typename object_t::value_type>&>(object);
      if (!open.index.empty() || pairs.size() == kLinearScanKeys) {
        for (size_t i = open.index.size(); i < pairs.size(); ++i) {
          open.index.emplace(pairs[i].first, i);
        }
        open.index.emplace(k, pairs.size());
      }
      pairs.emplace_back(std::move(k), nullptr);
      return &pairs.back().second;
    } else {
      return &object.emplace(std::move(k), nullptr).first->second;  // O(log n)
    }
  }

  bool Count() {
    if (++values_ <= kMaxJsonValues) {
      return true;
    }
    limit_ = fmt::format("more than {} JSON values, the limit", kMaxJsonValues);
    return false;
  }

  // Places a scalar where the next value goes: the root, the end of the open array, or the
  // slot of the open object's last key.
  template <typename Scalar>
  bool Value(Scalar&& v) {
    if (!Count()) {
      return false;
    }
    *Slot() = BasicJson(std::forward<Scalar>(v));
    return true;
  }

  BasicJson* Slot() {
    if (stack_.empty()) {
      return &root_;
    }
    BasicJson* top = stack_.back().value;
    if (top->is_array()) {
      auto* array = top->template get_ptr<typename BasicJson::array_t*>();
      array->emplace_back();
      return &array->back();
    }
    return slot_;
  }

  bool Enter(typename BasicJson::value_t type) {
    if (static_cast<int32_t>(stack_.size()) + 1 > max_depth_) {
      too_deep_ = true;
      return false;
    }
    if (!Count()) {
      return false;
    }
    BasicJson* value = Slot();
    *value = BasicJson(type);
    stack_.push_back(Open{value, {}});
    return true;
  }

  BasicJson& root_;
  const int32_t max_depth_;
  std::vector<Open> stack_;    // the open arrays and objects, outermost first
  BasicJson* slot_ = nullptr;  // the open object's value for its last key
  int64_t values_ = 0;
  bool too_deep_ = false;
  std::string limit_;
  std::string message_;
};

}  // namespace tandem::text
