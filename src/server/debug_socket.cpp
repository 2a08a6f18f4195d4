#include "metrics_adapter/server/debug_socket.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <utility>

#include "server/http_message.h"

namespace metrics_adapter::server {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Local = net::local::stream_protocol;

namespace {

constexpr std::size_t kMaxRequestBytes = 64 << 10;
constexpr std::chrono::seconds kRequestDeadline{10};

// One request, one answer, then the connection closes.
class DebugExchange : public std::enable_shared_from_this<DebugExchange> {
 public:
  DebugExchange(Local::socket socket, const RequestHandler& handler)
      : socket_(std::move(socket)), deadline_(socket_.get_executor()), handler_(handler) {}

  void run() {
    parser_.body_limit(kMaxRequestBytes);
    parser_.header_limit(static_cast<std::uint32_t>(kMaxRequestBytes));
    deadline_.expires_after(kRequestDeadline);
    deadline_.async_wait([self = shared_from_this()](const beast::error_code& ec) {
      if (!ec) self->socket_.close();  // a client that never finishes its request
    });
    http::async_read(socket_, buffer_, parser_,
                     [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
                       self->onRead(ec);
                     });
  }

 private:
  void onRead(const beast::error_code& ec) {
    if (ec) {
      deadline_.cancel();
      return;
    }
    const auto& message = parser_.get();
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = message.body();
    request.remote_address = "unix";
    HttpResponse answer;
    try {
      answer = handler_(request);
    } catch (const std::exception& e) {
      answer = statusResponse(500, "InternalError", e.what());
    }
    response_.result(static_cast<unsigned>(answer.status));
    response_.set(http::field::content_type, std::string(answer.content_type));
    for (const auto& [name, value] : answer.headers) response_.set(name, value);
    response_.body() = std::string(answer.bodyText());
    response_.keep_alive(false);
    response_.prepare_payload();
    http::async_write(socket_, response_,
                      [self = shared_from_this()](const beast::error_code&, std::size_t) {
                        beast::error_code ignored;
                        self->socket_.shutdown(Local::socket::shutdown_both, ignored);
                        self->deadline_.cancel();
                      });
  }

  Local::socket socket_;
  net::steady_timer deadline_;
  const RequestHandler& handler_;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

struct DebugSocketServer::Impl {
  std::string path;
  RequestHandler handler;
  net::io_context io{1};
  Local::acceptor acceptor{io};
  std::thread thread;
  bool started = false;

  void accept() {
    acceptor.async_accept([this](const beast::error_code& ec, Local::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) std::make_shared<DebugExchange>(std::move(socket), handler)->run();
      accept();
    });
  }
};

DebugSocketServer::DebugSocketServer(std::string path, RequestHandler handler)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
  impl_->handler = std::move(handler);
}

DebugSocketServer::~DebugSocketServer() { stop(); }

void DebugSocketServer::start() {
  Impl& s = *impl_;
  // A socket file left by a process that died is removed; anything else there is kept.
  struct stat existing {};
  if (lstat(s.path.c_str(), &existing) == 0) {
    if (!S_ISSOCK(existing.st_mode)) {
      throw std::runtime_error("--debug-socket-path " + s.path + ": exists and is not a socket");
    }
    ::unlink(s.path.c_str());
  }
  beast::error_code ec;
  s.acceptor.open(Local(), ec);
  // The socket is created with the process umask; 0600 is set before it accepts anything.
  if (!ec) s.acceptor.bind(Local::endpoint(s.path), ec);
  if (!ec && ::chmod(s.path.c_str(), 0600) != 0) ec = {errno, boost::system::system_category()};
  if (!ec) s.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::runtime_error("--debug-socket-path " + s.path + ": cannot listen: " + ec.message());
  }
  s.accept();
  s.thread = std::thread([&s] { s.io.run(); });
  s.started = true;
  SPDLOG_INFO("debug socket on {} (/metrics, /healthz, /livez, /readyz, /debug/flags)", s.path);
}

void DebugSocketServer::stop() {
  Impl& s = *impl_;
  if (!s.started) return;
  s.started = false;
  net::post(s.io, [&s] {
    beast::error_code ignored;
    s.acceptor.close(ignored);
  });
  s.io.stop();
  if (s.thread.joinable()) s.thread.join();
  ::unlink(s.path.c_str());
}

}  // namespace metrics_adapter::server
