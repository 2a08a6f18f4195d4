#pragma once

#include <openssl/x509.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace metrics_adapter::auth {

using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;

// Every certificate of a PEM bundle, in order; blocks of other types and text between blocks
// are skipped. Throws std::invalid_argument when a non-blank bundle holds no certificate.
std::vector<X509Ptr> parseCertificateBundle(const std::string& pem);

// The client certificate chain a peer presented (leaf first, one PEM each, unverified), parsed
// once so several verifiers can check it. At most kMaxCertificates of at most kMaxPemBytes each
// are accepted; anything else makes the chain unusable (error() says why).
class PeerChain {
 public:
  static constexpr std::size_t kMaxCertificates = 10;
  static constexpr std::size_t kMaxPemBytes = std::size_t{64} * 1024;

  explicit PeerChain(const std::vector<std::string>& pem);
  ~PeerChain();
  PeerChain(const PeerChain&) = delete;
  PeerChain& operator=(const PeerChain&) = delete;

  bool presented() const { return presented_; }  // the peer sent at least one certificate
  bool usable() const { return leaf_ != nullptr; }
  const std::string& error() const { return error_; }

  X509* leaf() const { return leaf_.get(); }
  STACK_OF(X509) * intermediates() const { return intermediates_; }

 private:
  bool presented_ = false;
  X509Ptr leaf_{nullptr, X509_free};
  STACK_OF(X509) * intermediates_ = nullptr;
  std::string error_;
};

// What a verified leaf certificate says about its holder (Subject CN and O, as Go reads them:
// the last CN, every O in order).
struct CertificateSubject {
  std::string common_name;
  std::vector<std::string> organizations;
};

struct ChainVerification {
  bool verified = false;
  std::string error;  // why not, for logs
  CertificateSubject subject;
};

// Verifies client certificate chains against one CA bundle the way upstream's x509
// authenticator does: the bundle's certificates are the trust anchors (also when not
// self-signed), intermediates come from the rest of the peer's chain, every certificate must be
// valid now, and the chain must allow extended key usage clientAuth. Thread-safe.
class X509Verifier {
 public:
  // Throws std::invalid_argument when the bundle holds no certificate.
  explicit X509Verifier(const std::string& ca_bundle_pem);
  ~X509Verifier();
  X509Verifier(const X509Verifier&) = delete;
  X509Verifier& operator=(const X509Verifier&) = delete;

  ChainVerification verify(const PeerChain& chain) const;

 private:
  X509_STORE* store_;
};

}  // namespace metrics_adapter::auth
