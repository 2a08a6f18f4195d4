#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cctype>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace metrics_adapter::net::testing {

// One request as the fake server received it.
struct RecordedRequest {
  std::string method;
  std::string target;  // path?query exactly as sent
  std::string body;
  std::map<std::string, std::string> headers;  // names in lower case
  // Every header line as it came, names as sent, repeated names as separate lines, in order.
  std::vector<std::pair<std::string, std::string>> header_lines;
  std::string client_certificate_subject;  // "/CN=..." over TLS when one was presented

  std::string header(const std::string& lower_case_name) const {
    const auto it = headers.find(lower_case_name);
    return it == headers.end() ? "" : it->second;
  }
  std::string path() const { return target.substr(0, target.find('?')); }
  std::string query() const {
    const auto mark = target.find('?');
    return mark == std::string::npos ? "" : target.substr(mark + 1);
  }
};

// What the fake answers to one request.
struct Reply {
  enum class Mode {
    kNormal,        // status, headers, body, close
    kHang,          // read the request, never answer
    kStallMidBody,  // announce more body than sent, send `body`, then never continue
  };
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra header lines
  std::string body;
  Mode mode = Mode::kNormal;
  // When set, the body is sent chunked: called until it returns false, each call filling `chunk`.
  std::function<bool(std::string& chunk)> chunks;
};

// The server side of TLS for the fake.
struct ServerTls {
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem;  // when set, clients must present a certificate issued by it
};

// A server on 127.0.0.1 (plain HTTP, or HTTPS with `tls`) that records requests and answers each
// with the handler's reply, one request per connection. Connections run on their own threads;
// hanging ones are released when the server is destroyed.
class FakeHttpServer {
 public:
  using Handler = std::function<Reply(const RecordedRequest&)>;

  explicit FakeHttpServer(Handler handler, std::optional<ServerTls> tls = std::nullopt)
      : handler_(std::move(handler)),
        acceptor_(io_,
                  boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)) {
    if (tls) {
      namespace ssl = boost::asio::ssl;
      tls_ = std::make_unique<ssl::context>(ssl::context::tls_server);
      tls_->use_certificate_chain(boost::asio::buffer(tls->cert_pem));
      tls_->use_private_key(boost::asio::buffer(tls->key_pem), ssl::context::pem);
      if (!tls->client_ca_pem.empty()) {
        tls_->add_certificate_authority(boost::asio::buffer(tls->client_ca_pem));
        tls_->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      }
    }
    accept_thread_ = std::thread([this] { acceptLoop(); });
  }

  ~FakeHttpServer() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      for (const int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    stopped_.notify_all();
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);  // wakes the blocking accept
    accept_thread_.join();
    std::vector<std::thread> workers;
    {
      std::lock_guard lock(mutex_);
      workers.swap(workers_);
    }
    for (auto& worker : workers) worker.join();
  }

  std::string url() const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port());
  }
  unsigned short port() const { return acceptor_.local_endpoint().port(); }

  std::vector<RecordedRequest> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void acceptLoop() {
    for (;;) {
      auto socket = std::make_shared<boost::asio::ip::tcp::socket>(io_);
      boost::system::error_code error;
      acceptor_.accept(*socket, error);
      std::lock_guard lock(mutex_);
      if (error || stopping_) return;
      open_fds_.insert(socket->native_handle());
      workers_.emplace_back([this, socket] { serve(*socket); });
    }
  }

  void serve(boost::asio::ip::tcp::socket& socket) {
    if (tls_) {
      boost::asio::ssl::stream<boost::asio::ip::tcp::socket&> stream(socket, *tls_);
      boost::system::error_code error;
      stream.handshake(boost::asio::ssl::stream_base::server, error);
      // A refused handshake (either side distrusting the other) ends the connection unrecorded.
      if (!error) exchange(stream, peerSubject(stream.native_handle()));
    } else {
      exchange(socket, "");
    }
    std::lock_guard lock(mutex_);
    open_fds_.erase(socket.native_handle());
    boost::system::error_code error;
    socket.close(error);
  }

  static std::string peerSubject(SSL* ssl) {
    X509* peer = SSL_get1_peer_certificate(ssl);
    if (peer == nullptr) return "";
    char buffer[256];
    X509_NAME_oneline(X509_get_subject_name(peer), buffer, sizeof buffer);
    X509_free(peer);
    return buffer;
  }

  template <typename Stream>
  void exchange(Stream& stream, std::string client_subject) {
    namespace http = boost::beast::http;
    boost::system::error_code error;
    boost::beast::flat_buffer buffer;
    http::request_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    http::read(stream, buffer, parser, error);
    if (error) return;
    RecordedRequest request;
    const auto& message = parser.get();
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.body = message.body();
    request.client_certificate_subject = std::move(client_subject);
    for (const auto& field : message) {
      request.header_lines.emplace_back(field.name_string(), field.value());
      std::string name(field.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request.headers[name] = std::string(field.value());
    }
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
    }
    answer(stream, handler_(request));
  }

  template <typename Stream>
  void answer(Stream& stream, const Reply& reply) {
    boost::system::error_code error;
    if (reply.mode == Reply::Mode::kHang) return waitForStop();
    std::string head = "HTTP/1.1 " + std::to_string(reply.status) +
                       " Fake\r\nContent-Type: " + reply.content_type + "\r\nConnection: close\r\n";
    for (const auto& [name, value] : reply.headers) head += name + ": " + value + "\r\n";
    if (reply.chunks) {
      head += "Transfer-Encoding: chunked\r\n\r\n";
      boost::asio::write(stream, boost::asio::buffer(head), error);
      std::string chunk;
      while (!error && reply.chunks(chunk)) {
        if (chunk.empty()) continue;
        std::string framed = toHex(chunk.size()) + "\r\n" + chunk + "\r\n";
        boost::asio::write(stream, boost::asio::buffer(framed), error);
        chunk.clear();
      }
      if (!error) boost::asio::write(stream, boost::asio::buffer(std::string("0\r\n\r\n")), error);
      return;
    }
    const std::size_t announced =
        reply.body.size() + (reply.mode == Reply::Mode::kStallMidBody ? 1000 : 0);
    head += "Content-Length: " + std::to_string(announced) + "\r\n\r\n";
    boost::asio::write(stream, boost::asio::buffer(head + reply.body), error);
    if (reply.mode == Reply::Mode::kStallMidBody) waitForStop();
  }

  void waitForStop() {
    std::unique_lock lock(mutex_);
    stopped_.wait(lock, [this] { return stopping_; });
  }

  static std::string toHex(std::size_t value) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    do {
      out.insert(out.begin(), kDigits[value % 16]);
      value /= 16;
    } while (value != 0);
    return out;
  }

  Handler handler_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::unique_ptr<boost::asio::ssl::context> tls_;
  std::thread accept_thread_;
  mutable std::mutex mutex_;
  std::condition_variable stopped_;
  bool stopping_ = false;
  std::set<int> open_fds_;
  std::vector<std::thread> workers_;
  std::vector<RecordedRequest> requests_;
};

inline Reply jsonReply(std::string body, int status = 200) {
  Reply reply;
  reply.status = status;
  reply.body = std::move(body);
  return reply;
}

// `body` sent with chunked transfer encoding, `chunk_bytes` at a time.
inline Reply chunkedReply(std::string body, std::size_t chunk_bytes) {
  Reply reply;
  reply.chunks = [body = std::move(body), chunk_bytes,
                  offset = std::size_t{0}](std::string& chunk) mutable {
    if (offset >= body.size()) return false;
    chunk = body.substr(offset, chunk_bytes);
    offset += chunk.size();
    return true;
  };
  return reply;
}

// A handler that gives every request the same reply.
inline FakeHttpServer::Handler answering(Reply reply) {
  return [reply = std::move(reply)](const RecordedRequest&) { return reply; };
}

// A local port nothing listens on: connections to it are refused.
inline unsigned short unusedPort() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(
      io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();  // closed again on return
}

}  // namespace metrics_adapter::net::testing
