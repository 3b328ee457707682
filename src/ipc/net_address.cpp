#include "ipc/net_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace tandem::ipc {

Result<std::string> InterfaceAddress(const std::string& ifname) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return NotFound("cannot list network interfaces");
  std::string found;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
    if (ifname != it->ifa_name) continue;
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(it->ifa_addr)->sin_addr, buf, sizeof(buf));
    found = buf;
    break;
  }
  freeifaddrs(list);
  if (found.empty()) {
    return NotFound("network interface '" + ifname +
                    "' (GLOO_SOCKET_IFNAME) has no IPv4 "
                    "address on this machine; check `ip addr`");
  }
  return found;
}

Result<std::string> LocalAddressFor(const std::string& peer_host) {
  if (const char* forced = std::getenv("TANDEM_HOST_IP"); forced && *forced)
    return std::string(forced);
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    // Gloo accepts a comma-separated list; the first interface is the one we use.
    std::string first(ifname);
    first = first.substr(0, first.find(','));
    return InterfaceAddress(first);
  }
  // The source address of a (never sent) UDP "connection" to the peer.
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(9);
  if (fd < 0 || inet_pton(AF_INET, peer_host.c_str(), &peer.sin_addr) != 1 ||
      connect(fd, reinterpret_cast<sockaddr*>(&peer), sizeof(peer)) != 0) {
    if (fd >= 0) close(fd);
    return std::string("127.0.0.1");
  }
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
  close(fd);
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &local.sin_addr, buf, sizeof(buf));
  return std::string(buf);
}

double EngineReadyTimeoutSeconds() {
  for (const char* name : {"TANDEM_ENGINE_READY_TIMEOUT_S", "VLLM_ENGINE_READY_TIMEOUT_S"}) {
    if (const char* v = std::getenv(name); v && *v) {
      char* end = nullptr;
      const double s = std::strtod(v, &end);
      if (end != v && s > 0) return s;
    }
  }
  return 600;
}

}  // namespace tandem::ipc
