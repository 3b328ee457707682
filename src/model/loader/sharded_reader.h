// ShardedReader: reads the weights of one TP rank. An architecture first DECLARES every weight
// with its full shape and its TP split (the sharding rule sits next to the weight's name), then
// CheckAll() verifies every declared tensor's header shape and that each split divides
// --tensor-parallel-size — before any weight is read — and finally Read() returns this rank's
// shard. Rules follow vLLM: ColumnParallelLinear / QKVParallelLinear / RowParallelLinear /
// VocabParallelEmbedding / ParallelLMHead, FusedMoE with and without expert parallel.
// Deviation: a shard is cut from the full tensor read from the file (not read shard-wise).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/layers/tensor_parallel.h"
#include "model/loader/weight_source.h"
#include "tensor/tensor.h"

namespace tandem::model {

enum class ShardKind {
  kReplicated,  // every rank holds the whole tensor (norms, router, q/k norm, gates)
  kColumn,      // column-parallel: `axis` split into tp equal parts of whole units (heads)
  kRow,         // row-parallel: the last axis (input columns) split into tp equal parts
  kRowBias,     // bias of a row-parallel linear: rank 0 holds it, the others zeros (added once)
  kKvHeads,     // column-parallel over KV heads: split when heads >= tp, else replicated (each
                //   rank takes head rank / (tp / heads)); tp must divide or be a multiple
  kVocab,       // vocab-parallel: axis 0 split into ceil(vocab / tp) rows, zero-padded
  kExperts,     // expert parallel: axis 0 (experts) cut to this EP rank's LocalExpertsOf range;
                //   whole when EP is off (then split the other axes with another rule)
};

struct ShardRule {
  ShardKind kind = ShardKind::kReplicated;
  int32_t axis = 0;       // kColumn / kKvHeads: the split axis (kRow: always the last)
  int64_t unit = 1;       // elements of the split axis per indivisible unit (head_dim)
  std::string unit_name;  // what the units are, for errors: "query heads", "rows", ...
};

ShardRule Replicated();
ShardRule ColumnParallel(std::string unit_name, int32_t axis = 0, int64_t unit = 1);
ShardRule RowParallel(std::string unit_name, int64_t unit = 1);
ShardRule RowParallelBias();
ShardRule KvHeadParallel(int64_t head_dim);
ShardRule VocabParallel();
ShardRule ExpertParallelRule();

class ShardedReader {
 public:
  ShardedReader(const WeightSource& source, const TpContext& tp) : source_(source), tp_(tp) {}

  const TpContext& tp() const { return tp_; }
  // Declares weight `name` with its full row-major `shape` and TP `rule` (redeclaring replaces
  // the shape and rule, keeping the first position).
  void Declare(const std::string& name, tensor::Shape shape, ShardRule rule);
  // Every declared weight: present, header shape == declared shape, split divisible.
  // Errors: kInvalidArgument naming the tensor, expected and found shape, or the size that does
  // not divide --tensor-parallel-size. Reads no tensor data.
  Status CheckAll() const;
  // This rank's shard of declared weight `name`, f32 row-major (shape: the full shape with the
  // split axis cut to its local size). Errors as CheckAll, plus kDataLoss from the source.
  // Reading an undeclared name is a bug (TANDEM_CHECK).
  Result<std::vector<float>> Read(const std::string& name) const;
  // The same shard in the dtype WeightSource::ReadStored gives (F32/F16/BF16), for the weights
  // of Linear and Embedding; padding rows (vocab-parallel) are zeros of that dtype.
  Result<tensor::Tensor> ReadStored(const std::string& name) const { return Shard(name, false); }
  // ReadStored for the token-embedding table (a row lookup, no int8 path): an int8-quantized
  // table is kInvalidArgument naming it.
  Result<tensor::Tensor> ReadEmbeddingTable(const std::string& name) const;

 private:
  struct Decl {
    tensor::Shape shape;
    ShardRule rule;
  };
  struct Slice {
    int32_t axis = 0;
    int64_t begin = 0, count = 0, padded = 0;  // in elements of the axis
  };
  Result<Slice> SliceOf(const std::string& name, const Decl& d) const;
  // ReadStored's shard; `widen`: a block dtype (Q8_0) whose shard would cut a block is widened
  // to f32 first instead of refused (Read multiplies in f32 anyway).
  Result<tensor::Tensor> Shard(const std::string& name, bool widen) const;

  const WeightSource& source_;
  TpContext tp_;
  std::map<std::string, Decl> decls_;
  std::vector<std::string> order_;  // declaration order: CheckAll reports the first failure
};

}  // namespace tandem::model
