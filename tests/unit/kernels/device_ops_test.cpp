// The device seam on the CPU backend: --device resolution, edge copies, and the view ops giving
// the same values as the raw-pointer kernels they dispatch to.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/backend.h"
#include "kernels/device_ops.h"
#include "kernels/ops.h"
#include "tensor/device_arena.h"

namespace tandem::kernels {
namespace {

using tensor::DType;
using tensor::HostView;
using tensor::TensorView;

TEST(BackendTest, AutoAndCpuGiveTheCpuBackendAndCudaSaysWhyNot) {
  ASSERT_TRUE(BackendFor(tensor::DeviceRequest::kAuto).ok());
  EXPECT_EQ(BackendFor(tensor::DeviceRequest::kAuto).value(), &CpuBackend());
  EXPECT_EQ(BackendFor(tensor::DeviceRequest::kCpu).value(), &CpuBackend());
  EXPECT_STREQ(CpuBackend().name(), "cpu");
  EXPECT_FALSE(HasCudaBackend());
  const Result<Backend*> cuda = BackendFor(tensor::DeviceRequest::kCuda);
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cuda.status().message().rfind("--device cuda: this tandem has no CUDA backend", 0), 0u)
      << cuda.status().message();
}

TEST(BackendTest, EdgeCopiesMoveBytesBothWays) {
  Backend& cpu = CpuBackend();
  auto stream = cpu.CreateStream();
  tensor::DeviceArena arena(cpu.allocator(), "edges");
  ASSERT_TRUE(arena.Reserve(1024).ok());
  const TensorView ids = arena.AllocateOrDie({4}, DType::kI32);
  const std::vector<int32_t> in = {7, -1, 42, 3};
  cpu.CopyToDevice(ids, in.data(), in.size() * sizeof(int32_t), *stream);
  std::vector<int32_t> out(4);
  cpu.CopyToHost(out.data(), ids, out.size() * sizeof(int32_t), *stream);
  auto done = cpu.CreateEvent();
  stream->Record(*done);
  done->Synchronize();
  stream->Synchronize();
  EXPECT_EQ(out, in);
  EXPECT_DEATH(cpu.CopyToDevice(ids, in.data(), 17, *stream), "17 bytes into a view of 16");
}

TEST(DeviceOpsTest, RmsNormAddAndGatherMatchTheHostKernels) {
  auto stream = CpuBackend().CreateStream();
  const int64_t rows = 3, dim = 8;
  std::vector<float> x(rows * dim), w(dim), d(rows * dim);
  for (int64_t i = 0; i < rows * dim; ++i) {
    x[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
    d[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
  }
  for (int64_t j = 0; j < dim; ++j) {
    w[j] = 0.5f + 0.125f * static_cast<float>(j);
  }
  std::vector<float> want(rows * dim), got(rows * dim);
  kernels::RmsNorm(x.data(), w.data(), want.data(), rows, dim, 1e-6f);
  RmsNorm(*stream, HostView({rows, dim}, DType::kF32, x.data()),
          HostView({dim}, DType::kF32, w.data()), HostView({rows, dim}, DType::kF32, got.data()),
          1e-6f);
  EXPECT_EQ(got, want);  // the same kernel: the same bits

  std::vector<float> sum = x;
  AddInPlace(*stream, HostView({rows, dim}, DType::kF32, sum.data()),
             HostView({rows, dim}, DType::kF32, d.data()));
  for (int64_t i = 0; i < rows * dim; ++i) {
    EXPECT_EQ(sum[i], x[i] + d[i]);
  }

  std::vector<int32_t> pick = {2, 0};
  std::vector<float> picked(2 * dim);
  GatherRows(*stream, HostView({rows, dim}, DType::kF32, x.data()),
             HostView({2}, DType::kI32, pick.data()),
             HostView({2, dim}, DType::kF32, picked.data()));
  for (int64_t j = 0; j < dim; ++j) {
    EXPECT_EQ(picked[j], x[2 * dim + j]);
    EXPECT_EQ(picked[dim + j], x[j]);
  }
  pick[1] = 3;
  EXPECT_DEATH(GatherRows(*stream, HostView({rows, dim}, DType::kF32, x.data()),
                          HostView({2}, DType::kI32, pick.data()),
                          HostView({2, dim}, DType::kF32, picked.data())),
               "GatherRows: row 3 of 3");
}

TEST(DeviceOpsTest, AViewOnAnotherDeviceIsRefusedByName) {
  auto stream = CpuBackend().CreateStream();
  std::vector<float> x(4), w(4);
  TensorView on_gpu = HostView({1, 4}, DType::kF32, x.data());
  on_gpu.device = tensor::Device{tensor::DeviceKind::kCuda, 0};
  EXPECT_DEATH(RmsNorm(*stream, on_gpu, HostView({4}, DType::kF32, w.data()), on_gpu, 1e-6f),
               "RmsNorm: a view on cuda:0, the stream on cpu");
  EXPECT_DEATH(CheckCpuOp("GatedDeltaNet", *stream, {&on_gpu}),
               "GatedDeltaNet: a view on cuda:0, the stream on cpu");
}

// The layer ops of step 4 (device-seam.md §8), on values worked out by hand.
TEST(DeviceOpsTest, LayerOpsGiveHandComputedValues) {
  auto stream = CpuBackend().CreateStream();
  const float sigmoid_1 = 1.0f / (1.0f + std::exp(-1.0f));
  const float ln3 = std::log(3.0f);  // sigmoid(ln 3) = 3/4

  std::vector<float> gate_up = {0, 1, 2, 3}, act(2);  // one row: gate (0, 1), up (2, 3)
  SiluMul(*stream, HostView({1, 4}, DType::kF32, gate_up.data()),
          HostView({1, 2}, DType::kF32, act.data()));
  EXPECT_FLOAT_EQ(act[0], 0.0f);
  EXPECT_FLOAT_EQ(act[1], 3.0f * sigmoid_1);

  std::vector<float> x = {2, 4}, gate = {0, ln3};
  MulSigmoid(*stream, HostView({2}, DType::kF32, x.data()),
             HostView({2}, DType::kF32, gate.data()));
  EXPECT_FLOAT_EQ(x[0], 1.0f);
  EXPECT_NEAR(x[1], 3.0f, 1e-6f);

  std::vector<float> out = {1, 1, 0, 0}, y = {2, 4, 6, 8};
  SigmoidGatedAdd(*stream, HostView({2, 2}, DType::kF32, out.data()),
                  HostView({2, 2}, DType::kF32, y.data()),
                  HostView({2, 1}, DType::kF32, gate.data()));
  EXPECT_FLOAT_EQ(out[0], 2.0f);
  EXPECT_FLOAT_EQ(out[1], 3.0f);
  EXPECT_NEAR(out[2], 4.5f, 1e-6f);
  EXPECT_NEAR(out[3], 6.0f, 1e-6f);

  Fill(*stream, HostView({2, 2}, DType::kF32, out.data()), 7.0f);
  EXPECT_EQ(out, std::vector<float>(4, 7.0f));

  std::vector<float> src = {0, 1, 2, 3, 4, 5, 6, 7}, cols(4);
  CopyColumns(*stream, HostView({2, 4}, DType::kF32, src.data()), 1,
              HostView({2, 2}, DType::kF32, cols.data()));
  EXPECT_EQ(cols, std::vector<float>({1, 2, 5, 6}));
  EXPECT_DEATH(CopyColumns(*stream, HostView({2, 4}, DType::kF32, src.data()), 3,
                           HostView({2, 2}, DType::kF32, cols.data())),
               "CopyColumns: src, dst \\[2, 4\\], \\[2, 2\\] from column 3");

  std::vector<float> dst(6, 0.0f), expert_out = {1, 2, 3, 4}, weights = {0.5f, 2.0f};
  std::vector<int32_t> rows = {2, 0};
  ScatterAddScaled(*stream, HostView({2, 2}, DType::kF32, expert_out.data()),
                   HostView({2}, DType::kI32, rows.data()),
                   HostView({2}, DType::kF32, weights.data()),
                   HostView({3, 2}, DType::kF32, dst.data()));
  EXPECT_EQ(dst, std::vector<float>({6, 8, 0, 0, 0.5f, 1}));
  rows[1] = 3;
  EXPECT_DEATH(ScatterAddScaled(*stream, HostView({2, 2}, DType::kF32, expert_out.data()),
                                HostView({2}, DType::kI32, rows.data()),
                                HostView({2}, DType::kF32, weights.data()),
                                HostView({3, 2}, DType::kF32, dst.data())),
               "ScatterAddScaled: row 3 of 3");
}

}  // namespace
}  // namespace tandem::kernels
