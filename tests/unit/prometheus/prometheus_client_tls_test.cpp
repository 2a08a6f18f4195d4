#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "metrics_adapter/prometheus/prometheus_client.h"

namespace metrics_adapter::prometheus {
namespace {

namespace fs = std::filesystem;
namespace ssl = boost::asio::ssl;
using boost::asio::ip::tcp;

const std::string kScalarAnswer =
    R"({"status":"success","data":{"resultType":"scalar","result":[1,"7"]}})";

struct KeyAndCertificate {
  std::string key_pem;
  std::string cert_pem;
};

std::string drain(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

// A self-signed P-256 certificate for 127.0.0.1, valid for an hour either side of now. It serves
// as the server's certificate, as the CA that trusts it, and as the client certificate.
KeyAndCertificate makeSelfSigned() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, cert, cert, nullptr, nullptr, 0);
  for (const auto& [nid, value] :
       {std::pair{NID_subject_alt_name, "IP:127.0.0.1"}, {NID_basic_constraints, "CA:TRUE"}}) {
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
    X509_add_ext(cert, extension, -1);
    X509_EXTENSION_free(extension);
  }
  X509_sign(cert, key, EVP_sha256());

  KeyAndCertificate out;
  BIO* key_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(key_bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  out.key_pem = drain(key_bio);
  BIO_free(key_bio);
  BIO* cert_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cert_bio, cert);
  out.cert_pem = drain(cert_bio);
  BIO_free(cert_bio);
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

// Answers every request with kScalarAnswer over TLS, one connection at a time.
class TlsFakePrometheus {
 public:
  TlsFakePrometheus(const KeyAndCertificate& identity, bool require_client_certificate)
      : context_(ssl::context::tls_server),
        acceptor_(io_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)) {
    context_.use_certificate_chain(boost::asio::buffer(identity.cert_pem));
    context_.use_private_key(boost::asio::buffer(identity.key_pem), ssl::context::pem);
    if (require_client_certificate) {
      context_.add_certificate_authority(boost::asio::buffer(identity.cert_pem));
      context_.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~TlsFakePrometheus() {
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    thread_.join();
  }
  std::string url() const {
    return "https://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }

 private:
  void serve() {
    for (;;) {
      tcp::socket socket(io_);
      boost::system::error_code error;
      acceptor_.accept(socket, error);
      if (error) return;
      ssl::stream<tcp::socket&> stream(socket, context_);
      stream.handshake(ssl::stream_base::server, error);
      if (error) continue;  // the client refused us, or we refused it
      boost::beast::flat_buffer buffer;
      boost::beast::http::request<boost::beast::http::string_body> request;
      boost::beast::http::read(stream, buffer, request, error);
      if (error) continue;
      const std::string reply =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
          "Content-Length: " +
          std::to_string(kScalarAnswer.size()) + "\r\n\r\n" + kScalarAnswer;
      boost::asio::write(stream, boost::asio::buffer(reply), error);
      // No TLS close_notify exchange: the client knows the length and closes on its own.
    }
  }

  boost::asio::io_context io_;
  ssl::context context_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

class PrometheusClientTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    identity_ = new KeyAndCertificate(makeSelfSigned());
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("ma-prometheus-tls-" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    std::ofstream(*dir_ / "cert.pem") << identity_->cert_pem;
    std::ofstream(*dir_ / "key.pem") << identity_->key_pem;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete identity_;
  }
  static std::string file(const char* name) { return (*dir_ / name).string(); }

  static PrometheusClientOptions optionsFor(const TlsFakePrometheus& server) {
    PrometheusClientOptions options;
    options.url = server.url();
    options.client_timeout = std::chrono::seconds(10);
    return options;
  }

  static inline KeyAndCertificate* identity_ = nullptr;
  static inline fs::path* dir_ = nullptr;
};

const Clock::time_point kTlsAt{std::chrono::seconds(1700000000)};

TEST_F(PrometheusClientTlsTest, CaFileIsTrustedInAdditionToTheSystemRoots) {
  TlsFakePrometheus server(*identity_, /*require_client_certificate=*/false);
  PrometheusClientOptions options = optionsFor(server);
  options.ca_file = file("cert.pem");
  PrometheusClient client(options);
  const QueryResult result = client.query("7", kTlsAt, std::chrono::seconds(10));
  ASSERT_EQ(result.samples.size(), 1u);
  EXPECT_EQ(result.samples[0].value, 7);
}

TEST_F(PrometheusClientTlsTest, UntrustedServerIsUnreachableNamingTls) {
  TlsFakePrometheus server(*identity_, false);
  PrometheusClient client(optionsFor(server));
  try {
    client.query("7", kTlsAt, std::chrono::seconds(10));
    FAIL() << "an untrusted certificate was accepted";
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), PrometheusError::Kind::kUnreachable);
    EXPECT_NE(std::string(e.what()).find("TLS handshake failed"), std::string::npos) << e.what();
  }
}

TEST_F(PrometheusClientTlsTest, ClientCertificateIsPresentedWhenConfigured) {
  TlsFakePrometheus server(*identity_, /*require_client_certificate=*/true);
  PrometheusClientOptions without = optionsFor(server);
  without.ca_file = file("cert.pem");
  PrometheusClient anonymous(without);
  EXPECT_THROW(anonymous.query("7", kTlsAt, std::chrono::seconds(10)), PrometheusError);

  PrometheusClientOptions with = without;
  with.client_cert_file = file("cert.pem");
  with.client_key_file = file("key.pem");
  PrometheusClient client(with);
  EXPECT_EQ(client.query("7", kTlsAt, std::chrono::seconds(10)).samples.at(0).value, 7);
}

TEST_F(PrometheusClientTlsTest, InlinePemDataServesAsCaAndClientCertificate) {
  TlsFakePrometheus server(*identity_, /*require_client_certificate=*/true);
  PrometheusClientOptions options = optionsFor(server);
  options.ca_data = identity_->cert_pem;
  options.ca_replaces_system_roots = true;
  options.client_cert_data = identity_->cert_pem;
  options.client_key_data = identity_->key_pem;
  PrometheusClient client(options);
  EXPECT_EQ(client.query("7", kTlsAt, std::chrono::seconds(10)).samples.at(0).value, 7);
}

TEST_F(PrometheusClientTlsTest, InsecureSkipTlsVerifyAcceptsAnUntrustedServer) {
  TlsFakePrometheus server(*identity_, false);
  PrometheusClientOptions options = optionsFor(server);
  options.insecure_skip_tls_verify = true;
  PrometheusClient client(options);
  EXPECT_EQ(client.query("7", kTlsAt, std::chrono::seconds(10)).samples.at(0).value, 7);
}

TEST_F(PrometheusClientTlsTest, MismatchedOrUnreadableFilesAreRejectedAtStartup) {
  PrometheusClientOptions options;
  options.url = "https://127.0.0.1:1";
  options.ca_file = file("key.pem");  // not a certificate
  EXPECT_THROW(PrometheusClient{options}, std::invalid_argument);
  options.ca_file = "";
  options.client_cert_file = file("cert.pem");
  options.client_key_file = file("cert.pem");  // not a key
  try {
    PrometheusClient client(options);
    FAIL() << "accepted a certificate as key";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--prometheus-client-tls-key-file"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace metrics_adapter::prometheus
