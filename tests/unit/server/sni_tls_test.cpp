#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "metrics_adapter/server/https_server.h"
#include "server/certificate.h"
#include "server/self_signed.h"
#include "test_support.h"

namespace metrics_adapter::server {
namespace {
using namespace testing;

// A server with a default pair and SNI pairs, each written to files in a temporary directory.
class SniTlsTest : public ::testing::Test {
 protected:
  SniTlsTest() : options_(testOptions(dir_)) {
    options_.cert_reload_interval = std::chrono::milliseconds(0);  // check on every accept
    default_serial_ = writePair("default", "default.example.com", {"default.example.com"});
    options_.tls_cert_file = dir_.file("default.crt");
    options_.tls_key_file = dir_.file("default.key");
  }

  // Writes <stem>.crt and <stem>.key; returns the certificate's serial.
  std::string writePair(const std::string& stem, const std::string& common_name,
                        std::vector<std::string> dns_names,
                        std::vector<std::string> ip_addresses = {}) {
    SelfSignedSpec spec;
    spec.common_name = common_name;
    spec.dns_names = std::move(dns_names);
    spec.ip_addresses = std::move(ip_addresses);
    const CertificatePair pair = generateSelfSigned(spec);
    writeCertificatePair(pair, dir_.file(stem + ".crt"), dir_.file(stem + ".key"));
    return serialHex(pair.chain.front().get());
  }

  void addSni(const std::string& stem, std::vector<std::string> names = {}) {
    options_.sni_cert_keys.push_back({.cert_file = dir_.file(stem + ".crt"),
                                      .key_file = dir_.file(stem + ".key"),
                                      .names = std::move(names)});
  }

  void start() {
    server_ = startServer(options_, [](const HttpRequest&) { return textResponse("ok"); });
  }

  std::string startError() {
    return startFailure([this] { start(); });
  }

  // The serial of the certificate served to a client sending `server_name` ("": no SNI).
  std::string servedSerial(const std::string& server_name, int version = 0) {
    ClientConfig config;
    config.server_name = server_name;
    config.min_version = version;
    config.max_version = version;
    TlsClient client(config);
    if (const beast::error_code ec = client.connect(server_->port())) {
      ADD_FAILURE() << server_name << ": " << ec.message();
      return {};
    }
    EXPECT_EQ(client.get("/").body(), "ok");
    return client.peerSerial();
  }

  TempDir dir_;
  ServerOptions options_;
  std::string default_serial_;
  std::unique_ptr<HttpsServer> server_;
};

TEST_F(SniTlsTest, EachNameGetsItsCertificateAndOthersTheDefault) {
  const std::string extracted = writePair("extracted", "api.example.com", {"*.apps.example.com"});
  const std::string explicit_names = writePair("explicit", "ignored", {"ignored.example.com"});
  addSni("extracted");
  addSni("explicit", {"metrics.example.com", "*.example.com"});
  start();
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    EXPECT_EQ(servedSerial("api.example.com", version), extracted) << version;
    EXPECT_EQ(servedSerial("x.apps.example.com", version), extracted) << version;
    EXPECT_EQ(servedSerial("METRICS.example.com", version), explicit_names) << version;
    EXPECT_EQ(servedSerial("other.example.com", version), explicit_names) << version;
    EXPECT_EQ(servedSerial("ignored.example.com", version), explicit_names) << version;  // wildcard
    EXPECT_EQ(servedSerial("unknown.test", version), default_serial_) << version;
    EXPECT_EQ(servedSerial("", version), default_serial_) << version;
  }
}

TEST_F(SniTlsTest, SelfSignedDefaultStillServesUnmatchedNames) {
  options_.tls_cert_file.clear();
  options_.tls_key_file.clear();
  const std::string named = writePair("named", "named.example.com", {"named.example.com"});
  addSni("named");
  start();
  EXPECT_EQ(servedSerial("named.example.com"), named);
  const CertificatePair self_signed = loadCertificatePair(options_.cert_dir + "/apiserver.crt",
                                                          options_.cert_dir + "/apiserver.key");
  EXPECT_EQ(servedSerial("localhost"), serialHex(self_signed.chain.front().get()));
}

TEST_F(SniTlsTest, IpPatternServesClientsWithoutSniReachingThatAddress) {
  const std::string by_ip = writePair("by-ip", "by-ip", {}, {"127.0.0.1"});
  addSni("by-ip", {"127.0.0.1"});
  start();
  EXPECT_EQ(servedSerial(""), by_ip);  // the client connects to 127.0.0.1
  EXPECT_EQ(servedSerial("unknown.test"), default_serial_);
}

TEST_F(SniTlsTest, IpSansAreNotExtracted) {
  writePair("ip-san", "ip-san", {}, {"127.0.0.1"});
  addSni("ip-san");
  start();
  EXPECT_EQ(servedSerial(""), default_serial_);
}

TEST_F(SniTlsTest, RotatedSniPairIsServedToNewConnections) {
  writePair("named", "named.example.com", {"named.example.com"});
  addSni("named");
  start();
  const std::string second = writePair("named", "named.example.com", {"named.example.com"});
  EXPECT_TRUE(eventually([&] { return servedSerial("named.example.com") == second; }));
  // A broken rotation keeps the previous certificate in service, and the default keeps rotating.
  writePair("other", "other", {"other"});
  std::filesystem::copy_file(dir_.file("other.key"), dir_.file("named.key"),
                             std::filesystem::copy_options::overwrite_existing);
  const std::string new_default = writePair("default", "default.example.com", {});
  EXPECT_TRUE(eventually([&] { return servedSerial("unknown.test") == new_default; }));
  EXPECT_EQ(servedSerial("named.example.com"), second);
}

TEST_F(SniTlsTest, BadPairsFailStartNamingTheFlagAndValue) {
  writePair("a", "a", {"a"});
  writePair("b", "b", {"b"});
  struct Case {
    SniCertKey cert_key;
    std::string problem;
  };
  const Case cases[] = {
      {{.cert_file = dir_.file("a.crt"), .key_file = dir_.file("b.key"), .names = {"a"}},
       "does not match"},
      {{.cert_file = dir_.file("absent.crt"), .key_file = dir_.file("a.key"), .names = {}},
       "cannot open"},
      {{.cert_file = dir_.file("a.crt"), .key_file = dir_.file("absent.key"), .names = {}},
       "cannot open"},
  };
  for (const Case& c : cases) {
    options_.sni_cert_keys = {c.cert_key};
    const std::string error = startError();
    const std::string flag = "--tls-sni-cert-key=\"" + formatSniCertKey(c.cert_key) + "\": ";
    EXPECT_EQ(error.find(flag), 0u) << error;
    EXPECT_NE(error.find(c.problem), std::string::npos) << error;
    EXPECT_THROW(checkServingCertificate(options_), std::runtime_error);
  }
}

}  // namespace
}  // namespace metrics_adapter::server
