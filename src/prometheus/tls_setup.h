#pragma once

#include <boost/asio/ssl/context.hpp>
#include <string>

namespace metrics_adapter::prometheus {

struct TlsFiles {
  std::string ca_file;           // --prometheus-ca-file
  std::string client_cert_file;  // --prometheus-client-tls-cert-file
  std::string client_key_file;   // --prometheus-client-tls-key-file
};

// Loads every configured file once so that mistakes surface at startup. Throws
// std::invalid_argument naming the flag whose file is missing or unusable, or both client flags
// when only one of them is set.
void validateTlsFiles(const TlsFiles& files);

// Prepares a client context: TLS 1.2 or later, the system's roots plus the CA file (added, not
// replacing them), and the client certificate and key when set. Files are read on every call, so
// renewed certificates apply to new connections. Throws boost::system::system_error.
void configureTlsContext(boost::asio::ssl::context& context, const TlsFiles& files);

}  // namespace metrics_adapter::prometheus
