// TLS for HttpListener: the server certificate, key and client-certificate policy
// (vLLM's --ssl-keyfile, --ssl-certfile, --ssl-ca-certs, --ssl-cert-reqs, --ssl-ciphers,
// --enable-ssl-refresh), loaded into an OpenSSL context through Boost.Asio's ssl::context.
// Reference: Boost.Beast example advanced_server_flex (one port, Asio ssl::stream over TCP).
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"
#include "http/tls_options.h"

namespace tandem::http {

// The TLS context new connections use. Thread-safe.
class TlsContextProvider {
 public:
  // Loads and checks the files. Errors: kInvalidArgument naming the flag and file (missing,
  // not a regular file, not PEM, key not matching the certificate, a cipher list OpenSSL
  // rejects, --ssl-cert-reqs without --ssl-ca-certs).
  static Result<std::shared_ptr<TlsContextProvider>> Create(TlsOptions options);

  // The context for a connection accepted now. With `refresh`, a context is reloaded first
  // when a file's modification time changed since the last load; a reload that fails is
  // logged once per change and the previous context is kept.
  std::shared_ptr<boost::asio::ssl::context> Current();

  const TlsOptions& options() const { return options_; }

  // One line for the start-up log: files, TLS versions, client-certificate policy.
  std::string Describe() const;

 private:
  explicit TlsContextProvider(TlsOptions options) : options_(std::move(options)) {}
  // The mtimes of the three files, summed into one stamp (0 for a missing file).
  int64_t FilesStamp() const;

  const TlsOptions options_;
  std::mutex mutex_;
  std::shared_ptr<boost::asio::ssl::context> context_;
  int64_t stamp_ = 0;         // FilesStamp() of context_
  int64_t failed_stamp_ = 0;  // the stamp whose reload failed (logged once)
};

// Builds a server context from `options`. Errors as TlsContextProvider::Create.
Result<std::shared_ptr<boost::asio::ssl::context>> MakeServerTlsContext(const TlsOptions& options);

}  // namespace tandem::http
