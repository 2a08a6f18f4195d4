#pragma once

#include <openssl/ssl.h>

#include <string>
#include <vector>

namespace metrics_adapter::server {

// PEM of the certificates the peer presented in the handshake, leaf first; empty when it sent
// none. Nothing here is verified.
std::vector<std::string> peerCertificateChainPem(SSL* ssl);

}  // namespace metrics_adapter::server
