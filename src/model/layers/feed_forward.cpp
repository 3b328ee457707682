#include "model/layers/feed_forward.h"

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

  void Forward(const float* x, float* out, int64_t rows) override {
    moe_.Forward(x, out, rows);
    if (rows > 0) {
      shared_.AddForward(x, out, rows);
    }
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
