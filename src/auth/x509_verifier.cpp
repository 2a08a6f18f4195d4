#include "auth/x509_verifier.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>

#include "metrics_adapter/auth/authenticator.h"

namespace metrics_adapter::auth {
namespace {

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;
using StoreContextPtr = std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)>;

// Certificates are never encrypted; refusing keeps OpenSSL from prompting on a terminal.
int refusePassword(char* /*buffer*/, int /*size*/, int /*rwflag*/, void* /*user*/) { return 0; }

bool isBlank(const std::string& text) {
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isspace(c) != 0; });
}

// PEM reading ends with "no start line" once the input is used up; any other error means a
// corrupt block.
bool endedCleanly() {
  const unsigned long last = ERR_peek_last_error();
  return last == 0 ||
         (ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE);
}

std::string utf8(const ASN1_STRING* value) {
  unsigned char* out = nullptr;
  const int length = ASN1_STRING_to_UTF8(&out, value);
  if (length < 0) return {};
  std::string text(reinterpret_cast<const char*>(out), static_cast<std::size_t>(length));
  OPENSSL_free(out);
  return text;
}

CertificateSubject subjectOf(X509* certificate) {
  CertificateSubject subject;
  const X509_NAME* name = X509_get_subject_name(certificate);
  const int count = X509_NAME_entry_count(name);
  for (int i = 0; i < count; ++i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(name, i);
    const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    if (nid == NID_commonName) {
      subject.common_name = utf8(X509_NAME_ENTRY_get_data(entry));
    } else if (nid == NID_organizationName) {
      subject.organizations.push_back(utf8(X509_NAME_ENTRY_get_data(entry)));
    }
  }
  return subject;
}

}  // namespace

void checkCaBundle(const std::string& pem) {
  if (parseCertificateBundle(pem).empty()) throw std::invalid_argument("holds no certificate");
}

std::vector<X509Ptr> parseCertificateBundle(const std::string& pem) {
  std::vector<X509Ptr> certificates;
  if (isBlank(pem)) return certificates;
  if (pem.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::invalid_argument("PEM bundle too large");
  }
  ERR_clear_error();
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  if (!bio) throw std::runtime_error("out of memory reading a PEM bundle");
  while (X509* certificate = PEM_read_bio_X509(bio.get(), nullptr, refusePassword, nullptr)) {
    certificates.emplace_back(certificate, X509_free);
  }
  const bool clean = endedCleanly();
  ERR_clear_error();
  if (!clean) {
    throw std::invalid_argument("corrupt PEM certificate after " +
                                std::to_string(certificates.size()) + " good ones");
  }
  if (certificates.empty()) throw std::invalid_argument("no PEM certificate found");
  return certificates;
}

PeerChain::PeerChain(const std::vector<std::string>& pem) : presented_(!pem.empty()) {
  if (!presented_) return;
  if (pem.size() > kMaxCertificates) {
    error_ = "client certificate chain longer than " + std::to_string(kMaxCertificates);
    return;
  }
  std::vector<X509Ptr> parsed;
  for (std::size_t i = 0; i < pem.size(); ++i) {
    if (pem[i].size() > kMaxPemBytes) {
      error_ = "client certificate " + std::to_string(i) + " is too large";
      return;
    }
    ERR_clear_error();
    BioPtr bio(BIO_new_mem_buf(pem[i].data(), static_cast<int>(pem[i].size())), BIO_free);
    X509* certificate =
        bio ? PEM_read_bio_X509(bio.get(), nullptr, refusePassword, nullptr) : nullptr;
    ERR_clear_error();
    if (certificate == nullptr) {
      error_ = "client certificate " + std::to_string(i) + " is not a PEM certificate";
      return;
    }
    parsed.emplace_back(certificate, X509_free);
  }
  intermediates_ = sk_X509_new_null();
  if (intermediates_ == nullptr) {
    error_ = "out of memory";
    return;
  }
  for (std::size_t i = 1; i < parsed.size(); ++i) {
    if (sk_X509_push(intermediates_, parsed[i].get()) == 0) {
      error_ = "out of memory";
      return;
    }
    (void)parsed[i].release();  // owned by the stack now
  }
  leaf_ = std::move(parsed.front());
}

PeerChain::~PeerChain() { sk_X509_pop_free(intermediates_, X509_free); }

X509Verifier::X509Verifier(const std::string& ca_bundle_pem) : store_(X509_STORE_new()) {
  if (store_ == nullptr) throw std::runtime_error("out of memory creating an X509 store");
  try {
    const std::vector<X509Ptr> anchors = parseCertificateBundle(ca_bundle_pem);
    if (anchors.empty()) throw std::invalid_argument("no PEM certificate found");
    for (const X509Ptr& anchor : anchors) {
      // A bundle merged across API servers may repeat a certificate; that is not an error.
      X509_STORE_add_cert(store_, anchor.get());
    }
    ERR_clear_error();
    // Go treats every certificate of the pool as a trust anchor, self-signed or not.
    X509_STORE_set_flags(store_, X509_V_FLAG_PARTIAL_CHAIN);
    X509_STORE_set_purpose(store_, X509_PURPOSE_SSL_CLIENT);
    X509_STORE_set_depth(store_, static_cast<int>(PeerChain::kMaxCertificates));
  } catch (...) {
    X509_STORE_free(store_);
    throw;
  }
}

X509Verifier::~X509Verifier() { X509_STORE_free(store_); }

ChainVerification X509Verifier::verify(const PeerChain& chain) const {
  ChainVerification result;
  if (!chain.usable()) {
    result.error = chain.presented() ? chain.error() : "no client certificate";
    return result;
  }
  StoreContextPtr context(X509_STORE_CTX_new(), X509_STORE_CTX_free);
  if (!context ||
      X509_STORE_CTX_init(context.get(), store_, chain.leaf(), chain.intermediates()) != 1) {
    ERR_clear_error();
    result.error = "cannot set up certificate verification";
    return result;
  }
  X509_STORE_CTX_set_purpose(context.get(), X509_PURPOSE_SSL_CLIENT);
  const int verified = X509_verify_cert(context.get());
  const int code = X509_STORE_CTX_get_error(context.get());
  ERR_clear_error();
  if (verified != 1) {
    result.error =
        std::string("certificate verification failed: ") + X509_verify_cert_error_string(code);
    return result;
  }
  result.verified = true;
  result.subject = subjectOf(chain.leaf());
  return result;
}

}  // namespace metrics_adapter::auth
