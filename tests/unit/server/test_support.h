#pragma once

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "metrics_adapter/server/https_server.h"
#include "server/certificate.h"
#include "server/self_signed.h"

namespace metrics_adapter::server::testing {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ma-server-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(std::string_view name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string serialHex(X509* certificate) {
  BIGNUM* number = ASN1_INTEGER_to_BN(X509_get_serialNumber(certificate), nullptr);
  char* hex = BN_bn2hex(number);
  std::string text(hex);
  OPENSSL_free(hex);
  BN_free(number);
  return text;
}

struct ClientConfig {
  int min_version = 0;  // 0: OpenSSL's default
  int max_version = 0;
  bool allow_legacy_protocols = false;  // security level 0, so TLS 1.0/1.1 can be offered
  std::string cipher_list;              // TLS 1.2 ciphers offered; empty: OpenSSL's default
  std::vector<std::string> alpn;
  const CertificatePair* client_certificate = nullptr;
  std::string trusted_certificate_file;  // when set, the server must verify against it...
  std::string expected_ip;               // ...and match this IP address SAN
  std::string server_name;               // sent as SNI when set
};

// A blocking HTTPS/1.1 client for tests. Every operation gives up after kTimeout, so a server
// that never answers fails the test instead of hanging it. Defined in tls_client.cpp, so Beast's
// client templates are compiled once rather than in every test file.
class TlsClient {
 public:
  static constexpr std::chrono::seconds kTimeout{10};

  explicit TlsClient(const ClientConfig& config = {});

  // TCP connect to 127.0.0.1:port; the error of the connect or of the TLS handshake.
  beast::error_code connect(std::uint16_t port);
  beast::error_code handshake();
  beast::error_code writeRaw(std::string_view bytes);
  beast::error_code send(Request request);
  std::pair<beast::error_code, Response> read(bool head_request = false);
  // Sends the request and reads the answer; throws on any transport error.
  Response roundTrip(Request request);
  Response get(std::string target);
  // Reads until the server closes the connection or kTimeout passes; returns the error that ended
  // the wait (beast::error::timeout when the server kept the connection open).
  beast::error_code waitForClose();
  std::string alpnSelected();
  std::string peerSerial();
  std::string cipher();

 private:
  beast::tcp_stream& tcp() { return stream_->next_layer(); }
  void run();

  net::io_context io_context_;
  net::ssl::context context_;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> stream_;
  beast::flat_buffer buffer_;
};

// Options for a server on 127.0.0.1, an ephemeral port and a self-signed certificate in `dir`.
inline ServerOptions testOptions(const TempDir& dir) {
  ServerOptions options;
  options.bind_address = "127.0.0.1";
  options.port = 0;
  options.cert_dir = dir.file("certs");
  options.io_threads = 1;
  options.worker_threads = 2;
  return options;
}

inline HttpResponse textResponse(std::string body) {
  HttpResponse response;
  response.content_type = "text/plain";
  response.body = std::move(body);
  return response;
}

// Records every request a handler sees. Thread-safe.
class RequestLog {
 public:
  void add(const HttpRequest& request) {
    std::lock_guard lock(mutex_);
    requests_.push_back(request);
  }
  std::vector<HttpRequest> all() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<HttpRequest> requests_;
};

// Polls `condition` until it holds or `timeout` passes; returns its last value.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace metrics_adapter::server::testing

namespace metrics_adapter::server::testing {

inline std::unique_ptr<HttpsServer> startServer(
    ServerOptions options, RequestHandler handler,
    std::shared_ptr<ExchangeObserver> observer = nullptr) {
  auto server =
      std::make_unique<HttpsServer>(std::move(options), std::move(handler), std::move(observer));
  server->start();
  return server;
}

}  // namespace metrics_adapter::server::testing

namespace metrics_adapter::server::testing {

// A one-way gate: wait() blocks until open() was called. open() may be called repeatedly.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    opened_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

// The message of the std::runtime_error `start` throws; a test failure (and "") when it starts.
inline std::string startFailure(const std::function<void()>& start) {
  try {
    start();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "start() succeeded";
  return {};
}

}  // namespace metrics_adapter::server::testing
