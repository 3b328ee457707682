#include "http/tls.h"

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509err.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/logging.h"

namespace tandem::http {

namespace ssl = boost::asio::ssl;

namespace {

// OpenSSL's reason for the last failure (its error queue, emptied), or `fallback`.
std::string OpenSslReason(const boost::system::error_code& ec) {
  std::string reason = ec ? ec.message() : "";
  while (const unsigned long e = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(e, buffer, sizeof(buffer));
    if (reason.empty()) reason = buffer;
  }
  return reason.empty() ? "unknown OpenSSL error" : reason;
}

Status CheckRegularFile(const char* flag, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return InvalidArgument(
        fmt::format("{} '{}': cannot read the file: {}", flag, path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return InvalidArgument(fmt::format("{} '{}': not a regular file", flag, path));
  }
  return Status::Ok();
}

int64_t ModifiedNs(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> MakeServerTlsContext(const TlsOptions& o) {
  if (o.keyfile.empty() || o.certfile.empty()) {
    return InvalidArgument(
        o.keyfile.empty() ? "--ssl-certfile needs --ssl-keyfile (the certificate's private key)"
                          : "--ssl-keyfile needs --ssl-certfile (the server certificate)");
  }
  if (o.cert_reqs != ClientCertPolicy::kNone && o.ca_certs.empty()) {
    return InvalidArgument(fmt::format(
        "--ssl-cert-reqs {} asks for client certificates: give --ssl-ca-certs, the CAs that "
        "sign them",
        static_cast<int>(o.cert_reqs)));
  }
  TANDEM_RETURN_IF_ERROR(CheckRegularFile("--ssl-certfile", o.certfile));
  TANDEM_RETURN_IF_ERROR(CheckRegularFile("--ssl-keyfile", o.keyfile));
  if (!o.ca_certs.empty()) TANDEM_RETURN_IF_ERROR(CheckRegularFile("--ssl-ca-certs", o.ca_certs));

  ERR_clear_error();
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  // TLS 1.2 and 1.3 only (as Python's ssl.create_default_context, which uvicorn uses).
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use);
  // An encrypted key would make OpenSSL prompt on the terminal: answer with no passphrase.
  context->set_password_callback([](size_t, ssl::context::password_purpose) { return ""; });
  boost::system::error_code ec;
  context->use_certificate_chain_file(o.certfile, ec);
  if (ec) {
    return InvalidArgument(fmt::format("--ssl-certfile '{}': not a PEM certificate chain ({})",
                                       o.certfile, OpenSslReason(ec)));
  }
  context->use_private_key_file(o.keyfile, ssl::context::pem, ec);
  const auto reason = static_cast<unsigned long>(ec.value());
  if (ec && ERR_GET_LIB(reason) == ERR_LIB_X509 &&
      ERR_GET_REASON(reason) == X509_R_KEY_VALUES_MISMATCH) {
    ERR_clear_error();
    return InvalidArgument(
        fmt::format("--ssl-keyfile '{}' does not match the certificate in --ssl-certfile '{}'",
                    o.keyfile, o.certfile));
  }
  if (ec) {
    return InvalidArgument(
        fmt::format("--ssl-keyfile '{}': not an unencrypted PEM private key ({})", o.keyfile,
                    OpenSslReason(ec)));
  }
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return InvalidArgument(
        fmt::format("--ssl-keyfile '{}' does not match the certificate in --ssl-certfile '{}' ({})",
                    o.keyfile, o.certfile, OpenSslReason({})));
  }
  if (!o.ca_certs.empty()) {
    context->load_verify_file(o.ca_certs, ec);
    if (ec) {
      return InvalidArgument(fmt::format("--ssl-ca-certs '{}': not PEM certificates ({})",
                                         o.ca_certs, OpenSslReason(ec)));
    }
  }
  if (!o.ciphers.empty() &&
      SSL_CTX_set_cipher_list(context->native_handle(), o.ciphers.c_str()) != 1) {
    return InvalidArgument(fmt::format("--ssl-ciphers '{}': OpenSSL accepts none of them ({})",
                                       o.ciphers, OpenSslReason({})));
  }
  switch (o.cert_reqs) {
    case ClientCertPolicy::kNone:
      context->set_verify_mode(ssl::verify_none);
      break;
    case ClientCertPolicy::kOptional:
      context->set_verify_mode(ssl::verify_peer);
      break;
    case ClientCertPolicy::kRequired:
      context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      break;
  }
  return context;
}

Result<std::shared_ptr<TlsContextProvider>> TlsContextProvider::Create(TlsOptions options) {
  std::shared_ptr<TlsContextProvider> provider(new TlsContextProvider(std::move(options)));
  provider->stamp_ = provider->FilesStamp();
  TANDEM_ASSIGN_OR_RETURN(provider->context_, MakeServerTlsContext(provider->options_));
  return provider;
}

int64_t TlsContextProvider::FilesStamp() const {
  // Unsigned: the sum wraps (nanosecond times overflow int64 at 3× and 7×, undefined behaviour
  // in signed arithmetic); the stamp is only compared for equality.
  const auto ns = [](const std::string& path) { return static_cast<uint64_t>(ModifiedNs(path)); };
  return static_cast<int64_t>(ns(options_.certfile) + 3 * ns(options_.keyfile) +
                              7 * ns(options_.ca_certs));
}

std::shared_ptr<ssl::context> TlsContextProvider::Current() {
  std::lock_guard lock(mutex_);
  if (options_.refresh) {
    const int64_t stamp = FilesStamp();
    if (stamp != stamp_ && stamp != failed_stamp_) {
      auto reloaded = MakeServerTlsContext(options_);
      if (reloaded.ok()) {
        context_ = std::move(reloaded).value();
        stamp_ = stamp;
        TLOG_INFO("--enable-ssl-refresh: reloaded the TLS certificate and key");
      } else {
        failed_stamp_ = stamp;  // a half-written rotation: try again when the files change
        TLOG_WARN("--enable-ssl-refresh: keeping the previous TLS context: {}",
                  reloaded.status().message());
      }
    }
  }
  return context_;
}

std::string TlsContextProvider::Describe() const {
  std::string subject = "?", expires = "?";
  if (X509* cert = SSL_CTX_get0_certificate(context_->native_handle())) {
    char name[256];
    X509_NAME_oneline(X509_get_subject_name(cert), name, sizeof(name));
    subject = name;
    if (BIO* bio = BIO_new(BIO_s_mem())) {
      if (ASN1_TIME_print(bio, X509_get0_notAfter(cert)) == 1) {
        char* data = nullptr;
        const long n = BIO_get_mem_data(bio, &data);
        expires.assign(data, static_cast<size_t>(n));
      }
      BIO_free(bio);
    }
  }
  static constexpr const char* kPolicy[] = {"not asked for", "optional", "required"};
  return fmt::format("TLS 1.2/1.3 with certificate {} ({}, expires {}); client certificates {}{}{}",
                     options_.certfile, subject, expires,
                     kPolicy[static_cast<int>(options_.cert_reqs)],
                     options_.ca_certs.empty() ? "" : ", CAs from " + options_.ca_certs,
                     options_.refresh ? "; reloaded when the files change" : "");
}

}  // namespace tandem::http
