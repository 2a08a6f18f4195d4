#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace metrics_adapter::net::testing {

// A private CA with a server certificate for 127.0.0.1 and a client certificate, all PEM, all
// valid for an hour either side of now. Each call makes a new, unrelated CA.
struct TestPki {
  std::string ca_cert;
  std::string server_cert;
  std::string server_key;
  std::string client_cert;  // subject CN=<client_name>
  std::string client_key;
};

namespace pki_detail {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;

inline Key newKey() {
  return Key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"), EVP_PKEY_free);
}

template <typename Write>
std::string toPem(Write&& write) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  write(bio.get());
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

inline std::string keyPem(EVP_PKEY* key) {
  return toPem([key](BIO* bio) {
    PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  });
}

inline std::string certificatePem(X509* certificate) {
  return toPem([certificate](BIO* bio) { PEM_write_bio_X509(bio, certificate); });
}

// What a test certificate says: subject, extensions ({nid, "value"}) and a validity window in
// seconds relative to now.
struct CertificateSpec {
  std::string common_name;
  std::vector<std::string> organizations;  // Subject O values, in order
  std::vector<std::pair<int, std::string>> extensions;
  long not_before_seconds = -3600;
  long not_after_seconds = 3600;
};

// A certificate for `key` as `spec` says, signed by `issuer_key` as `issuer` (self-signed when
// `issuer` is null).
inline Certificate issue(const CertificateSpec& spec, EVP_PKEY* key, X509* issuer,
                         EVP_PKEY* issuer_key) {
  static std::atomic<long> serial{1};
  Certificate certificate(X509_new(), X509_free);
  X509* cert = certificate.get();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert), spec.not_before_seconds);
  X509_gmtime_adj(X509_getm_notAfter(cert), spec.not_after_seconds);
  X509_set_pubkey(cert, key);
  X509_NAME* subject = X509_get_subject_name(cert);
  for (const std::string& organization : spec.organizations) {
    X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(organization.c_str()), -1, -1,
                               0);
  }
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(spec.common_name.c_str()), -1,
                             -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert;
  X509_set_issuer_name(cert, X509_get_subject_name(signer));
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, signer, cert, nullptr, nullptr, 0);
  for (const auto& [nid, value] : spec.extensions) {
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
    X509_add_ext(cert, extension, -1);
    X509_EXTENSION_free(extension);
  }
  X509_sign(cert, issuer_key, EVP_sha256());
  return certificate;
}

// A certificate for `key` named `common_name`, signed by `issuer_key` as `issuer` (self-signed
// when `issuer` is null), carrying the given X509v3 extensions ({nid, "value"}).
inline Certificate issue(const std::string& common_name, EVP_PKEY* key, X509* issuer,
                         EVP_PKEY* issuer_key,
                         const std::vector<std::pair<int, std::string>>& extensions) {
  return issue(CertificateSpec{common_name, {}, extensions}, key, issuer, issuer_key);
}

}  // namespace pki_detail

inline TestPki makeTestPki(const std::string& client_name = "test-client") {
  using namespace pki_detail;
  static std::atomic<int> generation{0};
  const Key ca_key = newKey();
  const Certificate ca =
      issue("test-ca-" + std::to_string(++generation), ca_key.get(), nullptr, ca_key.get(),
            {{NID_basic_constraints, "critical,CA:TRUE"}, {NID_key_usage, "keyCertSign"}});
  const Key server_key = newKey();
  const Certificate server =
      issue("127.0.0.1", server_key.get(), ca.get(), ca_key.get(),
            {{NID_subject_alt_name, "IP:127.0.0.1"}, {NID_ext_key_usage, "serverAuth"}});
  const Key client_key = newKey();
  const Certificate client = issue(client_name, client_key.get(), ca.get(), ca_key.get(),
                                   {{NID_ext_key_usage, "clientAuth"}});
  return TestPki{certificatePem(ca.get()), certificatePem(server.get()), keyPem(server_key.get()),
                 certificatePem(client.get()), keyPem(client_key.get())};
}

// A certificate authority for tests: a self-signed root, or an intermediate signed by another.
struct TestAuthority {
  pki_detail::Key key{nullptr, EVP_PKEY_free};
  pki_detail::Certificate certificate{nullptr, X509_free};

  std::string pem() const { return pki_detail::certificatePem(certificate.get()); }
};

inline TestAuthority makeAuthority(const std::string& name, const TestAuthority* parent = nullptr) {
  using namespace pki_detail;
  TestAuthority authority;
  authority.key = newKey();
  authority.certificate =
      issue(name, authority.key.get(), parent ? parent->certificate.get() : nullptr,
            parent ? parent->key.get() : authority.key.get(),
            {{NID_basic_constraints, "critical,CA:TRUE"},
             {NID_key_usage, "critical,keyCertSign,cRLSign"}});
  return authority;
}

// A client certificate issued by `authority`, as PEM. The spec's extensions default to none:
// pass {NID_ext_key_usage, "clientAuth"} for a usual client certificate.
inline std::string issueCertificate(const TestAuthority& authority,
                                    const pki_detail::CertificateSpec& spec) {
  using namespace pki_detail;
  const Key key = newKey();
  const Certificate certificate =
      issue(spec, key.get(), authority.certificate.get(), authority.key.get());
  return certificatePem(certificate.get());
}

}  // namespace metrics_adapter::net::testing
