// PickFreeTcpPort: a port that is free and outside the kernel's ephemeral range, so that no
// other socket's bind(0) or connect() takes it before its owner binds it.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "ipc/zmq_socket.h"

namespace tandem::ipc {
namespace {

TEST(PickFreeTcpPortTest, PortsLieOutsideTheEphemeralRange) {
  int low = 0, high = 0;
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  ASSERT_TRUE(range >> low >> high) << "cannot read ip_local_port_range";
  std::set<int> seen;
  for (int i = 0; i < 20; ++i) {
    Result<int> port = PickFreeTcpPort("127.0.0.1");
    ASSERT_TRUE(port.ok()) << port.status().message();
    EXPECT_TRUE(*port < low || *port > high) << *port << " in [" << low << ", " << high << "]";
    EXPECT_GE(*port, 1024);
    seen.insert(*port);
  }
  EXPECT_GT(seen.size(), 1u) << "the same port every time";
}

TEST(PickFreeTcpPortTest, NotAnIpv4AddressIsUnavailableNamingIt) {
  const Result<int> port = PickFreeTcpPort("not-an-address");
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("'not-an-address' is not an IPv4 address"),
            std::string::npos);
}

}  // namespace
}  // namespace tandem::ipc
