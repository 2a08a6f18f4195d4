#include "server/tls_context.h"

#include <openssl/ssl.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace metrics_adapter::server {
namespace {

constexpr unsigned char kHttp11[] = {'h', 't', 't', 'p', '/', '1', '.', '1'};
constexpr unsigned char kSessionIdContext[] = "metrics-adapter";

// Chain verification happens later in the application against the right CA bundle; the TLS
// layer only collects whatever the client presents.
int acceptAnyClientCertificate(int /*preverify_ok*/, X509_STORE_CTX* /*context*/) { return 1; }

// Selects "http/1.1" when the client offers it; otherwise completes the handshake without ALPN.
int selectHttp11(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_length,
                 const unsigned char* in, unsigned int in_length, void* /*arg*/) {
  unsigned int i = 0;
  while (i < in_length) {
    const unsigned int length = in[i];
    if (length > in_length - i - 1) break;
    if (length == sizeof(kHttp11) && std::memcmp(in + i + 1, kHttp11, length) == 0) {
      *out = in + i + 1;
      *out_length = static_cast<unsigned char>(length);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + length;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("TLS configuration: " + what + ": " + takeOpenSslErrors());
}

}  // namespace

std::shared_ptr<boost::asio::ssl::context> makeServerContext(const TlsPolicy& policy,
                                                             const CertificatePair& pair) {
  auto context = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server);
  SSL_CTX* handle = context->native_handle();
  if (SSL_CTX_set_min_proto_version(handle, policy.min_version) != 1) fail("minimum version");
  SSL_CTX_set_options(handle, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                  SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_TICKET);
  // Every connection does a full handshake, so the client certificate is always presented
  // afresh instead of being carried over from a cached session.
  SSL_CTX_set_session_cache_mode(handle, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(handle, 0);
  SSL_CTX_set_session_id_context(handle, kSessionIdContext, sizeof(kSessionIdContext) - 1);
  if (!policy.cipher_list.empty() &&
      SSL_CTX_set_cipher_list(handle, policy.cipher_list.c_str()) != 1) {
    fail("none of tls_cipher_suites (" + policy.cipher_list + ") is supported");
  }
  SSL_CTX_set_verify(handle, SSL_VERIFY_PEER, acceptAnyClientCertificate);
  // An explicit (empty) CA name list for the CertificateRequest message.
  SSL_CTX_set_client_CA_list(handle, sk_X509_NAME_new_null());
  SSL_CTX_set_alpn_select_cb(handle, selectHttp11, nullptr);

  if (pair.chain.empty() || !pair.key)
    throw std::runtime_error("TLS configuration: no certificate");
  if (SSL_CTX_use_certificate(handle, pair.chain.front().get()) != 1) fail("certificate");
  for (std::size_t i = 1; i < pair.chain.size(); ++i) {
    if (SSL_CTX_add1_chain_cert(handle, pair.chain[i].get()) != 1) fail("intermediate certificate");
  }
  if (SSL_CTX_use_PrivateKey(handle, pair.key.get()) != 1) fail("private key");
  if (SSL_CTX_check_private_key(handle) != 1) fail("private key does not match certificate");
  return context;
}

}  // namespace metrics_adapter::server
