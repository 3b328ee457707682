#include "model/layers/shared_expert.h"

#include "kernels/device_ops.h"

namespace tandem::model {

SharedExpert::SharedExpert(Mlp mlp, std::vector<float> gate, int64_t dim, const EpContext& ep)
    : mlp_(std::move(mlp)), gate_(std::move(gate), 1, dim), dim_(dim), ep_(ep) {}

size_t SharedExpert::scratch_bytes(int64_t rows, const tensor::DeviceArena& arena) const {
  return arena.BytesFor({rows, dim_}, tensor::DType::kF32) +
         arena.BytesFor({rows, 1}, tensor::DType::kF32) + mlp_.scratch_bytes(rows, arena);
}

void SharedExpert::AddForward(kernels::Stream& stream, const tensor::TensorView& x,
                              const tensor::TensorView& out, tensor::DeviceArena& scratch) {
  int64_t first = 0, rows = x.dim(0);
  if (ep_.enabled()) {
    const RowRange mine = DispatchRowsOf(rows, ep_.tp_rank, ep_.tp_size);
    first = mine.first;
    rows = mine.count;
  }
  if (rows == 0) return;
  const tensor::TensorView my_x = x.Rows(first, rows);
  const tensor::TensorView my_out = out.Rows(first, rows);
  const tensor::ArenaScope scope(scratch);
  const tensor::TensorView y = scratch.AllocateOrDie({rows, dim_}, tensor::DType::kF32);
  const tensor::TensorView g = scratch.AllocateOrDie({rows, 1}, tensor::DType::kF32);
  mlp_.Forward(stream, my_x, y, scratch);
  gate_.Forward(stream, my_x, g);
  kernels::SigmoidGatedAdd(stream, my_out, y, g);
}

}  // namespace tandem::model
