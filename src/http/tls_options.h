// The TLS settings of an HTTP server, free of OpenSSL and Asio types (server configs hold them;
// http/tls.h loads them).
#pragma once

#include <cstdint>
#include <string>

namespace tandem::http {

// Client certificates (Python's ssl.CERT_NONE / CERT_OPTIONAL / CERT_REQUIRED, the integers
// vLLM's --ssl-cert-reqs takes).
enum class ClientCertPolicy : int32_t { kNone = 0, kOptional = 1, kRequired = 2 };

struct TlsOptions {
  std::string keyfile;   // PEM private key (unencrypted)
  std::string certfile;  // PEM certificate chain, the server's first
  std::string ca_certs;  // PEM CAs that sign client certificates; "" = none
  ClientCertPolicy cert_reqs = ClientCertPolicy::kNone;
  std::string ciphers;   // OpenSSL cipher list for TLS ≤ 1.2; "" = OpenSSL's default
  bool refresh = false;  // reload the files when they change (certificate rotation)

  bool enabled() const { return !keyfile.empty() || !certfile.empty(); }
};

}  // namespace tandem::http
