#include "server/sni_context.h"

#include <optional>
#include <stdexcept>
#include <utility>

#include "server/sni_names.h"
#include "server/tls_context.h"

namespace metrics_adapter::server {
namespace {

// What the servername callback of one default context chooses from.
struct SniContexts {
  std::shared_ptr<boost::asio::ssl::context> default_context;
  std::vector<std::shared_ptr<boost::asio::ssl::context>> named;
  SniNameTable table;
};

int localAddressIndex() {
  static const int kIndex = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return kIndex;
}

// Runs while the ClientHello is processed, before the certificate is chosen, also when the
// client sent no SNI. Swapping the SSL_CTX swaps the certificate and key; everything else the
// contexts set is the same, as makeServerContext built them all from one policy.
int selectSniCertificate(SSL* ssl, int* alert, void* arg) {
  const auto* contexts = static_cast<const SniContexts*>(arg);
  std::optional<std::size_t> index;
  if (const char* server_name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)) {
    index = contexts->table.forServerName(server_name);
  } else if (const auto* address =
                 static_cast<const std::string*>(SSL_get_ex_data(ssl, localAddressIndex()))) {
    index = contexts->table.forLocalAddress(*address);
  }
  if (!index) return SSL_TLSEXT_ERR_OK;
  if (SSL_set_SSL_CTX(ssl, contexts->named[*index]->native_handle()) == nullptr) {
    // Better no handshake than a certificate for another name.
    *alert = SSL_AD_INTERNAL_ERROR;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

std::shared_ptr<boost::asio::ssl::context> makeSniServerContext(
    const TlsPolicy& policy, const CertificatePair& default_pair,
    const std::vector<NamedCertificatePair>& named) {
  if (named.empty()) return makeServerContext(policy, default_pair);
  std::vector<SniNames> names;
  std::vector<std::shared_ptr<boost::asio::ssl::context>> named_contexts;
  for (const NamedCertificatePair& entry : named) {
    try {
      named_contexts.push_back(makeServerContext(policy, *entry.pair));
    } catch (const std::exception& e) {
      throw std::runtime_error(entry.label + ": " + e.what());
    }
    names.push_back({.patterns = entry.patterns,
                     .extracted = certificateNames(entry.pair->chain.front().get())});
  }
  auto contexts = std::make_shared<SniContexts>(SniContexts{
      .default_context = makeServerContext(policy, default_pair),
      .named = std::move(named_contexts),
      .table = SniNameTable(names),
  });
  SSL_CTX* handle = contexts->default_context->native_handle();
  SSL_CTX_set_tlsext_servername_callback(handle, selectSniCertificate);
  SSL_CTX_set_tlsext_servername_arg(handle, contexts.get());
  // Shares ownership of everything the callback reads.
  return {contexts, contexts->default_context.get()};
}

void setSniLocalAddress(SSL* ssl, const std::string* address) {
  SSL_set_ex_data(ssl, localAddressIndex(), const_cast<std::string*>(address));
}

}  // namespace metrics_adapter::server
