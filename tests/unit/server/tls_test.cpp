#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "metrics_adapter/server/https_server.h"
#include "server/certificate.h"
#include "server/self_signed.h"
#include "test_support.h"

namespace metrics_adapter::server {
namespace {
using namespace testing;

// The handshake failed because the server sent a protocol_version alert, i.e. the ClientHello
// reached the server and the server refused the version (rather than the client giving up).
bool refusedForProtocolVersion(const beast::error_code& ec) {
  return ec && ERR_GET_REASON(static_cast<unsigned long>(ec.value())) ==
                   SSL_R_TLSV1_ALERT_PROTOCOL_VERSION;
}

ClientConfig onlyVersion(int version) {
  ClientConfig config;
  config.min_version = version;
  config.max_version = version;
  return config;
}

ClientConfig verifying(const std::string& trusted_certificate_file, const std::string& ip) {
  ClientConfig config;
  config.trusted_certificate_file = trusted_certificate_file;
  config.expected_ip = ip;
  return config;
}

class TlsTest : public ::testing::Test {
 protected:
  TlsTest() : options_(testOptions(dir_)) {}

  void start() {
    server_ = startServer(options_, [this](const HttpRequest& request) {
      log_.add(request);
      return textResponse("ok");
    });
  }

  std::string startError() {
    return startFailure([this] { start(); });
  }

  TempDir dir_;
  ServerOptions options_;
  RequestLog log_;
  std::unique_ptr<HttpsServer> server_;
};

TEST_F(TlsTest, Tls11IsRefused) {
  start();
  ClientConfig config;
  config.min_version = TLS1_1_VERSION;
  config.max_version = TLS1_1_VERSION;
  config.allow_legacy_protocols = true;
  TlsClient client(config);
  const beast::error_code ec = client.connect(server_->port());
  EXPECT_TRUE(refusedForProtocolVersion(ec)) << ec.message();
}

TEST_F(TlsTest, Tls12And13AreAccepted) {
  start();
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    TlsClient client(onlyVersion(version));
    const beast::error_code ec = client.connect(server_->port());
    ASSERT_FALSE(ec) << version << ": " << ec.message();
    EXPECT_EQ(client.get("/").body(), "ok");
  }
}

TEST_F(TlsTest, VersionTls13RefusesTls12) {
  options_.tls_min_version = "VersionTLS13";
  start();
  TlsClient tls12(onlyVersion(TLS1_2_VERSION));
  const beast::error_code ec = tls12.connect(server_->port());
  EXPECT_TRUE(refusedForProtocolVersion(ec)) << ec.message();
  TlsClient tls13(onlyVersion(TLS1_3_VERSION));
  EXPECT_FALSE(tls13.connect(server_->port()));
}

TEST_F(TlsTest, AlpnNeverSelectsH2) {
  // docs/api-contract.md "Availability pitfalls" item 15: advertising h2 without speaking it breaks
  // Go clients.
  start();
  ClientConfig both_config;
  both_config.alpn = {"h2", "http/1.1"};
  TlsClient both(both_config);
  ASSERT_FALSE(both.connect(server_->port()));
  EXPECT_EQ(both.alpnSelected(), "http/1.1");

  ClientConfig h2_config;
  h2_config.alpn = {"h2"};
  TlsClient h2_only(h2_config);
  ASSERT_FALSE(h2_only.connect(server_->port()));
  EXPECT_EQ(h2_only.alpnSelected(), "");
}

TEST_F(TlsTest, DefaultCiphersAreForwardSecretAead) {
  start();
  ClientConfig cbc_config = onlyVersion(TLS1_2_VERSION);
  cbc_config.cipher_list = "ECDHE-ECDSA-AES128-SHA";
  TlsClient cbc(cbc_config);
  EXPECT_TRUE(cbc.connect(server_->port()));
  TlsClient gcm(onlyVersion(TLS1_2_VERSION));
  ASSERT_FALSE(gcm.connect(server_->port()));
  EXPECT_NE(gcm.cipher().find("ECDHE-ECDSA-"), std::string::npos) << gcm.cipher();
}

TEST_F(TlsTest, ConfiguredCipherSuiteIsUsed) {
  options_.tls_cipher_suites = {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"};
  start();
  TlsClient client(onlyVersion(TLS1_2_VERSION));
  ASSERT_FALSE(client.connect(server_->port()));
  EXPECT_EQ(client.cipher(), "ECDHE-ECDSA-AES256-GCM-SHA384");
}

TEST_F(TlsTest, UnknownCipherSuiteFailsStartWithItsName) {
  options_.tls_cipher_suites = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_MADE_UP"};
  const std::string error = startError();
  EXPECT_NE(error.find("TLS_MADE_UP"), std::string::npos) << error;
}

TEST_F(TlsTest, MismatchedCertificateAndKeyFailStart) {
  writeCertificatePair(generateSelfSigned({}), dir_.file("a.crt"), dir_.file("a.key"));
  writeCertificatePair(generateSelfSigned({}), dir_.file("b.crt"), dir_.file("b.key"));
  options_.tls_cert_file = dir_.file("a.crt");
  options_.tls_key_file = dir_.file("b.key");
  const std::string error = startError();
  EXPECT_NE(error.find("does not match"), std::string::npos) << error;
}

TEST_F(TlsTest, ClientCertificateIsPassedThroughAsPem) {
  start();
  SelfSignedSpec spec;
  spec.common_name = "front-proxy-client";
  spec.ip_addresses = {};
  const CertificatePair client_pair = generateSelfSigned(spec);

  ClientConfig config;
  config.client_certificate = &client_pair;
  TlsClient with_certificate(config);
  ASSERT_FALSE(with_certificate.connect(server_->port()));
  with_certificate.get("/");
  TlsClient without;
  ASSERT_FALSE(without.connect(server_->port()));
  without.get("/");

  const auto requests = log_.all();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].peer_certificates_pem,
            std::vector<std::string>{certificatePem(client_pair.chain[0].get())});
  EXPECT_TRUE(requests[1].peer_certificates_pem.empty());
}

TEST_F(TlsTest, SelfSignedCertificateVerifiesFor127001) {
  start();
  const std::string cert_file = options_.cert_dir + "/apiserver.crt";
  TlsClient matching(verifying(cert_file, "127.0.0.1"));
  EXPECT_FALSE(matching.connect(server_->port()));
  // The same check fails for an address the certificate does not name.
  TlsClient other(verifying(cert_file, "10.1.2.3"));
  EXPECT_TRUE(other.connect(server_->port()));
}

TEST_F(TlsTest, RotatedCertificateIsServedToNewConnections) {
  const std::string cert_file = dir_.file("tls.crt");
  const std::string key_file = dir_.file("tls.key");
  const CertificatePair first = generateSelfSigned({});
  writeCertificatePair(first, cert_file, key_file);
  options_.tls_cert_file = cert_file;
  options_.tls_key_file = key_file;
  options_.cert_reload_interval = std::chrono::milliseconds(0);  // check on every accept
  start();
  const auto served_serial = [&] {
    TlsClient client;
    return client.connect(server_->port()) ? std::string() : client.peerSerial();
  };
  EXPECT_EQ(served_serial(), serialHex(first.chain[0].get()));

  const CertificatePair second = generateSelfSigned({});
  writeCertificatePair(second, cert_file, key_file);
  EXPECT_TRUE(eventually([&] { return served_serial() == serialHex(second.chain[0].get()); }));

  // A broken pair keeps the previous certificate in service.
  std::ofstream(cert_file, std::ios::trunc) << "-----BEGIN CERTIFICATE-----\nbroken\n";
  EXPECT_EQ(served_serial(), serialHex(second.chain[0].get()));

  const CertificatePair third = generateSelfSigned({});
  writeCertificatePair(third, cert_file, key_file);
  EXPECT_TRUE(eventually([&] { return served_serial() == serialHex(third.chain[0].get()); }));
}

}  // namespace
}  // namespace metrics_adapter::server
