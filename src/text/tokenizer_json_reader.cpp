#include "text/tokenizer_json_reader.h"

#include <limits>

#include "core/regular_file.h"
#include "text/bounded_dom_sax.h"

namespace tandem::text {
namespace {

using nlohmann::json;

// SAX handler: model.vocab's and model.merges' entries go to TokenizerJsonFile's vectors (the
// DOM gets null in their place); every other event goes to a BoundedDomSax building `root`.
// Depths count open arrays and objects: the root object is depth 1, "model" depth 2.
class TokenizerJsonSax {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  explicit TokenizerJsonSax(TokenizerJsonFile* file)
      : file_(file), dom_(&file->root, kMaxJsonDepth) {}

  bool null() {
    return Scalar("null", [&] { return dom_.null(); });
  }
  bool boolean(bool v) {
    return Scalar("a boolean", [&] { return dom_.boolean(v); });
  }
  bool number_integer(number_integer_t v) {
    if (capture_ == Capture::kVocab) {
      file_->vocab.emplace_back(std::move(pending_piece_), v);
      return true;
    }
    return Scalar("a number", [&] { return dom_.number_integer(v); });
  }
  bool number_unsigned(number_unsigned_t v) {
    if (capture_ == Capture::kVocab) {
      // Past int64: an id no loader accepts (they refuse ids >= 2^24), kept as such.
      const auto id = v > static_cast<number_unsigned_t>(std::numeric_limits<int64_t>::max())
                          ? std::numeric_limits<int64_t>::max()
                          : static_cast<int64_t>(v);
      file_->vocab.emplace_back(std::move(pending_piece_), id);
      return true;
    }
    return Scalar("a number", [&] { return dom_.number_unsigned(v); });
  }
  bool number_float(number_float_t v, const string_t& s) {
    return Scalar("a number", [&] { return dom_.number_float(v, s); });
  }
  bool binary(binary_t& v) {
    return Scalar("binary", [&] { return dom_.binary(v); });
  }
  bool string(string_t& v) {
    switch (capture_) {
      case Capture::kMerges: {
        const size_t space = v.find(' ');
        if (space == std::string::npos || v.find(' ', space + 1) != std::string::npos) {
          return Fail("merge #" + std::to_string(file_->merges.size()) + " \"" + v +
                      "\" should be two pieces separated by one space");
        }
        file_->merges.emplace_back(v.substr(0, space), v.substr(space + 1));
        return true;
      }
      case Capture::kMergePair:
        if (pair_.size() == 2) {
          return Fail(MergeShapeError("an array of more than two strings"));
        }
        pair_.push_back(std::move(v));
        return true;
      default:
        return Scalar("a string", [&] { return dom_.string(v); });
    }
  }

  bool key(string_t& k) {
    if (capture_ == Capture::kVocab) {
      pending_piece_ = std::move(k);
      return true;
    }
    if (depth_ == 1) {
      model_key_ = k == "model";
    }
    next_ = Capture::kNone;
    if (depth_ == 2 && in_model_) {
      next_ = k == "vocab" ? Capture::kVocab : k == "merges" ? Capture::kMerges : Capture::kNone;
    }
    return dom_.key(k);
  }

  bool start_object(std::size_t n) {
    if (capture_ != Capture::kNone) {
      return Scalar("an object", [] { return true; });  // refused: no object inside either
    }
    if (next_ == Capture::kVocab) {
      return BeginCapture(Capture::kVocab, &file_->has_vocab);
    }
    if (depth_ == 1 && model_key_) {
      in_model_ = true;
    }
    next_ = Capture::kNone;
    ++depth_;
    return dom_.start_object(n);
  }
  bool end_object() {
    --depth_;
    if (capture_ == Capture::kVocab) {
      capture_ = Capture::kNone;  // the vocab object itself: its inner objects were refused
      return true;
    }
    if (depth_ == 1) {
      in_model_ = false;
    }
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (capture_ == Capture::kMerges) {
      capture_ = Capture::kMergePair;
      pair_.clear();
      ++depth_;
      return true;
    }
    if (capture_ != Capture::kNone) {
      return Scalar("an array", [] { return true; });  // refused
    }
    if (next_ == Capture::kMerges) {
      return BeginCapture(Capture::kMerges, &file_->has_merges);
    }
    next_ = Capture::kNone;
    ++depth_;
    return dom_.start_array(n);
  }
  bool end_array() {
    --depth_;
    if (capture_ == Capture::kMergePair) {
      if (pair_.size() != 2) {
        return Fail(MergeShapeError("an array of " + std::to_string(pair_.size()) + " strings"));
      }
      file_->merges.emplace_back(std::move(pair_[0]), std::move(pair_[1]));
      capture_ = Capture::kMerges;
      return true;
    }
    if (capture_ == Capture::kMerges) {
      capture_ = Capture::kNone;
      return true;
    }
    if (depth_ == 1) {
      in_model_ = false;
    }
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& last_token, const Exception& ex) {
    return dom_.parse_error(position, last_token, ex);
  }

  // Why parsing stopped early, for the caller: this handler's own refusal, or the DOM's.
  std::string Error() const {
    if (!error_.empty()) {
      return error_;
    }
    if (dom_.too_deep()) {
      return "it nests arrays and objects deeper than " + std::to_string(kMaxJsonDepth) +
             " levels, the limit";
    }
    if (!dom_.limit().empty()) {
      return "it holds " + dom_.limit();
    }
    return "it is not valid JSON: " +
           (dom_.message().empty() ? std::string("(no detail)") : dom_.message());
  }

 private:
  enum class Capture { kNone, kVocab, kMerges, kMergePair };

  // model.vocab or model.merges opens: null in the DOM, entries to the vectors from here.
  bool BeginCapture(Capture what, bool* seen) {
    next_ = Capture::kNone;
    *seen = true;
    capture_ = what;
    ++depth_;
    return dom_.null();
  }

  // A value outside vocab and merges goes to the DOM; inside them it is refused (`kind` names
  // what it was).
  template <typename ToDom>
  bool Scalar(const char* kind, ToDom to_dom) {
    switch (capture_) {
      case Capture::kNone:
        next_ = Capture::kNone;
        return to_dom();
      case Capture::kVocab:
        return Fail("model.vocab[\"" + pending_piece_ + "\"] should be an integer id, not " + kind);
      case Capture::kMerges:
        return Fail(MergeShapeError(kind));
      case Capture::kMergePair:
        return Fail(MergeShapeError(std::string("an array holding ") + kind));
    }
    return false;
  }

  std::string MergeShapeError(const std::string& found) const {
    return "merge #" + std::to_string(file_->merges.size()) +
           " should be \"a b\" or [\"a\", \"b\"], not " + found;
  }

  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  TokenizerJsonFile* file_;
  BoundedDomSax<json> dom_;
  int32_t depth_ = 0;
  bool model_key_ = false;            // the root object's last key was "model"
  bool in_model_ = false;             // the open depth-2 container is the root's "model" object
  Capture next_ = Capture::kNone;     // what the value of the model's last key opens
  Capture capture_ = Capture::kNone;  // where entries go now
  std::string pending_piece_;         // in model.vocab: the key whose id comes next
  std::vector<std::string> pair_;     // in a ["a", "b"] merge: its strings so far
  std::string error_;
};

}  // namespace

Result<std::string> ReadTokenizerFile(const std::string& path, const std::string& expected) {
  auto text = ReadRegularFile(path);  // a FIFO is refused, not waited on
  if (!text.ok() && text.status().code() == StatusCode::kNotFound) {
    return NotFound("cannot open '" + path + "'; expected " + expected);
  }
  return text;
}

Result<TokenizerJsonFile> ReadTokenizerJson(const std::string& path) {
  auto text = ReadTokenizerFile(path, "a tokenizer JSON file there");
  if (!text.ok()) {
    return text.status();
  }
  TokenizerJsonFile file;
  TokenizerJsonSax sax(&file);
  bool parsed = false;
  std::string error;
  try {
    parsed = json::sax_parse(*text, &sax);
  } catch (const json::exception& e) {  // e.g. an excessive container size
    error = e.what();
  }
  if (!parsed) {
    return InvalidArgument("'" + path + "': " + (error.empty() ? sax.Error() : error));
  }
  return file;
}

Result<std::vector<std::pair<std::string, std::string>>> TakeMerges(TokenizerJsonFile* file,
                                                                    const std::string& path) {
  const json& root = file->root;
  const auto model = root.is_object() ? root.find("model") : root.end();
  if (!file->has_merges && model != root.end() && model->is_object() &&
      !model->value("merges", json()).is_null()) {
    return InvalidArgument("'" + path + "': model.merges should be a list");
  }
  return std::move(file->merges);
}

}  // namespace tandem::text
