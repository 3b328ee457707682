// The "nccl" backend as CreateProcessGroup exposes it. A CPU build (TANDEM_WITH_NCCL OFF) must
// answer with a clear kUnimplemented that says how to get NCCL, not "unknown backend"; a CUDA
// build must check its spec before touching the GPU. The collectives themselves need GPUs and
// are not run here.
#include <gtest/gtest.h>

#include <string>

#include "comm/process_group.h"

namespace tandem::comm {
namespace {

GroupSpec MakeNcclSpec(const std::string& name, const std::string& rendezvous) {
  GroupSpec spec;
  spec.backend = "nccl";
  spec.name = name;
  spec.rank = 0;
  spec.size = 2;
  spec.rendezvous = rendezvous;
  spec.timeout_s = 1;
  return spec;
}

TEST(NcclBackendTest, BuildWithoutNcclIsUnimplementedAndSaysHowToConfigure) {
#if TANDEM_WITH_NCCL
  GTEST_SKIP() << "this build has NCCL (configured with -DTANDEM_WITH_NCCL=ON)";
#else
  auto pg = CreateProcessGroup(MakeNcclSpec("tp-nccl-off", "127.0.0.1:1"));
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.status().code(), StatusCode::kUnimplemented) << pg.status().ToString();
  const std::string& message = pg.status().message();
  EXPECT_NE(message.find("this build has no NCCL (configure with -DTANDEM_WITH_NCCL=ON on a "
                         "machine with the CUDA toolkit and NCCL)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("tp-nccl-off"), std::string::npos) << message;
#endif
}

TEST(NcclBackendTest, MalformedRendezvousIsInvalidArgumentBeforeAnyGpuWork) {
#if !TANDEM_WITH_NCCL
  GTEST_SKIP() << "this build has no NCCL";
#else
  auto pg = CreateProcessGroup(MakeNcclSpec("tp-nccl-bad-address", "no-port-here"));
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.status().code(), StatusCode::kInvalidArgument) << pg.status().ToString();
  EXPECT_NE(pg.status().message().find("tp-nccl-bad-address"), std::string::npos)
      << pg.status().ToString();
#endif
}

}  // namespace
}  // namespace tandem::comm
