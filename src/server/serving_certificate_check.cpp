#include <openssl/asn1.h>
#include <openssl/x509.h>

#include <ctime>

#include "metrics_adapter/server/https_server.h"
#include "server/certificate.h"
#include "server/tls_context.h"
#include "server/tls_context_provider.h"
#include "server/tls_policy.h"

namespace metrics_adapter::server {
namespace {

std::string formatTime(const ASN1_TIME* time) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(time, &tm) != 1) return "?";
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

std::optional<ServingCertificateInfo> checkServingCertificate(const ServerOptions& options) {
  const TlsPolicy policy = makeTlsPolicy(options.tls_min_version, options.tls_cipher_suites);
  for (const SniCertKey& cert_key : options.sni_cert_keys) loadSniCertificatePair(cert_key, policy);
  if (options.tls_cert_file.empty()) return std::nullopt;
  const CertificatePair pair = loadCertificatePair(options.tls_cert_file, options.tls_key_file);
  makeServerContext(policy, pair);
  X509* leaf = pair.chain.front().get();
  return ServingCertificateInfo{.not_before = formatTime(X509_get0_notBefore(leaf)),
                                .not_after = formatTime(X509_get0_notAfter(leaf)),
                                .valid_now = isCurrentlyValid(leaf)};
}

}  // namespace metrics_adapter::server
