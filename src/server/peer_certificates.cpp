#include "server/peer_certificates.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "server/certificate.h"

namespace metrics_adapter::server {

std::vector<std::string> peerCertificateChainPem(SSL* ssl) {
  std::vector<std::string> chain;
  X509* leaf = SSL_get0_peer_certificate(ssl);
  if (leaf == nullptr) return chain;
  try {
    chain.push_back(certificatePem(leaf));
    // On the server side OpenSSL's peer chain excludes the leaf; skip it anyway if present.
    STACK_OF(X509)* rest = SSL_get_peer_cert_chain(ssl);
    const int count = rest != nullptr ? sk_X509_num(rest) : 0;
    for (int i = 0; i < count; ++i) {
      X509* certificate = sk_X509_value(rest, i);
      if (i == 0 && X509_cmp(certificate, leaf) == 0) continue;
      chain.push_back(certificatePem(certificate));
    }
  } catch (const std::runtime_error& e) {
    SPDLOG_WARN("cannot encode the client certificate chain: {}", e.what());
  }
  return chain;
}

}  // namespace metrics_adapter::server
