#include "model/loader/w8a8_source.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "kernels/ops.h"

namespace tandem::model {
namespace {

namespace fs = std::filesystem;
using Activation = tensor::Int8Quant::Activation;

constexpr const char* kDescriptionFile = "quant_model_description.json";

Result<nlohmann::json> ReadJsonFile(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return InvalidArgument("'" + path.string() + "' is not a regular file");
  }
  std::ifstream in(path);
  if (!in) {
    return InvalidArgument("cannot read '" + path.string() + "'");
  }
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return InvalidArgument("'" + path.string() + "' is not valid JSON");
  }
  return j;
}

// `obj[key]` when it is a string, "" when absent or null, an error naming `where` otherwise.
Result<std::string> StringField(const nlohmann::json& obj, const char* key,
                                const std::string& where) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) {
    return std::string();
  }
  if (!obj[key].is_string()) {
    return InvalidArgument(where + "." + key + " is " + obj[key].dump() + "; expected a string");
  }
  return obj[key].get<std::string>();
}

// The values of a float tensor (F32, BF16, F16) widened exactly.
std::vector<float> FloatValues(const SafetensorsBytes& b) {
  const std::string& dt = b.info->dtype;
  const size_t elem = dt == "F32" ? 4 : 2;
  const size_t n = (b.info->end - b.info->begin) / elem;
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (dt == "F32") {
      std::memcpy(&out[i], b.data + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, b.data + 2 * i, 2);
      out[i] = dt == "F16" ? tensor::HalfToFloat(h) : tensor::BFloat16ToFloat(h);
    }
  }
  return out;
}

}  // namespace

Result<QuantFormat> DetectQuantFormat(const std::string& dir, const std::string& requested) {
  if (!requested.empty() && requested != "ascend" && requested != "compressed-tensors") {
    return InvalidArgument("--quantization '" + requested +
                           "' is not supported; use ascend (msModelSlim W8A8 / W8A8_DYNAMIC) or "
                           "compressed-tensors (int8 W8A8), or leave it out to detect the format");
  }
  QuantFormat found = QuantFormat::kNone;
  std::string found_name = "none (no quant_model_description.json, no quantization_config)";
  if (fs::exists(fs::path(dir) / kDescriptionFile)) {
    found = QuantFormat::kAscend;
    found_name = "ascend (quant_model_description.json)";
  } else {
    TANDEM_ASSIGN_OR_RETURN(nlohmann::json config, ReadJsonFile(fs::path(dir) / "config.json"));
    if (config.is_object() && config.contains("quantization_config") &&
        !config["quantization_config"].is_null()) {
      const nlohmann::json& qc = config["quantization_config"];
      if (!qc.is_object()) {
        return InvalidArgument("'" + dir + "/config.json' quantization_config is " + qc.dump() +
                               "; expected an object");
      }
      TANDEM_ASSIGN_OR_RETURN(
          const std::string method,
          StringField(qc, "quant_method", "'" + dir + "/config.json' quantization_config"));
      if (method != "compressed-tensors") {
        return InvalidArgument("'" + dir + "/config.json' quantization_config.quant_method is '" +
                               method +
                               "'; tandem serves unquantized checkpoints, compressed-tensors "
                               "int8 W8A8 and msModelSlim W8A8 (quant_model_description.json)");
      }
      found = QuantFormat::kCompressedTensors;
      found_name = "compressed-tensors (config.json quantization_config)";
    }
  }
  const QuantFormat want = requested.empty()       ? found
                           : requested == "ascend" ? QuantFormat::kAscend
                                                   : QuantFormat::kCompressedTensors;
  if (want != found) {
    return InvalidArgument("--quantization " + requested + " does not match model folder '" + dir +
                           "', which is " + found_name);
  }
  return found;
}

Result<std::unique_ptr<W8A8WeightSource>> W8A8WeightSource::Open(
    const SafetensorsCheckpoint& checkpoint, const std::string& dir, QuantFormat format) {
  std::unique_ptr<W8A8WeightSource> src(new W8A8WeightSource(checkpoint));
  if (format == QuantFormat::kAscend) {
    const fs::path path = fs::path(dir) / kDescriptionFile;
    src->format_name_ = path.string();
    TANDEM_ASSIGN_OR_RETURN(nlohmann::json desc, ReadJsonFile(path));
    if (!desc.is_object()) {
      return InvalidArgument("'" + path.string() + "' is not a JSON object");
    }
    for (auto it = desc.begin(); it != desc.end(); ++it) {
      const std::string& key = it.key();
      if (key == "model_quant_type") {
        if (!it->is_string() ||
            (*it != "W8A8_DYNAMIC" && *it != "W8A8" && *it != "FLOAT" && *it != "W8A8_MIX")) {
          return InvalidArgument("'" + path.string() + "' model_quant_type is " + it->dump() +
                                 "; tandem serves W8A8_DYNAMIC and W8A8 (static) checkpoints");
        }
        continue;
      }
      if (key == "version" || key == "metadata" || key == "optional" || key == "group_size" ||
          key == "reduce_quant_type") {
        continue;
      }
      if (key == "kv_quant_type" || key == "kv_cache_type" || key == "fa_quant_type") {
        if (it->is_null() || (it->is_string() && it->get<std::string>() == "FLOAT")) {
          continue;
        }
        return InvalidArgument("'" + path.string() + "' sets " + key + " " + it->dump() +
                               "; quantized KV caches / attention (C8, FAQuant) are not "
                               "supported: tandem serves FLOAT, W8A8_DYNAMIC and W8A8 weights");
      }
      if (!it->is_string()) {
        return InvalidArgument("'" + path.string() + "': entry '" + key + "' is " + it->dump() +
                               "; expected a quantization type string");
      }
      const std::string type = it->get<std::string>();
      if (!checkpoint.HasTensor(key)) {
        return InvalidArgument("'" + path.string() + "' lists tensor '" + key + "' (" + type +
                               ") but the checkpoint has no such tensor");
      }
      if (type == "FLOAT") {
        continue;
      }
      if (type != "W8A8_DYNAMIC" && type != "W8A8") {
        return InvalidArgument("tensor '" + key + "' is " + type + " in '" + path.string() +
                               "'; tandem serves FLOAT, W8A8_DYNAMIC and W8A8 (static)");
      }
      if (!key.ends_with(".weight")) {
        continue;  // its scales are checked with the weight
      }
      src->linears_[key.substr(0, key.size() - 7)] =
          type == "W8A8" ? Activation::kStaticPerTensor : Activation::kDynamicPerToken;
    }
  } else {
    const fs::path path = fs::path(dir) / "config.json";
    src->format_name_ = path.string() + " quantization_config";
    TANDEM_ASSIGN_OR_RETURN(nlohmann::json config, ReadJsonFile(path));
    const nlohmann::json& qc = config["quantization_config"];
    const std::string where = "'" + path.string() + "' quantization_config";
    TANDEM_ASSIGN_OR_RETURN(const std::string fmt, StringField(qc, "format", where));
    if (fmt != "int-quantized") {
      return InvalidArgument(where + ".format is '" + fmt +
                             "'; tandem serves compressed-tensors 'int-quantized' (int8 W8A8)");
    }
    if (qc.contains("kv_cache_scheme") && !qc["kv_cache_scheme"].is_null()) {
      return InvalidArgument(where + ".kv_cache_scheme is " + qc["kv_cache_scheme"].dump() +
                             "; quantized KV caches are not supported (use --kv-cache-dtype)");
    }
    if (!qc.contains("config_groups") || !qc["config_groups"].is_object() ||
        qc["config_groups"].empty()) {
      return InvalidArgument(where + " has no config_groups");
    }
    for (auto g = qc["config_groups"].begin(); g != qc["config_groups"].end(); ++g) {
      const std::string gw = where + ".config_groups." + g.key();
      auto expect = [&](const char* part, const char* field, const nlohmann::json& want) -> Status {
        const nlohmann::json& p = (*g)[part];
        if (!p.is_object() || !p.contains(field) || p[field] != want) {
          return InvalidArgument(gw + "." + part + "." + field + " is " +
                                 (p.is_object() && p.contains(field) ? p[field].dump() : "absent") +
                                 "; tandem's int8 path needs " + want.dump() +
                                 " (int8 symmetric channel weights, dynamic symmetric per-token "
                                 "int8 activations)");
        }
        return Status::Ok();
      };
      if (!g->is_object() || !g->contains("weights") || !g->contains("input_activations") ||
          (*g)["input_activations"].is_null()) {
        return InvalidArgument(gw +
                               " needs weights and input_activations (W8A8); weight-only "
                               "schemes (W8A16, W4A16) are not supported");
      }
      TANDEM_RETURN_IF_ERROR(expect("weights", "num_bits", 8));
      TANDEM_RETURN_IF_ERROR(expect("weights", "type", "int"));
      TANDEM_RETURN_IF_ERROR(expect("weights", "symmetric", true));
      TANDEM_RETURN_IF_ERROR(expect("weights", "strategy", "channel"));
      const nlohmann::json& weights = (*g)["weights"];
      if (weights.contains("dynamic") && weights["dynamic"] != false) {
        return InvalidArgument(gw + ".weights.dynamic is " + weights["dynamic"].dump() +
                               "; int8 weights are stored with their scales (false)");
      }
      if (weights.contains("group_size") && !weights["group_size"].is_null()) {
        return InvalidArgument(gw + ".weights.group_size is " + weights["group_size"].dump() +
                               "; the channel strategy has one scale per output row (null)");
      }
      TANDEM_RETURN_IF_ERROR(expect("input_activations", "num_bits", 8));
      TANDEM_RETURN_IF_ERROR(expect("input_activations", "type", "int"));
      TANDEM_RETURN_IF_ERROR(expect("input_activations", "symmetric", true));
      TANDEM_RETURN_IF_ERROR(expect("input_activations", "strategy", "token"));
      TANDEM_RETURN_IF_ERROR(expect("input_activations", "dynamic", true));
    }
    // The quantized Linears are the I8 weights (the targets minus `ignore`, as written).
    for (const std::string& name : checkpoint.TensorNames()) {
      if (!name.ends_with(".weight")) {
        continue;
      }
      TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes b, checkpoint.Bytes(name));
      if (b.info->dtype == "I8") {
        src->linears_[name.substr(0, name.size() - 7)] = Activation::kDynamicPerToken;
      }
    }
  }
  for (const auto& [prefix, activation] : src->linears_) {
    TANDEM_RETURN_IF_ERROR(src->CheckLinear(
        prefix, activation, activation == Activation::kStaticPerTensor ? "W8A8" : "W8A8_DYNAMIC"));
  }
  TANDEM_RETURN_IF_ERROR(src->CheckFusedGroups());
  // An int8 tensor nobody declared would otherwise fail later as "dtype I8 is not read".
  for (const std::string& name : checkpoint.TensorNames()) {
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes b, checkpoint.Bytes(name));
    if (b.info->dtype == "I8" && name.ends_with(".weight") &&
        src->linears_.count(name.substr(0, name.size() - 7)) == 0) {
      return InvalidArgument("tensor '" + name + "' is I8 but " + src->format_name_ +
                             " does not declare it quantized");
    }
  }
  return src;
}

Status W8A8WeightSource::CheckFusedGroups() const {
  // The Linears tandem fuses into one matmul (q|k|v, gate|up) must share one scheme, and for the
  // static scheme one input_scale / input_offset (they quantize the same input once).
  static const std::vector<std::vector<std::string>> kGroups = {{"q_proj", "k_proj", "v_proj"},
                                                                {"gate_proj", "up_proj"}};
  auto scalar = [&](const std::string& name) -> float {
    auto b = inner_.Bytes(name);
    return b.ok() ? FloatValues(*b)[0] : 0.0f;
  };
  for (const auto& [prefix, activation] : linears_) {
    const size_t dot = prefix.rfind('.');
    const std::string parent = prefix.substr(0, dot + 1), leaf = prefix.substr(dot + 1);
    for (const auto& group : kGroups) {
      if (std::find(group.begin(), group.end(), leaf) == group.end()) {
        continue;
      }
      for (const std::string& sibling : group) {
        const std::string other = parent + sibling;
        if (other == prefix || !inner_.HasTensor(other + ".weight")) {
          continue;
        }
        auto it = linears_.find(other);
        const auto type_of = [](Activation a) {
          return a == Activation::kStaticPerTensor ? std::string("W8A8")
                                                   : std::string("W8A8_DYNAMIC");
        };
        if (it == linears_.end() || it->second != activation) {
          return InvalidArgument("'" + prefix + "' is " + type_of(activation) + " but '" + other +
                                 "' (fused with "
                                 "it into one matmul) is " +
                                 (it == linears_.end() ? "FLOAT" : type_of(it->second)) + " in " +
                                 format_name_ +
                                 "; the Linears of one fused module must share one "
                                 "quantization type");
        }
        if (activation == Activation::kStaticPerTensor &&
            (scalar(prefix + ".input_scale") != scalar(other + ".input_scale") ||
             scalar(prefix + ".input_offset") != scalar(other + ".input_offset"))) {
          return InvalidArgument("'" + prefix + "' and '" + other +
                                 "' (fused into one matmul) have different input_scale / "
                                 "input_offset; they quantize the same input and must agree");
        }
      }
    }
  }
  return Status::Ok();
}

Status W8A8WeightSource::CheckLinear(const std::string& prefix, Activation activation,
                                     const std::string& type) const {
  const std::string what = "'" + prefix + "' (" + type + " in " + format_name_ + ")";
  auto need = [&](const std::string& suffix, std::initializer_list<const char*> dtypes,
                  const tensor::Shape& shape) -> Result<SafetensorsBytes> {
    const std::string name = prefix + suffix;
    if (!inner_.HasTensor(name)) {
      return InvalidArgument("int8 Linear " + what + " lacks tensor '" + name + "'");
    }
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes b, inner_.Bytes(name));
    bool dtype_ok = false;
    std::string allowed;
    for (const char* d : dtypes) {
      dtype_ok = dtype_ok || b.info->dtype == d;
      allowed += (allowed.empty() ? "" : "/") + std::string(d);
    }
    // [out, 1] and [out] are the same per-row vector.
    const bool shape_ok =
        b.info->shape == shape ||
        (shape.size() == 2 && shape[1] == 1 && b.info->shape == tensor::Shape{shape[0]}) ||
        (shape.size() == 1 && b.info->shape == tensor::Shape{shape[0], 1});
    if (!dtype_ok || !shape_ok) {
      return InvalidArgument("tensor '" + name + "' of int8 Linear " + what + " is " +
                             b.info->dtype + " " + tensor::ShapeToString(b.info->shape) +
                             "; expected " + allowed + " " + tensor::ShapeToString(shape));
    }
    return b;
  };
  if (!inner_.HasTensor(prefix + ".weight")) {
    return InvalidArgument("int8 Linear " + what + " lacks tensor '" + prefix + ".weight'");
  }
  TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes w, inner_.Bytes(prefix + ".weight"));
  if (w.info->dtype != "I8" || w.info->shape.size() != 2) {
    return InvalidArgument("tensor '" + prefix + ".weight' of int8 Linear " + what + " is " +
                           w.info->dtype + " " + tensor::ShapeToString(w.info->shape) +
                           "; expected I8 [out, in]");
  }
  const int64_t out = w.info->shape[0];
  if (w.info->shape[1] > kernels::kMatmulInt8MaxK) {
    return InvalidArgument("tensor '" + prefix + ".weight' has " +
                           std::to_string(w.info->shape[1]) +
                           " input channels; the exact int32 "
                           "accumulation of the int8 path allows at most " +
                           std::to_string(kernels::kMatmulInt8MaxK));
  }
  // Per-row scales: finite and >= 0 (0 is an all-zero row), else the server would serve NaNs.
  auto check_scales = [&](const std::string& suffix, const std::vector<float>& values) -> Status {
    for (size_t r = 0; r < values.size(); ++r) {
      if (!std::isfinite(values[r]) || values[r] < 0.0f) {
        return InvalidArgument("tensor '" + prefix + suffix + "' of int8 Linear " + what +
                               " has scale " + std::to_string(values[r]) + " at row " +
                               std::to_string(r) + "; expected finite and >= 0");
      }
    }
    return Status::Ok();
  };
  if (activation == Activation::kDynamicPerToken) {
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes scale,
                            need(".weight_scale", {"F32", "BF16", "F16"}, {out, 1}));
    TANDEM_RETURN_IF_ERROR(check_scales(".weight_scale", FloatValues(scale)));
    if (inner_.HasTensor(prefix + ".weight_offset")) {
      TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes off,
                              need(".weight_offset", {"F32", "BF16", "F16"}, {out, 1}));
      for (float v : FloatValues(off)) {
        if (v != 0.0f) {
          return InvalidArgument("tensor '" + prefix + ".weight_offset' of int8 Linear " + what +
                                 " has a nonzero value " + std::to_string(v) +
                                 "; only symmetric int8 weights (all-zero offsets) are supported");
        }
      }
    }
    if (inner_.HasTensor(prefix + ".weight_zero_point")) {
      return InvalidArgument("int8 Linear " + what + " has '" + prefix +
                             ".weight_zero_point' (asymmetric weights); only symmetric int8 "
                             "weights are supported");
    }
    if (inner_.HasTensor(prefix + ".input_scale")) {
      return InvalidArgument("int8 Linear " + what + " has '" + prefix +
                             ".input_scale' (static activations) but is declared dynamic");
    }
  } else {
    if (inner_.HasTensor(prefix + ".weight_scale")) {
      return InvalidArgument("int8 Linear " + what + " is static W8A8 but also has '" + prefix +
                             ".weight_scale'; static W8A8 scales its rows by deq_scale alone");
    }
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes in_scale,
                            need(".input_scale", {"F32", "BF16", "F16"}, {1}));
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes in_off,
                            need(".input_offset", {"F32", "BF16", "F16"}, {1}));
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes deq, need(".deq_scale", {"I64", "F32"}, {out}));
    std::vector<float> deq_values(static_cast<size_t>(out));
    for (int64_t n = 0; n < out; ++n) {
      if (deq.info->dtype == "I64") {
        int64_t v;
        std::memcpy(&v, deq.data + 8 * n, 8);
        if (v != static_cast<int64_t>(static_cast<int32_t>(v)) &&
            v != static_cast<int64_t>(static_cast<uint32_t>(v))) {
          return InvalidArgument("tensor '" + prefix + ".deq_scale' row " + std::to_string(n) +
                                 " is " + std::to_string(v) +
                                 "; expected an f32 bit pattern in "
                                 "the low 32 bits (msModelSlim deqscale2int64)");
        }
        const auto bits = static_cast<uint32_t>(v);
        std::memcpy(&deq_values[n], &bits, 4);
      } else {
        std::memcpy(&deq_values[n], deq.data + 4 * n, 4);
      }
    }
    TANDEM_RETURN_IF_ERROR(check_scales(".deq_scale", deq_values));
    TANDEM_RETURN_IF_ERROR(need(".quant_bias", {"I32"}, {out}).status());
    const float scale = FloatValues(in_scale)[0], offset = FloatValues(in_off)[0];
    if (!(scale > 0.0f) || !std::isfinite(scale)) {
      return InvalidArgument("tensor '" + prefix + ".input_scale' is " + std::to_string(scale) +
                             "; expected a positive finite scale");
    }
    if (offset != std::nearbyint(offset) || std::fabs(offset) > 255.0f) {
      return InvalidArgument("tensor '" + prefix + ".input_offset' is " + std::to_string(offset) +
                             "; expected an integer zero point in [-255, 255]");
    }
  }
  return Status::Ok();
}

Result<tensor::Tensor> W8A8WeightSource::ReadInt8Linear(const std::string& prefix,
                                                        Activation activation) const {
  TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes w, inner_.Bytes(prefix + ".weight"));
  const int64_t out = w.info->shape[0], in = w.info->shape[1];
  tensor::Tensor t = tensor::Tensor::View({out, in}, tensor::DType::kI8, w.data).Clone();
  auto quant = std::make_shared<tensor::Int8Quant>();
  quant->activation = activation;
  if (activation == Activation::kDynamicPerToken) {
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes s, inner_.Bytes(prefix + ".weight_scale"));
    quant->row_scale = FloatValues(s);
  } else {
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes in_scale, inner_.Bytes(prefix + ".input_scale"));
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes in_off, inner_.Bytes(prefix + ".input_offset"));
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes deq, inner_.Bytes(prefix + ".deq_scale"));
    TANDEM_ASSIGN_OR_RETURN(SafetensorsBytes bias, inner_.Bytes(prefix + ".quant_bias"));
    quant->input_scale = FloatValues(in_scale)[0];
    quant->input_offset = FloatValues(in_off)[0];
    quant->row_scale.resize(static_cast<size_t>(out));
    quant->row_bias.resize(static_cast<size_t>(out));
    const auto* wq = static_cast<const int8_t*>(t.raw());
    for (int64_t n = 0; n < out; ++n) {
      if (deq.info->dtype == "I64") {
        // msModelSlim deqscale2int64: the f32 bit pattern in the low 32 bits.
        uint32_t bits;
        std::memcpy(&bits, deq.data + 8 * n, 4);
        std::memcpy(&quant->row_scale[n], &bits, 4);
      } else {
        std::memcpy(&quant->row_scale[n], deq.data + 4 * n, 4);
      }
      int32_t qb;
      std::memcpy(&qb, bias.data + 4 * n, 4);
      int64_t sum = 0;
      for (int64_t k = 0; k < in; ++k) {
        sum += wq[n * in + k];
      }
      quant->row_bias[n] = qb + static_cast<int64_t>(quant->input_offset) * sum;
    }
  }
  t.set_int8_quant(std::move(quant));
  return t;
}

Result<tensor::Tensor> W8A8WeightSource::ReadStored(const std::string& name) const {
  if (name.ends_with(".weight")) {
    auto it = linears_.find(name.substr(0, name.size() - 7));
    if (it != linears_.end()) {
      return ReadInt8Linear(it->first, it->second);
    }
  }
  return inner_.ReadStored(name);
}

Result<tensor::Tensor> W8A8WeightSource::ReadF32(const std::string& name) const {
  if (name.ends_with(".weight") && linears_.count(name.substr(0, name.size() - 7)) > 0) {
    return InvalidArgument("weight '" + name + "' is int8 (" + format_name_ +
                           ") but was asked for as float; this layer has no int8 path");
  }
  return inner_.ReadF32(name);
}

}  // namespace tandem::model
