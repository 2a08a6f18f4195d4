#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "net/tls_client_context.h"
#include "unit/net/test_certificates.h"
#include "unit/net/test_support.h"

namespace metrics_adapter::net {
namespace {

using boost::asio::ssl::context;

// Whether the context's trust store accepts `cert_pem` (chain and validity, not the host name).
bool trusts(context& tls, const std::string& cert_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(cert_pem.data(), -1), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> verify(X509_STORE_CTX_new(),
                                                                         X509_STORE_CTX_free);
  X509_STORE_CTX_init(verify.get(), SSL_CTX_get_cert_store(tls.native_handle()), cert.get(),
                      nullptr);
  return X509_verify_cert(verify.get()) == 1;
}

class TlsClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new testing::TestPki(testing::makeTestPki());
    other_ = new testing::TestPki(testing::makeTestPki());
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete other_;
  }
  std::string write(const std::string& name, const std::string& content) {
    return dir_.write(name, content);
  }

  // The context as cpprestsdk hands it over: something is trusted already.
  static std::unique_ptr<context> preloadedWith(const std::string& ca_pem) {
    auto tls = std::make_unique<context>(context::tls_client);
    tls->add_certificate_authority(boost::asio::buffer(ca_pem));
    return tls;
  }

  static inline testing::TestPki* pki_ = nullptr;
  static inline testing::TestPki* other_ = nullptr;
  testing::TempDir dir_;
};

TEST_F(TlsClientTest, CaFromFileOrDataIsTrusted) {
  for (const bool from_file : {true, false}) {
    TlsClientSettings settings;
    settings.ca.name = "ca";
    if (from_file) {
      settings.ca.file = write("ca.pem", pki_->ca_cert);
    } else {
      settings.ca.data = pki_->ca_cert;
    }
    EXPECT_NO_THROW(validateTlsSettings(settings));
    context tls(context::tls_client);
    configureTlsContext(tls, settings);
    EXPECT_TRUE(trusts(tls, pki_->server_cert)) << from_file;
    EXPECT_FALSE(trusts(tls, other_->server_cert)) << from_file;
  }
}

TEST_F(TlsClientTest, ReplacingTheRootsDropsEarlierTrustAddingKeepsIt) {
  TlsClientSettings settings;
  settings.ca = {"", pki_->ca_cert, "ca"};

  settings.ca_replaces_system_roots = true;
  auto replaced = preloadedWith(other_->ca_cert);
  configureTlsContext(*replaced, settings);
  EXPECT_TRUE(trusts(*replaced, pki_->server_cert));
  EXPECT_FALSE(trusts(*replaced, other_->server_cert));

  settings.ca_replaces_system_roots = false;
  auto added = preloadedWith(other_->ca_cert);
  configureTlsContext(*added, settings);
  EXPECT_TRUE(trusts(*added, pki_->server_cert));
  EXPECT_TRUE(trusts(*added, other_->server_cert));
}

TEST_F(TlsClientTest, WithoutACaTheEarlierTrustStays) {
  TlsClientSettings settings;
  settings.ca_replaces_system_roots = true;  // only replaces when a CA is given
  auto tls = preloadedWith(other_->ca_cert);
  configureTlsContext(*tls, settings);
  EXPECT_TRUE(trusts(*tls, other_->server_cert));
}

TEST_F(TlsClientTest, UnusableInputsAreRejectedByName) {
  struct Case {
    const char* label;
    TlsClientSettings settings;
    std::string expected;  // start of the message
  };
  const std::string missing = dir_.file("missing.pem");
  const Case cases[] = {
      {"not PEM",
       {{"", "not a certificate", "the-ca"}, {}, {}, true},
       "the-ca: cannot use the PEM data: "},
      {"missing file",
       {{missing, "", "the-ca"}, {}, {}, false},
       "the-ca: cannot use " + missing + ": "},
      {"key as certificate",
       {{}, {"", pki_->client_key, "the-cert"}, {"", pki_->client_key, "the-key"}, false},
       "the-cert: cannot use the PEM data: "},
      {"mismatched key",
       {{}, {"", pki_->client_cert, "the-cert"}, {"", other_->client_key, "the-key"}, false},
       "the-key: cannot use the PEM data: "},
      {"certificate without key",
       {{}, {"", pki_->client_cert, "the-cert"}, {"", "", "the-key"}, false},
       "the-cert and the-key must be set together"},
  };
  for (const auto& c : cases) {
    try {
      validateTlsSettings(c.settings);
      ADD_FAILURE() << c.label << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).substr(0, c.expected.size()), c.expected) << c.label;
    }
  }
}

TEST_F(TlsClientTest, ClientCertificateFromFilesOrData) {
  TlsClientSettings from_files;
  from_files.client_cert = {write("cert.pem", pki_->client_cert), "", "cert"};
  from_files.client_key = {write("key.pem", pki_->client_key), "", "key"};
  TlsClientSettings from_data;
  from_data.client_cert = {"", pki_->client_cert, "cert"};
  from_data.client_key = {"", pki_->client_key, "key"};
  for (const auto* settings : {&from_files, &from_data}) {
    EXPECT_NO_THROW(validateTlsSettings(*settings));
    context tls(context::tls_client);
    configureTlsContext(tls, *settings);
    EXPECT_NE(SSL_CTX_get0_certificate(tls.native_handle()), nullptr);
  }
}

}  // namespace
}  // namespace metrics_adapter::net
