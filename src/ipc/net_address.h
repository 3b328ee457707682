// Which address this machine uses for the control plane: TANDEM_HOST_IP forces one, else the
// IPv4 address of GLOO_SOCKET_IFNAME (as the seed deployment sets it), else the address the
// kernel would use to reach `peer_host`.
#pragma once

#include <string>

#include "core/status.h"

namespace tandem::ipc {

// IPv4 address of network interface `ifname` ("eth0"). Errors: kNotFound naming it.
Result<std::string> InterfaceAddress(const std::string& ifname);

// This machine's address for talking to `peer_host` (see above). Errors: kNotFound when
// GLOO_SOCKET_IFNAME names an interface without an IPv4 address.
Result<std::string> LocalAddressFor(const std::string& peer_host);

// Seconds of the start-up deadline: TANDEM_ENGINE_READY_TIMEOUT_S, else
// VLLM_ENGINE_READY_TIMEOUT_S, else 600.
double EngineReadyTimeoutSeconds();

}  // namespace tandem::ipc
