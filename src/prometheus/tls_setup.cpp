#include "prometheus/tls_setup.h"

#include <openssl/ssl.h>

#include <boost/system/system_error.hpp>
#include <stdexcept>

namespace metrics_adapter::prometheus {
namespace {

void loadClientCertificate(boost::asio::ssl::context& context, const TlsFiles& files) {
  context.use_certificate_chain_file(files.client_cert_file);
}

void loadClientKey(boost::asio::ssl::context& context, const TlsFiles& files) {
  context.use_private_key_file(files.client_key_file, boost::asio::ssl::context::pem);
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    throw std::invalid_argument("the key does not match --prometheus-client-tls-cert-file");
  }
}

}  // namespace

void configureTlsContext(boost::asio::ssl::context& context, const TlsFiles& files) {
  context.set_options(boost::asio::ssl::context::default_workarounds |
                      boost::asio::ssl::context::no_sslv2 | boost::asio::ssl::context::no_sslv3 |
                      boost::asio::ssl::context::no_tlsv1 | boost::asio::ssl::context::no_tlsv1_1);
  context.set_default_verify_paths();
  if (!files.ca_file.empty()) context.load_verify_file(files.ca_file);
  if (!files.client_cert_file.empty()) {
    loadClientCertificate(context, files);
    loadClientKey(context, files);
  }
}

void validateTlsFiles(const TlsFiles& files) {
  if (files.client_cert_file.empty() != files.client_key_file.empty()) {
    throw std::invalid_argument(
        "--prometheus-client-tls-cert-file and --prometheus-client-tls-key-file must be set "
        "together");
  }
  boost::asio::ssl::context context(boost::asio::ssl::context::tls_client);
  const auto step = [&](const char* flag, const std::string& file, auto&& load) {
    if (file.empty()) return;
    try {
      load();
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string(flag) + ": cannot use " + file + ": " + e.what());
    }
  };
  step("--prometheus-ca-file", files.ca_file, [&] { context.load_verify_file(files.ca_file); });
  step("--prometheus-client-tls-cert-file", files.client_cert_file,
       [&] { loadClientCertificate(context, files); });
  step("--prometheus-client-tls-key-file", files.client_key_file,
       [&] { loadClientKey(context, files); });
}

}  // namespace metrics_adapter::prometheus
