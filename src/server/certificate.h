#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <vector>

namespace metrics_adapter::server {

struct X509Deleter {
  void operator()(X509* certificate) const { X509_free(certificate); }
};
struct EvpPkeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;

// A serving certificate (leaf first, then any intermediates) and its private key.
struct CertificatePair {
  std::vector<X509Ptr> chain;
  EvpPkeyPtr key;
};

// How loadCertificatePair's errors name the two files.
struct PairFileLabels {
  const char* cert = "tls_cert_file";
  const char* key = "tls_key_file";
};

// Reads a PEM certificate chain and a PEM private key (RSA or ECDSA; encrypted keys are refused
// rather than prompting) and checks that the key belongs to the leaf. Throws std::runtime_error
// naming the file (by its label) and the problem.
CertificatePair loadCertificatePair(const std::string& cert_file, const std::string& key_file,
                                    const PairFileLabels& labels = {});

// True when now lies within the certificate's validity period.
bool isCurrentlyValid(X509* certificate);

std::string certificatePem(X509* certificate);
std::string privateKeyPem(EVP_PKEY* key);  // unencrypted PKCS#8

// The drained OpenSSL error queue as "msg; msg", or "unknown OpenSSL error".
std::string takeOpenSslErrors();

}  // namespace metrics_adapter::server
