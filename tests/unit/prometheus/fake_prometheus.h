#pragma once

#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
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
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace metrics_adapter::prometheus::testing {

// One request as the fake server received it.
struct RecordedRequest {
  std::string method;
  std::string target;  // path?query exactly as sent
  std::string body;
  std::map<std::string, std::string> headers;  // names in lower case

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
  std::string body;
  Mode mode = Mode::kNormal;
  // When set, the body is sent chunked: called until it returns false, each call filling `chunk`.
  std::function<bool(std::string& chunk)> chunks;
};

// A plain-HTTP server on 127.0.0.1 that records requests and answers each with the handler's
// reply, one request per connection. Connections run on their own threads; hanging ones are
// released when the server is destroyed.
class FakePrometheus {
 public:
  using Handler = std::function<Reply(const RecordedRequest&)>;

  explicit FakePrometheus(Handler handler)
      : handler_(std::move(handler)),
        acceptor_(io_,
                  boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)) {
    accept_thread_ = std::thread([this] { acceptLoop(); });
  }

  ~FakePrometheus() {
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

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
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
    namespace http = boost::beast::http;
    boost::system::error_code error;
    boost::beast::flat_buffer buffer;
    http::request_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    http::read(socket, buffer, parser, error);
    if (!error) {
      RecordedRequest request;
      const auto& message = parser.get();
      request.method = std::string(message.method_string());
      request.target = std::string(message.target());
      request.body = message.body();
      for (const auto& field : message) {
        std::string name(field.name_string());
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        request.headers[name] = std::string(field.value());
      }
      {
        std::lock_guard lock(mutex_);
        requests_.push_back(request);
      }
      answer(socket, handler_(request));
    }
    std::lock_guard lock(mutex_);
    open_fds_.erase(socket.native_handle());
    socket.close(error);
  }

  void answer(boost::asio::ip::tcp::socket& socket, const Reply& reply) {
    boost::system::error_code error;
    if (reply.mode == Reply::Mode::kHang) return waitForStop();
    std::string head = "HTTP/1.1 " + std::to_string(reply.status) +
                       " Fake\r\nContent-Type: " + reply.content_type + "\r\nConnection: close\r\n";
    if (reply.chunks) {
      head += "Transfer-Encoding: chunked\r\n\r\n";
      boost::asio::write(socket, boost::asio::buffer(head), error);
      std::string chunk;
      while (!error && reply.chunks(chunk)) {
        if (chunk.empty()) continue;
        std::string framed = toHex(chunk.size()) + "\r\n" + chunk + "\r\n";
        boost::asio::write(socket, boost::asio::buffer(framed), error);
        chunk.clear();
      }
      if (!error) boost::asio::write(socket, boost::asio::buffer(std::string("0\r\n\r\n")), error);
      return;
    }
    const std::size_t announced =
        reply.body.size() + (reply.mode == Reply::Mode::kStallMidBody ? 1000 : 0);
    head += "Content-Length: " + std::to_string(announced) + "\r\n\r\n";
    boost::asio::write(socket, boost::asio::buffer(head + reply.body), error);
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
  std::thread accept_thread_;
  mutable std::mutex mutex_;
  std::condition_variable stopped_;
  bool stopping_ = false;
  std::set<int> open_fds_;
  std::vector<std::thread> workers_;
  std::vector<RecordedRequest> requests_;
};

// Decodes application/x-www-form-urlencoded text ('+' is a space, %XX a byte). Written
// independently of the client's encoder so round trips test both sides.
inline std::string formDecode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%' && i + 2 < text.size() &&
               std::isxdigit(static_cast<unsigned char>(text[i + 1])) != 0 &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2])) != 0) {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// The decoded name=value pairs of a query string or form body, in order.
inline std::vector<std::pair<std::string, std::string>> parseForm(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> pairs;
  while (!text.empty()) {
    const auto amp = text.find('&');
    const std::string_view item = text.substr(0, amp);
    const auto eq = item.find('=');
    pairs.emplace_back(formDecode(item.substr(0, eq)),
                       eq == std::string_view::npos ? "" : formDecode(item.substr(eq + 1)));
    if (amp == std::string_view::npos) break;
    text.remove_prefix(amp + 1);
  }
  return pairs;
}

// The first decoded value of `name` in a query string or form body ("" when absent).
inline std::string formValue(std::string_view text, const std::string& name) {
  for (const auto& [key, value] : parseForm(text)) {
    if (key == name) return value;
  }
  return "";
}

}  // namespace metrics_adapter::prometheus::testing
