#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "metrics_adapter/server/https_server.h"
#include "server/handler_memory.h"
#include "server/http_message.h"
#include "server/request_parser.h"
#include "server/request_tracker.h"
#include "server/server_state.h"

namespace metrics_adapter::server {

// One accepted TCP connection: TLS handshake, then HTTP/1.1 requests one at a time (keep-alive),
// each answered at once on this thread when it can be (Handlers::at_once), else handed to the
// worker pool and answered on this connection's thread when the handler returns. Every I/O step has
// a deadline: handshake and header (and then body) within header_timeout, the wait for a keep-alive
// request within idle_timeout, the handler within request_timeout (else 504).
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `socket` must be bound to an io_context run by one thread; all of this object's work runs
  // on it.
  Connection(boost::asio::ip::tcp::socket socket,
             std::shared_ptr<boost::asio::ssl::context> tls_context,
             std::shared_ptr<ServerState> state);
  ~Connection();

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Registers the connection with the server state and starts the handshake.
  void start();
  // Closes the connection if it is waiting for a keep-alive request. Callable from any thread.
  void closeIfIdle();
  // Answers a request whose handler is still running with 503 "shutting down" (Retry-After) and
  // closes; the handler's later result is dropped. For shutdown once the drain time is over.
  // Callable from any thread.
  void abandonPendingRequest();

 private:
  enum class Phase { kHandshake, kIdle, kReading, kHandling, kWriting, kClosing, kClosed };

  void onHandshake(const boost::beast::error_code& ec);
  void awaitRequest();
  void onIdleData(const boost::beast::error_code& ec, std::size_t bytes);
  void readHeader();
  void onHeader(const boost::beast::error_code& ec);
  void onBody(const boost::beast::error_code& ec);
  void onReadError(const boost::beast::error_code& ec);
  void dispatch();
  void onHandlerDone(std::uint64_t id, HttpResponse response);
  void onHandlerTimeout(std::uint64_t id);
  void respond(HttpResponse response);
  // Tells the exchange observer, if any; replaces `response` by a 500 when the observer refuses
  // to let it go out.
  void account(HttpResponse& response);
  bool observe(const HttpResponse& response);  // the observer's verdict
  void respondAndClose(HttpResponse response);
  // Frees request_'s strings when a large request (up to max_header_bytes) grew them past what
  // an idle connection keeps, as the read buffer's.
  void releaseLargeRequest();
  void onWritten(const boost::beast::error_code& ec, bool keep_alive);
  void closeGracefully();
  void closeNow();

  const std::shared_ptr<ServerState> state_;
  // Declared before stream_: the SSL object must not outlive the context it was made from.
  const std::shared_ptr<boost::asio::ssl::context> tls_context_;
  const boost::asio::any_io_executor executor_;
  const std::string remote_address_;
  // The IP the client reached, for SNI certificates named by IP; the SSL object points at it,
  // so it is declared before stream_.
  const std::string local_ip_;
  // The memory of the reads and writes on stream_ (server/handler_memory.h): declared before
  // it, so that it outlives any operation the stream still holds.
  HandlerMemory io_memory_;
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream_;
  boost::asio::steady_timer handler_timer_;
  boost::beast::flat_buffer buffer_;
  // Every request of the connection is parsed into request_ (the address and the client's
  // certificates are set once), so its buffers are reused from one request to the next, up to
  // 16 KiB of them (releaseLargeRequest).
  HttpRequest request_;
  std::optional<RequestParser> parser_;
  WireResponse answer_;  // the answer being written; reused, so its head buffer is too

  Phase phase_ = Phase::kHandshake;
  std::uint64_t last_request_id_ = 0;
  std::uint64_t pending_request_id_ = 0;  // the request whose handler result is awaited, or 0
  // The request being answered, for logs and the exchange observer ("" while none was read).
  std::string request_method_;
  std::string request_target_;
  std::string request_user_agent_;                       // for the audit log
  std::string request_audit_id_;                         // sent back as Audit-Id; audit log
  std::string request_forwarded_for_;                    // for the audit log's sourceIPs
  std::string request_real_ip_;                          // likewise
  std::chrono::steady_clock::time_point request_began_;  // its header was read
  bool keep_alive_ = false;
  bool head_request_ = false;
  RequestTracker::Token request_token_;
};

}  // namespace metrics_adapter::server
