#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/buffer.hpp>
#include <boost/system/system_error.hpp>
#include <new>
#include <stdexcept>

#include "net/tls_client_context.h"

namespace metrics_adapter::net {
namespace {

using boost::asio::ssl::context;

// Empties the context's trust store, dropping the system roots cpprestsdk loads by default.
void forgetTrustedCertificates(context& tls) {
  X509_STORE* empty = X509_STORE_new();
  if (empty == nullptr) throw std::bad_alloc();
  SSL_CTX_set_cert_store(tls.native_handle(), empty);  // frees the previous store
}

void loadCa(context& tls, const PemInput& ca) {
  if (!ca.file.empty()) {
    tls.load_verify_file(ca.file);
  } else {
    tls.add_certificate_authority(boost::asio::buffer(ca.data));
  }
}

void loadClientCertificate(context& tls, const PemInput& cert) {
  if (!cert.file.empty()) {
    tls.use_certificate_chain_file(cert.file);
  } else {
    tls.use_certificate_chain(boost::asio::buffer(cert.data));
  }
}

void loadClientKey(context& tls, const PemInput& key, const PemInput& cert) {
  if (!key.file.empty()) {
    tls.use_private_key_file(key.file, context::pem);
  } else {
    tls.use_private_key(boost::asio::buffer(key.data), context::pem);
  }
  if (SSL_CTX_check_private_key(tls.native_handle()) != 1) {
    throw std::invalid_argument("the key does not match " + cert.name);
  }
}

}  // namespace

void configureTlsContext(context& tls, const TlsClientSettings& settings) {
  tls.set_options(context::default_workarounds | context::no_sslv2 | context::no_sslv3 |
                  context::no_tlsv1 | context::no_tlsv1_1);
  if (settings.ca.empty() || !settings.ca_replaces_system_roots) {
    tls.set_default_verify_paths();
  } else {
    forgetTrustedCertificates(tls);
  }
  if (!settings.ca.empty()) loadCa(tls, settings.ca);
  if (!settings.client_cert.empty()) {
    loadClientCertificate(tls, settings.client_cert);
    loadClientKey(tls, settings.client_key, settings.client_cert);
  }
}

void validateTlsSettings(const TlsClientSettings& settings) {
  if (settings.client_cert.empty() != settings.client_key.empty()) {
    throw std::invalid_argument(settings.client_cert.name + " and " + settings.client_key.name +
                                " must be set together");
  }
  context tls(context::tls_client);
  const auto step = [](const PemInput& input, auto&& load) {
    if (input.empty()) return;
    try {
      load();
    } catch (const std::exception& e) {
      const std::string what = input.file.empty() ? "the PEM data" : input.file;
      throw std::invalid_argument(input.name + ": cannot use " + what + ": " + e.what());
    }
  };
  step(settings.ca, [&] { loadCa(tls, settings.ca); });
  step(settings.client_cert, [&] { loadClientCertificate(tls, settings.client_cert); });
  step(settings.client_key, [&] { loadClientKey(tls, settings.client_key, settings.client_cert); });
}

}  // namespace metrics_adapter::net
