#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "server/certificate.h"
#include "server/tls_policy.h"

namespace metrics_adapter::server {

// One --tls-sni-cert-key pair, loaded, with the patterns its flag gave (empty: the
// certificate's own names).
struct NamedCertificatePair {
  const CertificatePair* pair = nullptr;
  std::vector<std::string> patterns;
  std::string label;  // how errors name it, e.g. the flag and its value
};

// A server context (makeServerContext) that serves `default_pair`, and switches a connection to
// one of `named` when its SNI matches that pair's names, or, when the client sent no SNI, when
// an IP pattern names the local address it reached (see setSniLocalAddress). The rules are
// SniNameTable's. With `named` empty this is makeServerContext itself. The contexts of the
// named pairs and their name table live as long as the returned context. Throws
// std::runtime_error (starting with the pair's label when OpenSSL rejects a named pair).
std::shared_ptr<boost::asio::ssl::context> makeSniServerContext(
    const TlsPolicy& policy, const CertificatePair& default_pair,
    const std::vector<NamedCertificatePair>& named);

// Tells the SNI selection which local address `ssl`'s connection reached, for IP patterns.
// `address` must outlive the handshake; without it, a client sending no SNI gets the default.
void setSniLocalAddress(SSL* ssl, const std::string* address);

}  // namespace metrics_adapter::server
