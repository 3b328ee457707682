#include "model/loader/sharded_reader.h"

#include <algorithm>
#include <cstring>

#include "core/check.h"

namespace tandem::model {

ShardRule Replicated() { return ShardRule{}; }
ShardRule ColumnParallel(std::string unit_name, int32_t axis, int64_t unit) {
  return ShardRule{ShardKind::kColumn, axis, unit, std::move(unit_name)};
}
ShardRule RowParallel(std::string unit_name, int64_t unit) {
  return ShardRule{ShardKind::kRow, -1, unit, std::move(unit_name)};
}
ShardRule RowParallelBias() { return ShardRule{ShardKind::kRowBias, 0, 1, ""}; }
ShardRule KvHeadParallel(int64_t head_dim) {
  return ShardRule{ShardKind::kKvHeads, 0, head_dim, "KV heads"};
}
ShardRule VocabParallel() { return ShardRule{ShardKind::kVocab, 0, 1, "vocab rows"}; }
ShardRule ExpertParallelRule() { return ShardRule{ShardKind::kExperts, 0, 1, "experts"}; }

void ShardedReader::Declare(const std::string& name, tensor::Shape shape, ShardRule rule) {
  if (decls_.find(name) == decls_.end()) order_.push_back(name);
  decls_[name] = Decl{std::move(shape), std::move(rule)};
}

Result<ShardedReader::Slice> ShardedReader::SliceOf(const std::string& name, const Decl& d) const {
  const ShardRule& r = d.rule;
  Slice s;
  s.axis = r.kind == ShardKind::kRow ? static_cast<int32_t>(d.shape.size()) - 1 : r.axis;
  const int64_t extent = d.shape.empty() ? 1 : d.shape[s.axis];
  s.begin = 0;
  s.count = s.padded = extent;
  const int64_t tp = tp_.size;
  if (r.kind == ShardKind::kExperts) {
    if (!tp_.ep.enabled()) return s;
    const ExpertRange local = LocalExpertsOf(extent, tp_.ep.rank, tp_.ep.size);
    s.begin = local.first;
    s.count = s.padded = local.count;
    return s;
  }
  if (tp == 1 || r.kind == ShardKind::kReplicated || r.kind == ShardKind::kRowBias) return s;
  auto not_divisible = [&](const std::string& why) {
    return InvalidArgument("weight '" + name + "' in " + source_.source_name() + " has shape " +
                           tensor::ShapeToString(d.shape) + ": " + why +
                           " --tensor-parallel-size " + std::to_string(tp) +
                           "; choose a TP size that divides it");
  };
  if (r.kind == ShardKind::kVocab) {
    const LocalVocab v = LocalVocabOf(extent, tp_);
    s.begin = v.begin;
    s.count = v.count;
    s.padded = v.padded;
    return s;
  }
  const int64_t units = extent / r.unit;
  if (r.kind == ShardKind::kKvHeads && units < tp) {
    if (tp % units != 0) {
      return not_divisible("its " + std::to_string(units) + " " + r.unit_name +
                           " neither divide nor are a multiple of");
    }
    s.begin = (tp_.rank / (tp / units)) * r.unit;
    s.count = s.padded = r.unit;
    return s;
  }
  if (units % tp != 0) {
    return not_divisible("its " + std::to_string(units) + " " + r.unit_name + " do not divide by");
  }
  s.count = s.padded = units / tp * r.unit;
  s.begin = tp_.rank * s.count;
  return s;
}

Status ShardedReader::CheckAll() const {
  for (const std::string& name : order_) {
    const Decl& d = decls_.at(name);
    if (!source_.HasTensor(name)) {
      return InvalidArgument("weight '" + name + "' is missing from " + source_.source_name() +
                             " (expected shape " + tensor::ShapeToString(d.shape) + ")");
    }
    TANDEM_ASSIGN_OR_RETURN(tensor::Shape shape, source_.TensorShape(name));
    if (shape != d.shape) {
      return InvalidArgument("weight '" + name + "' in " + source_.source_name() + " has shape " +
                             tensor::ShapeToString(shape) + "; expected " +
                             tensor::ShapeToString(d.shape));
    }
    TANDEM_RETURN_IF_ERROR(SliceOf(name, d).status());
  }
  return Status::Ok();
}

Result<std::vector<float>> ShardedReader::Read(const std::string& name) const {
  TANDEM_ASSIGN_OR_RETURN(tensor::Tensor shard, Shard(name, /*widen=*/true));
  if (shard.int8_quant() != nullptr) {
    return InvalidArgument("weight '" + name + "' in " + source_.source_name() + " is " +
                           shard.int8_quant()->name() +
                           " int8, but this layer multiplies it in float and has no int8 path; "
                           "quantize only the Linears that have one (docs/design/w8a8.md)");
  }
  if (shard.dtype() != tensor::DType::kF32) shard = shard.ToF32();
  return shard.TakeF32();
}

Result<tensor::Tensor> ShardedReader::ReadEmbeddingTable(const std::string& name) const {
  TANDEM_ASSIGN_OR_RETURN(tensor::Tensor table, ReadStored(name));
  if (table.int8_quant() != nullptr) {
    return InvalidArgument("token embedding '" + name + "' in " + source_.source_name() + " is " +
                           table.int8_quant()->name() +
                           " int8; an embedding is a row lookup with no int8 path: keep it FLOAT");
  }
  return table;
}

Result<tensor::Tensor> ShardedReader::Shard(const std::string& name, bool widen) const {
  auto it = decls_.find(name);
  TANDEM_CHECK(it != decls_.end()) << "weight '" << name << "' read but never declared";
  const Decl& d = it->second;
  TANDEM_ASSIGN_OR_RETURN(Slice s, SliceOf(name, d));
  TANDEM_ASSIGN_OR_RETURN(tensor::Tensor full, LoadStoredWeight(source_, name, d.shape));
  if (d.rule.kind == ShardKind::kRowBias && tp_.rank != 0) {
    return tensor::Tensor(d.shape, full.dtype());  // zeros: the bias is added once, by rank 0
  }
  const int64_t extent = d.shape.empty() ? 1 : d.shape[s.axis];
  if (s.begin == 0 && s.count == extent && s.padded == extent) return full;
  if (full.int8_quant() != nullptr && s.padded != s.count) {
    return InvalidArgument("weight '" + name + "' in " + source_.source_name() + " is " +
                           full.int8_quant()->name() +
                           " int8 and its vocab-parallel shard would need padding rows; keep it "
                           "FLOAT or use a --tensor-parallel-size that divides it");
  }
  // [outer, extent, inner] → [outer, padded, inner], rows [begin, begin + count) of the axis;
  // moved as bytes, so for every dtype.
  int64_t outer = 1, inner = 1;
  for (int32_t a = 0; a < s.axis; ++a) outer *= d.shape[a];
  for (size_t a = s.axis + 1; a < d.shape.size(); ++a) inner *= d.shape[a];
  tensor::Shape shape = d.shape;
  if (!shape.empty()) shape[s.axis] = s.padded;
  auto cuts_block = [&](int64_t block) {
    return (s.begin * inner) % block != 0 || (s.count * inner) % block != 0 ||
           (s.padded * inner) % block != 0;
  };
  if (widen && cuts_block(tensor::DTypeBlockValues(full.dtype()))) {
    full = full.ToF32();
  }
  const tensor::DType dtype = full.dtype();
  const int64_t block = tensor::DTypeBlockValues(dtype);
  if (cuts_block(block)) {
    // A Q8_0 row split (row-parallel, input columns) must cut between blocks of 32.
    return InvalidArgument("weight '" + name + "' in " + source_.source_name() + " is " +
                           tensor::DTypeName(dtype) + " (blocks of " + std::to_string(block) +
                           " values along its last axis) and its shard [" +
                           std::to_string(s.begin) + ", " + std::to_string(s.begin + s.count) +
                           ") of axis " + std::to_string(s.axis) +
                           " cuts a block; use a --tensor-parallel-size that keeps every shard "
                           "whole blocks, or an F16/BF16 file");
  }
  tensor::Tensor out(shape, dtype);
  const auto* src = static_cast<const unsigned char*>(full.raw());
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + tensor::DTypeBytes(dtype, o * s.padded * inner),
                src + tensor::DTypeBytes(dtype, (o * extent + s.begin) * inner),
                tensor::DTypeBytes(dtype, s.count * inner));
  }
  if (full.int8_quant() != nullptr) {
    // Per-row scales move with their rows; a split of the input columns (the last axis) keeps
    // every row's scale and leaves the static bias on the shard holding column 0.
    const tensor::Int8Quant& q = *full.int8_quant();
    auto shard_quant = std::make_shared<tensor::Int8Quant>(q);
    if (static_cast<size_t>(s.axis) + 1 == d.shape.size()) {
      if (s.begin != 0) shard_quant->row_bias.clear();
    } else {
      shard_quant->row_scale.clear();
      shard_quant->row_bias.clear();
      const int64_t rows_per_unit = inner / d.shape.back();  // side-car rows per axis index
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t first = (o * extent + s.begin) * rows_per_unit;
        const int64_t last = first + s.count * rows_per_unit;
        shard_quant->row_scale.insert(shard_quant->row_scale.end(), q.row_scale.begin() + first,
                                      q.row_scale.begin() + last);
        if (!q.row_bias.empty()) {
          shard_quant->row_bias.insert(shard_quant->row_bias.end(), q.row_bias.begin() + first,
                                       q.row_bias.begin() + last);
        }
      }
    }
    out.set_int8_quant(std::move(shard_quant));
  }
  return out;
}

}  // namespace tandem::model
