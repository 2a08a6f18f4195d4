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

// A certificate for `key` named `common_name`, signed by `issuer_key` as `issuer` (self-signed
// when `issuer` is null), carrying the given X509v3 extensions ({nid, "value"}).
inline Certificate issue(const std::string& common_name, EVP_PKEY* key, X509* issuer,
                         EVP_PKEY* issuer_key,
                         const std::vector<std::pair<int, std::string>>& extensions) {
  static std::atomic<long> serial{1};
  Certificate certificate(X509_new(), X509_free);
  X509* cert = certificate.get();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509* signer = issuer != nullptr ? issuer : cert;
  X509_set_issuer_name(cert, X509_get_subject_name(signer));
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, signer, cert, nullptr, nullptr, 0);
  for (const auto& [nid, value] : extensions) {
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
    X509_add_ext(cert, extension, -1);
    X509_EXTENSION_free(extension);
  }
  X509_sign(cert, issuer_key, EVP_sha256());
  return certificate;
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

}  // namespace metrics_adapter::net::testing
