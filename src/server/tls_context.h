#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "server/certificate.h"
#include "server/tls_policy.h"

namespace metrics_adapter::server {

// A server SSL context: the policy's minimum version and TLS 1.2 ciphers, ALPN "http/1.1" only
// (h2 is never selected), no session resumption, and a client certificate requested but not
// required or verified (verification is the application's job, docs/api-contract.md "TLS and client
// certificates"). Throws std::runtime_error when OpenSSL rejects the policy or the pair.
std::shared_ptr<boost::asio::ssl::context> makeServerContext(const TlsPolicy& policy,
                                                             const CertificatePair& pair);

}  // namespace metrics_adapter::server
