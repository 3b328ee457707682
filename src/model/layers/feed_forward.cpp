#include "model/layers/feed_forward.h"

#include <algorithm>
#include <utility>

#include "model/layers/moe.h"
#include "model/layers/shared_expert.h"

namespace tandem::model {
namespace {

// out = moe(x) + shared(x). Under expert parallel a rank with no rows enters only the MoE's
// collectives: the shared expert runs on this rank's own rows and has none.
class MoeWithSharedExpert : public FeedForward {
 public:
  MoeWithSharedExpert(Moe moe, SharedExpert shared)
      : moe_(std::move(moe)), shared_(std::move(shared)) {}

  void Forward(kernels::Stream& stream, const tensor::TensorView& x, const tensor::TensorView& out,
               tensor::DeviceArena& scratch) override {
    moe_.Forward(stream, x, out, scratch);
    if (x.dim(0) > 0) {
      shared_.AddForward(stream, x, out, scratch);
    }
  }
  size_t scratch_bytes(int64_t rows, const tensor::DeviceArena& arena) const override {
    return std::max(moe_.scratch_bytes(rows, arena), shared_.scratch_bytes(rows, arena));
  }
  size_t weight_bytes() const override { return moe_.weight_bytes() + shared_.weight_bytes(); }
  bool expert_parallel() const override { return moe_.expert_parallel(); }

 private:
  Moe moe_;
  SharedExpert shared_;
};

}  // namespace

std::unique_ptr<FeedForward> MoeFeedForward(Moe moe, std::optional<SharedExpert> shared) {
  if (!shared) {
    return std::make_unique<Moe>(std::move(moe));
  }
  return std::make_unique<MoeWithSharedExpert>(std::move(moe), std::move(*shared));
}

}  // namespace tandem::model
