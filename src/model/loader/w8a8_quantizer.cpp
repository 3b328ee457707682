#include "model/loader/w8a8_quantizer.h"

#include <fnmatch.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "model/config/hf_config.h"
#include "model/config/qwen35_config.h"
#include "model/loader/safetensors_reader.h"
#include "model/loader/safetensors_writer.h"

namespace tandem::model {
namespace {

namespace fs = std::filesystem;

size_t ElementBytes(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32") {
    return 4;
  }
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16") {
    return 2;
  }
  if (dtype == "I64" || dtype == "F64") {
    return 8;
  }
  return 1;
}

// Rows [first, first + rows) of a 2-d (or flattened n-d) float tensor with `cols` columns, f32.
Result<std::vector<float>> RowsAsF32(const SafetensorsBytes& b, int64_t first, int64_t rows,
                                     int64_t cols) {
  const std::string& dt = b.info->dtype;
  if (dt != "F32" && dt != "BF16" && dt != "F16") {
    return InvalidArgument("tensor '" + b.info->name + "' is " + dt +
                           "; only F32, BF16 and F16 Linears can be quantized");
  }
  const size_t elem = ElementBytes(dt);
  std::vector<float> out(static_cast<size_t>(rows * cols));
  const uint8_t* base = b.data + static_cast<size_t>(first * cols) * elem;
  for (size_t i = 0; i < out.size(); ++i) {
    if (dt == "F32") {
      std::memcpy(&out[i], base + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, base + 2 * i, 2);
      out[i] = dt == "F16" ? tensor::HalfToFloat(h) : tensor::BFloat16ToFloat(h);
    }
  }
  return out;
}

// One Linear-shaped piece of a source tensor: rows [first, first + rows) of `source`.
struct Piece {
  std::string source;
  int64_t first = 0, rows = 0, cols = 0;
};

class Planner {
 public:
  Planner(const SafetensorsCheckpoint& ckpt, const QuantizeOptions& options, bool qwen35)
      : ckpt_(ckpt), options_(options), qwen35_(qwen35) {}

  Status Plan() {
    for (const std::string& name : ckpt_.TensorNames()) {
      TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes b, ckpt_.Bytes(name));
      const tensor::Shape& shape = b.info->shape;
      bytes_in_ += b.info->end - b.info->begin;
      // Qwen3.5's fused experts [E, 2I, H] / [E, H, I] → one Linear per expert.
      const bool gate_up = name.ends_with(".mlp.experts.gate_up_proj") ||
                           name.ends_with(".mlp.experts.gate_up_proj.weight");
      const bool down = name.ends_with(".mlp.experts.down_proj") ||
                        name.ends_with(".mlp.experts.down_proj.weight");
      if ((gate_up || down) && shape.size() == 3) {
        const std::string prefix = name.substr(0, name.find(".mlp.experts.") + 13);
        const int64_t half = shape[1] / 2;
        for (int64_t e = 0; e < shape[0]; ++e) {
          const std::string p = prefix + std::to_string(e) + ".";
          if (gate_up) {
            AddLinear(p + "gate_proj.weight", {name, e * shape[1], half, shape[2]}, b.info->dtype);
            AddLinear(p + "up_proj.weight", {name, e * shape[1] + half, half, shape[2]},
                      b.info->dtype);
          } else {
            AddLinear(p + "down_proj.weight", {name, e * shape[1], shape[1], shape[2]},
                      b.info->dtype);
          }
        }
        continue;
      }
      if (shape.size() == 2 && name.ends_with(".weight")) {
        AddLinear(name, {name, 0, shape[0], shape[1]}, b.info->dtype);
        continue;
      }
      AddCopy(name, b);
    }
    std::sort(tensors_.begin(), tensors_.end(),
              [](const TensorToWrite& a, const TensorToWrite& b) { return a.name < b.name; });
    return CheckFusedGroups();
  }

  // The Linears a server fuses into one matmul (q|k|v, gate|up, a layer's experts' gate|up and
  // their down) must all be int8 or all FLOAT, else the output would be refused at load.
  Status CheckFusedGroups() const {
    std::map<std::string, std::pair<std::string, std::string>> groups;  // key → (int8, float)
    auto key_of = [](const std::string& module) -> std::string {
      const size_t dot = module.rfind('.');
      const std::string parent = module.substr(0, dot + 1), leaf = module.substr(dot + 1);
      const size_t experts = module.find(".mlp.experts.");
      const std::string base =
          experts != std::string::npos ? module.substr(0, experts + 13) : parent;
      if (leaf == "q_proj" || leaf == "k_proj" || leaf == "v_proj") {
        return base + "{q,k,v}_proj";
      }
      if (leaf == "gate_proj" || leaf == "up_proj") {
        return base + "{gate,up}_proj";
      }
      if (leaf == "down_proj" && experts != std::string::npos) {
        return base + "down_proj";
      }
      return "";
    };
    for (const auto& [name, type] : types_) {
      if (!name.ends_with(".weight")) {
        continue;
      }
      const std::string module = name.substr(0, name.size() - 7);
      const std::string key = key_of(module);
      if (key.empty()) {
        continue;
      }
      auto& g = groups[key];
      (type == "FLOAT" ? g.second : g.first) = module;
    }
    for (const auto& [key, g] : groups) {
      if (!g.first.empty() && !g.second.empty()) {
        return InvalidArgument("'" + g.first + "' would be int8 but '" + g.second +
                               "' FLOAT, and a server multiplies " + key +
                               " as one matmul of one type; widen --ignore to the whole group "
                               "(e.g. '" +
                               key.substr(0, key.rfind('.') + 1) + "*') or narrow it");
      }
    }
    return Status::Ok();
  }

  const std::vector<TensorToWrite>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& types() const { return types_; }
  const std::set<std::string>& float_linears() const { return float_linears_; }
  int64_t int8_linears() const { return int8_linears_; }
  uint64_t bytes_in() const { return bytes_in_; }

 private:
  bool Ignored(const std::string& module, const std::string& name) const {
    for (const std::string& p : options_.ignore) {
      if (fnmatch(p.c_str(), module.c_str(), 0) == 0 || fnmatch(p.c_str(), name.c_str(), 0) == 0) {
        return true;
      }
    }
    return false;
  }

  // The recipe (header comment of w8a8_quantizer.h).
  bool Targeted(const std::string& module, const std::string& name) const {
    if (Ignored(module, name) || name.starts_with("mtp.") ||
        name.find("layers.") == std::string::npos || name.find("visual") != std::string::npos) {
      return false;
    }
    const std::string leaf = module.substr(module.rfind('.') + 1);
    if (qwen35_) {
      const bool qkv = module.find(".self_attn.") != std::string::npos &&
                       (leaf == "q_proj" || leaf == "k_proj" || leaf == "v_proj");
      return qkv || module.find(".mlp.experts.") != std::string::npos;
    }
    return leaf.ends_with("_proj");
  }

  void AddLinear(const std::string& name, const Piece& piece, const std::string& dtype) {
    const std::string module = name.substr(0, name.size() - 7);
    if (!Targeted(module, name)) {
      float_linears_.insert(module);
      const uint64_t elem = ElementBytes(dtype);
      const uint64_t bytes = static_cast<uint64_t>(piece.rows * piece.cols) * elem;
      types_[name] = "FLOAT";
      ++float_tensors_;
      tensors_.push_back({name,
                          dtype,
                          {piece.rows, piece.cols},
                          bytes,
                          [this, piece, bytes, elem]() -> Result<std::vector<uint8_t>> {
                            TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes b, ckpt_.Bytes(piece.source));
                            const uint8_t* from = b.data + piece.first * piece.cols * elem;
                            return std::vector<uint8_t>(from, from + bytes);
                          }});
      return;
    }
    ++int8_linears_;
    // The weight is written first (sorted: ".weight" < ".weight_offset" < ".weight_scale"),
    // so its producer leaves the scales for the scale's producer.
    auto scales = std::make_shared<std::vector<float>>();
    auto quantize = [this, piece, scales](std::vector<int8_t>* q) -> Status {
      TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes b, ckpt_.Bytes(piece.source));
      TANDEM_ASSIGN_OR_RETURN(std::vector<float> w,
                              RowsAsF32(b, piece.first, piece.rows, piece.cols));
      for (size_t i = 0; i < w.size(); ++i) {
        if (!std::isfinite(w[i])) {
          return InvalidArgument(
              "tensor '" + piece.source + "' has a non-finite value " + std::to_string(w[i]) +
              " in row " + std::to_string(piece.first + static_cast<int64_t>(i) / piece.cols) +
              "; it cannot be quantized");
        }
      }
      q->resize(w.size());
      scales->resize(static_cast<size_t>(piece.rows));
      QuantizeRowsPerChannelInt8(w.data(), piece.rows, piece.cols, q->data(), scales->data());
      return Status::Ok();
    };
    const uint64_t out = static_cast<uint64_t>(piece.rows);
    tensors_.push_back({name,
                        "I8",
                        {piece.rows, piece.cols},
                        static_cast<uint64_t>(piece.rows * piece.cols),
                        [quantize]() -> Result<std::vector<uint8_t>> {
                          std::vector<int8_t> q;
                          TANDEM_RETURN_IF_ERROR(quantize(&q));
                          return std::vector<uint8_t>(q.begin(), q.end());
                        }});
    tensors_.push_back({module + ".weight_scale",
                        "F32",
                        {piece.rows, 1},
                        out * 4,
                        [quantize, scales]() -> Result<std::vector<uint8_t>> {
                          if (scales->empty()) {
                            std::vector<int8_t> q;
                            TANDEM_RETURN_IF_ERROR(quantize(&q));
                          }
                          std::vector<uint8_t> bytes(scales->size() * 4);
                          std::memcpy(bytes.data(), scales->data(), bytes.size());
                          scales->clear();
                          scales->shrink_to_fit();
                          return bytes;
                        }});
    types_[name] = types_[module + ".weight_scale"] = "W8A8_DYNAMIC";
    if (options_.format == QuantFormat::kAscend) {  // symmetric: zero offsets
      tensors_.push_back(
          {module + ".weight_offset",
           "F32",
           {piece.rows, 1},
           out * 4,
           [out]() -> Result<std::vector<uint8_t>> { return std::vector<uint8_t>(out * 4, 0); }});
      types_[module + ".weight_offset"] = "W8A8_DYNAMIC";
    }
  }

  void AddCopy(const std::string& name, const SafetensorsBytes& b) {
    types_[name] = "FLOAT";
    ++float_tensors_;
    const uint64_t bytes = b.info->end - b.info->begin;
    tensors_.push_back(
        {name, b.info->dtype, b.info->shape, bytes, [this, name]() -> Result<std::vector<uint8_t>> {
           TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes src, ckpt_.Bytes(name));
           return std::vector<uint8_t>(src.data, src.data + (src.info->end - src.info->begin));
         }});
  }

  const SafetensorsCheckpoint& ckpt_;
  const QuantizeOptions& options_;
  bool qwen35_;
  std::vector<TensorToWrite> tensors_;
  std::map<std::string, std::string> types_;  // output tensor → msModelSlim type
  std::set<std::string> float_linears_;       // Linear modules left FLOAT
  int64_t int8_linears_ = 0, float_tensors_ = 0;
  uint64_t bytes_in_ = 0;
};

// What a server needs beside the weights (copied byte for byte; config.json is rewritten for
// compressed-tensors).
const char* const kSideFiles[] = {"config.json",
                                  "generation_config.json",
                                  "tokenizer.json",
                                  "tokenizer_config.json",
                                  "special_tokens_map.json",
                                  "vocab.json",
                                  "merges.txt",
                                  "tokenizer.model",
                                  "chat_template.jinja",
                                  "chat_template.json",
                                  "preprocessor_config.json"};

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) {
    return Internal("writing '" + path.string() + "' failed");
  }
  return Status::Ok();
}

}  // namespace

void QuantizeRowsPerChannelInt8(const float* w, int64_t rows, int64_t cols, int8_t* q,
                                float* scale) {
  for (int64_t n = 0; n < rows; ++n) {
    const float* row = w + n * cols;
    float mx = 0.0f;
    for (int64_t k = 0; k < cols; ++k) {
      mx = std::max(mx, std::fabs(row[k]));
    }
    const float s = mx / 127.0f;
    scale[n] = s;
    for (int64_t k = 0; k < cols; ++k) {
      if (s == 0.0f) {
        q[n * cols + k] = 0;
        continue;
      }
      const float r = std::nearbyint(row[k] / s);
      q[n * cols + k] = static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f));
    }
  }
}

Result<QuantizeReport> QuantizeCheckpoint(const QuantizeOptions& options,
                                          const std::function<void(size_t, size_t)>& progress) {
  if (options.format == QuantFormat::kNone) {
    return InvalidArgument("quantize: --format must be ascend or compressed-tensors");
  }
  TANDEM_ASSIGN_OR_RETURN(const std::string arch, ReadHfArchitecture(options.src_dir));
  TANDEM_ASSIGN_OR_RETURN(const QuantFormat already, DetectQuantFormat(options.src_dir, ""));
  if (already != QuantFormat::kNone) {
    return InvalidArgument(
        "'" + options.src_dir + "' is already quantized (" +
        (already == QuantFormat::kAscend ? "msModelSlim" : "compressed-tensors") +
        "); quantize its float original");
  }
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  for (const char* existing :
       {"model.safetensors", "model.safetensors.index.json", "quant_model_weights.safetensors",
        "quant_model_weights.safetensors.index.json"}) {
    if (fs::exists(fs::path(options.out_dir) / existing)) {
      return InvalidArgument("output folder '" + options.out_dir + "' already holds " + existing +
                             "; give an empty or new folder");
    }
  }
  TANDEM_ASSIGN_OR_RETURN(auto checkpoint, SafetensorsCheckpoint::Open(options.src_dir));
  Planner planner(*checkpoint, options, IsQwen35Architecture(arch));
  TANDEM_RETURN_IF_ERROR(planner.Plan());
  QuantizeReport report;
  report.int8_linears = planner.int8_linears();
  report.bytes_in = planner.bytes_in();
  const auto& tensors = planner.tensors();
  report.float_tensors = static_cast<int64_t>(tensors.size()) - 2 * report.int8_linears -
                         (options.format == QuantFormat::kAscend ? report.int8_linears : 0);
  for (const auto& t : tensors) {
    report.bytes_out += t.bytes;
  }
  if (report.int8_linears == 0) {
    return InvalidArgument("no Linear of '" + options.src_dir + "' (" + arch +
                           ") matches the recipe after --ignore; nothing to quantize");
  }
  const bool ascend = options.format == QuantFormat::kAscend;
  const std::string stem = ascend ? "quant_model_weights" : "model";
  size_t done = 0;
  TANDEM_RETURN_IF_ERROR(
      WriteSafetensors(options.out_dir, stem, tensors, options.max_shard_bytes, [&](size_t) {
        if (progress) progress(++done, tensors.size());
      }));
  for (const auto& entry : fs::directory_iterator(options.out_dir)) {
    const std::string f = entry.path().filename().string();
    if (f.starts_with(stem) && (f.ends_with(".safetensors") || f.ends_with(".index.json"))) {
      report.files.push_back(f);
    }
  }
  const fs::path out(options.out_dir);
  for (const char* side : kSideFiles) {
    const fs::path from = fs::path(options.src_dir) / side;
    if (!fs::exists(from)) {
      continue;
    }
    if (!ascend && std::string(side) == "config.json") {
      continue;  // rewritten below
    }
    fs::copy_file(from, out / side, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      return Internal("copying '" + from.string() + "': " + ec.message());
    }
    // The copy is the user's new checkpoint: writable by them whatever the source's mode.
    fs::permissions(out / side, fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::add, ec);
    report.files.push_back(side);
  }
  if (ascend) {
    nlohmann::ordered_json desc;
    desc["model_quant_type"] = "W8A8_DYNAMIC";
    desc["version"] = "1.0.0";
    for (const auto& [name, type] : planner.types()) {
      desc[name] = type;
    }
    TANDEM_RETURN_IF_ERROR(WriteText(out / "quant_model_description.json", desc.dump(2) + "\n"));
    report.files.push_back("quant_model_description.json");
  } else {
    std::ifstream in(fs::path(options.src_dir) / "config.json");
    nlohmann::ordered_json config = nlohmann::ordered_json::parse(in, nullptr, false);
    if (config.is_discarded()) {
      return InvalidArgument("'" + options.src_dir + "/config.json' is not JSON");
    }
    std::vector<std::string> ignore = {"lm_head"};
    for (const std::string& m : planner.float_linears()) {
      if (m != "lm_head" && !m.ends_with("embed_tokens")) {
        ignore.push_back(m);
      }
    }
    const nlohmann::ordered_json int8 = {{"num_bits", 8}, {"type", "int"}, {"symmetric", true}};
    nlohmann::ordered_json weights = int8, acts = int8;
    weights["strategy"] = "channel";
    weights["dynamic"] = false;
    weights["observer"] = "minmax";
    acts["strategy"] = "token";
    acts["dynamic"] = true;
    config["quantization_config"] = {
        {"quant_method", "compressed-tensors"},
        {"format", "int-quantized"},
        {"quantization_status", "compressed"},
        {"config_groups",
         {{"group_0",
           {{"targets", {"Linear"}}, {"weights", weights}, {"input_activations", acts}}}}},
        {"ignore", ignore}};
    TANDEM_RETURN_IF_ERROR(WriteText(out / "config.json", config.dump(2) + "\n"));
    report.files.push_back("config.json");
  }
  return report;
}

}  // namespace tandem::model
