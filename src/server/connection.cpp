#include "server/connection.h"

#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_cat.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/server/audit_id.h"
#include "server/http_message.h"
#include "server/peer_certificates.h"
#include "server/sni_context.h"

namespace metrics_adapter::server {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using net::ip::tcp;

namespace {

constexpr std::size_t kIdleReadBytes = 4096;
// Parsing may need one read chunk beyond the header limit before it can report header_limit.
constexpr std::size_t kReadChunkBytes = 65536;
// A read buffer that grew for one large request is released before the next one.
constexpr std::size_t kRetainedBufferBytes = 16384;
constexpr std::chrono::seconds kTlsShutdownTimeout{1};
// What the server's own refusals (busy, shutting down) ask clients to wait; client-go retries
// such answers by itself, up to ten times.
constexpr const char* kRetryAfterSeconds = "1";

std::string formatEndpoint(const tcp::socket& socket) {
  beast::error_code ec;
  const tcp::endpoint endpoint = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  const net::ip::address address = endpoint.address();
  const std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(endpoint.port());
}

std::string localIp(const tcp::socket& socket) {
  beast::error_code ec;
  const tcp::endpoint endpoint = socket.local_endpoint(ec);
  return ec ? std::string() : endpoint.address().to_string();
}

bool isParseError(const beast::error_code& ec) {
  return &ec.category() == &http::make_error_code(http::error::bad_method).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message;
}

// What `handler` answers `request`, or a 500 (logged) when it throws.
template <typename Handler>
auto invokeGuarded(const Handler& handler, const HttpRequest& request)
    -> decltype(handler(request)) {
  std::string what;
  try {
    return handler(request);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "non-standard exception";
  }
  SPDLOG_ERROR("request handler failed for {} {}: {}", request.method, request.target, what);
  return statusResponse(500, "InternalError",
                        "Internal error occurred: the server could not handle the request");
}

HttpResponse invokeHandler(const ServerState& state, const HttpRequest& request) {
  return invokeGuarded(state.handlers.handler, request);
}

std::optional<HttpResponse> invokeAtOnce(const ServerState& state, const HttpRequest& request) {
  if (!state.handlers.at_once) return std::nullopt;
  return invokeGuarded(state.handlers.at_once, request);
}

// A refusal the client should retry shortly, elsewhere or here: carries Retry-After.
HttpResponse retryLater(int code, std::string_view reason, std::string_view message) {
  HttpResponse response = statusResponse(code, reason, message);
  response.headers.emplace_back("Retry-After", kRetryAfterSeconds);
  return response;
}

}  // namespace

Connection::Connection(tcp::socket socket, std::shared_ptr<net::ssl::context> tls_context,
                       std::shared_ptr<ServerState> state)
    : state_(std::move(state)),
      tls_context_(std::move(tls_context)),
      executor_(socket.get_executor()),
      remote_address_(formatEndpoint(socket)),
      local_ip_(localIp(socket)),
      stream_(std::move(socket), *tls_context_),
      handler_timer_(executor_),
      buffer_(state_->options.max_header_bytes + kReadChunkBytes) {
  setSniLocalAddress(stream_.native_handle(), &local_ip_);
  request_.remote_address = remote_address_;
  // Asio sets SSL_MODE_RELEASE_BUFFERS on every SSL object, so OpenSSL freed its 16 KiB read and
  // write record buffers whenever they emptied and allocated them again for the next record:
  // three allocations of every answer. Our connections are few (the aggregator keeps a handful
  // open), so each keeps its 33 KiB of buffers while it is open instead.
  SSL_clear_mode(stream_.native_handle(), SSL_MODE_RELEASE_BUFFERS);
}

Connection::~Connection() { state_->connections.remove(this); }

void Connection::start() {
  state_->connections.add(shared_from_this());
  net::dispatch(executor_, [self = shared_from_this()] {
    self->stream_.next_layer().expires_after(self->state_->options.header_timeout);
    self->stream_.async_handshake(net::ssl::stream_base::server,
                                  [self](const beast::error_code& ec) { self->onHandshake(ec); });
  });
}

void Connection::closeIfIdle() {
  net::post(executor_, [self = shared_from_this()] {
    if (self->phase_ == Phase::kIdle) self->stream_.next_layer().cancel();
  });
}

void Connection::abandonPendingRequest() {
  net::post(executor_, [self = shared_from_this()] {
    if (self->pending_request_id_ == 0) return;
    self->pending_request_id_ = 0;
    self->handler_timer_.cancel();
    self->keep_alive_ = false;
    SPDLOG_WARN("{} {} from {} was still running at shutdown; answered 503", self->request_method_,
                self->request_target_, self->remote_address_);
    self->respond(retryLater(503, "ServiceUnavailable", "the server is shutting down"));
  });
}

void Connection::onHandshake(const beast::error_code& ec) {
  if (ec) {
    SPDLOG_DEBUG("TLS handshake with {} failed: {}", remote_address_, ec.message());
    return closeNow();
  }
  request_.peer_certificates_pem = peerCertificateChainPem(stream_.native_handle());
  readHeader();
}

void Connection::awaitRequest() {
  if (state_->stopping) return closeGracefully();
  if (buffer_.size() > 0) return readHeader();  // a pipelined request is already here
  if (buffer_.capacity() > kRetainedBufferBytes) buffer_.shrink_to_fit();
  releaseLargeRequest();
  phase_ = Phase::kIdle;
  // Only the first byte may take idle_timeout; the rest of the header gets header_timeout.
  stream_.next_layer().expires_after(state_->options.idle_timeout);
  stream_.async_read_some(
      buffer_.prepare(kIdleReadBytes),
      withMemory(io_memory_,
                 [self = shared_from_this()](const beast::error_code& ec, std::size_t bytes) {
                   self->onIdleData(ec, bytes);
                 }));
}

void Connection::onIdleData(const beast::error_code& ec, std::size_t bytes) {
  buffer_.commit(bytes);
  if (ec) return closeNow();  // idle timeout, client closed, or shutdown
  readHeader();
}

void Connection::readHeader() {
  phase_ = Phase::kReading;
  parser_.emplace(request_);
  parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(
      state_->options.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  parser_->body_limit(state_->options.max_body_bytes);
  // A request usually comes whole in the idle read: parse it where it is, without another
  // operation (a timer, a composed read, a hop through the queue). A header cut short leaves
  // the bytes unconsumed (need_more), and the read below goes on from them.
  if (buffer_.size() > 0) {
    beast::error_code ec;
    buffer_.consume(parser_->put(buffer_.data(), ec));
    if (ec != http::error::need_more && (ec || parser_->is_header_done())) return onHeader(ec);
  }
  stream_.next_layer().expires_after(state_->options.header_timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      withMemory(io_memory_, [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
        self->onHeader(ec);
      }));
}

void Connection::onHeader(const beast::error_code& ec) {
  request_began_ = std::chrono::steady_clock::now();
  if (ec) return onReadError(ec);
  // A request without a body (every GET) is complete with its header: reading on would cost
  // a timer, a composed operation and a hop through the queue for nothing.
  if (parser_->is_done()) return dispatch();
  stream_.next_layer().expires_after(state_->options.header_timeout);
  http::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](const beast::error_code& ec, std::size_t) { self->onBody(ec); });
}

void Connection::onBody(const beast::error_code& ec) {
  if (ec) return onReadError(ec);
  dispatch();
}

void Connection::onReadError(const beast::error_code& ec) {
  if (ec == http::error::header_limit) {
    return respondAndClose(statusResponse(431, "RequestHeaderFieldsTooLarge",
                                          "the request header is larger than the server allows"));
  }
  if (ec == http::error::body_limit) {
    return respondAndClose(statusResponse(413, "RequestEntityTooLarge",
                                          "the request body is larger than the server allows"));
  }
  if (isParseError(ec)) {
    SPDLOG_DEBUG("malformed request from {}: {}", remote_address_, ec.message());
    return respondAndClose(statusResponse(400, "BadRequest", "malformed HTTP request"));
  }
  SPDLOG_DEBUG("closing connection from {}: {}", remote_address_, ec.message());
  closeNow();
}

void Connection::dispatch() {
  keep_alive_ = parser_->keep_alive();
  head_request_ = parser_->method() == http::verb::head;
  parser_.reset();
  request_token_ = state_->requests.begin();
  // Every answer to a request that was read carries its audit ID, auditing on or off, as
  // upstream's WithAuditInit (the outermost filter) does.
  if (const std::string_view asked = requestedAuditId(request_.headerView("Audit-ID"));
      !asked.empty()) {
    request_audit_id_.assign(asked);
  } else {
    const AuditId fresh = newAuditId();
    request_audit_id_.assign(fresh.data(), fresh.size());
  }
  request_forwarded_for_ = request_.headerView("X-Forwarded-For");
  request_real_ip_ = request_.headerView("X-Real-Ip");
  if (state_->stopping) {
    keep_alive_ = false;
    return respond(retryLater(503, "ServiceUnavailable", "the server is shutting down"));
  }
  request_method_ = request_.method;
  request_target_ = request_.target;
  request_user_agent_ = request_.headerView("User-Agent");
  // Answers from memory (the discovery documents) are written from this thread: a hand-off to
  // a worker and back costs more than the answer itself.
  if (std::optional<HttpResponse> answer = invokeAtOnce(*state_, request_)) {
    return respond(std::move(*answer));
  }
  // The worker gets its own copy: request_ is parsed into again once this one is answered.
  auto request = std::make_shared<const HttpRequest>(request_);
  const std::uint64_t id = ++last_request_id_;
  auto result = std::make_shared<HttpResponse>();
  auto self = shared_from_this();
  const bool queued = state_->pool.trySubmit(
      [state = state_, request, result] { *result = invokeHandler(*state, *request); },
      [self, id, result] {
        net::post(self->executor_,
                  [self, id, result] { self->onHandlerDone(id, std::move(*result)); });
      });
  if (!queued) {
    return respond(retryLater(429, "TooManyRequests", "Too many requests: please try again later"));
  }
  phase_ = Phase::kHandling;
  pending_request_id_ = id;

  handler_timer_.expires_after(state_->options.request_timeout);
  handler_timer_.async_wait([self, id](const beast::error_code& ec) {
    if (!ec) self->onHandlerTimeout(id);
  });
}

void Connection::onHandlerDone(std::uint64_t id, HttpResponse response) {
  if (id != pending_request_id_) return;  // already answered with 504
  pending_request_id_ = 0;
  handler_timer_.cancel();
  respond(std::move(response));
}

void Connection::onHandlerTimeout(std::uint64_t id) {
  if (id != pending_request_id_) return;
  pending_request_id_ = 0;
  SPDLOG_WARN("{} {} from {} did not complete within {}s; answered 504", request_method_,
              request_target_, remote_address_, state_->options.request_timeout.count());
  respond(
      statusResponse(504, "Timeout", "the request did not complete within the allowed duration"));
}

void Connection::respond(HttpResponse response) {
  phase_ = Phase::kWriting;
  account(response);
  const bool keep_alive = keep_alive_ && !state_->stopping;
  renderResponse(std::move(response), head_request_, keep_alive, answer_, request_audit_id_);
  request_audit_id_.clear();  // a request that cannot be read next gets none
  stream_.next_layer().expires_after(state_->options.request_timeout);
  // buffers_cat, not a std::array: Asio's write of a two-buffer array goes on with an empty
  // first buffer once the head is out, and Beast's flat_stream under the TLS stream then writes
  // nothing and the answer ends there; an answer over 16 KiB, whose head goes out alone, lost
  // its body (HttpsServerTest.AnswersOfEverySizeArriveWholeOnOneConnection).
  const auto buffers = beast::buffers_cat(net::buffer(answer_.head),
                                          net::buffer(answer_.body.data(), answer_.body.size()));
  net::async_write(stream_, buffers,
                   withMemory(io_memory_, [self = shared_from_this(), keep_alive](
                                              const beast::error_code& ec, std::size_t) {
                     self->answer_.clear();
                     self->onWritten(ec, keep_alive);
                   }));
}

void Connection::account(HttpResponse& response) {
  if (state_->observer && !observe(response)) {
    SPDLOG_ERROR("{} {} from {}: its audit event could not be written; answered 500",
                 request_method_, request_target_, remote_address_);
    ResponseNotes notes = std::move(response.notes);  // who asked stays in the 500's record
    response = statusResponse(500, "InternalError",
                              "the request could not be audited (--audit-*-mode=blocking-strict)");
    response.notes = std::move(notes);
    observe(response);
  }
  request_method_.clear();
  request_target_.clear();
  request_user_agent_.clear();
  request_forwarded_for_.clear();
  request_real_ip_.clear();
}

bool Connection::observe(const HttpResponse& response) {
  Exchange exchange;
  exchange.method = request_method_;
  exchange.target = request_target_;
  exchange.remote = remote_address_;
  exchange.user_agent = request_user_agent_;
  exchange.audit_id = request_audit_id_;
  exchange.forwarded_for = request_forwarded_for_;
  exchange.real_ip = request_real_ip_;
  exchange.code = response.status;
  exchange.response_body = response.bodyText();
  exchange.latency = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - request_began_);
  exchange.notes = &response.notes;
  try {
    return state_->observer->observe(exchange);
  } catch (const std::exception& e) {  // accounting must never take the I/O thread down
    SPDLOG_ERROR("recording {} {} failed: {}", request_method_, request_target_, e.what());
    return true;
  }
}

void Connection::respondAndClose(HttpResponse response) {
  parser_.reset();
  keep_alive_ = false;
  head_request_ = false;
  respond(std::move(response));
}

void Connection::releaseLargeRequest() {
  std::size_t held =
      request_.target.capacity() + request_.body.capacity() + request_.method.capacity();
  for (const auto& [name, value] : request_.headers) held += name.capacity() + value.capacity();
  held += request_user_agent_.capacity() + request_audit_id_.capacity() +
          request_forwarded_for_.capacity() + request_real_ip_.capacity();
  if (held <= kRetainedBufferBytes) return;
  // Swapped with new ones, not assigned: a string assigned a short one keeps its buffer. The
  // address and the client's certificates stay.
  std::string().swap(request_.method);
  std::string().swap(request_.target);
  std::string().swap(request_.body);
  std::vector<std::pair<std::string, std::string>>().swap(request_.headers);
  std::string().swap(request_user_agent_);
  std::string().swap(request_audit_id_);
  std::string().swap(request_forwarded_for_);
  std::string().swap(request_real_ip_);
}

void Connection::onWritten(const beast::error_code& ec, bool keep_alive) {
  request_token_.reset();
  if (ec) {
    SPDLOG_DEBUG("writing the response to {} failed: {}", remote_address_, ec.message());
    return closeNow();
  }
  if (!keep_alive) return closeGracefully();
  awaitRequest();
}

void Connection::closeGracefully() {
  phase_ = Phase::kClosing;
  stream_.next_layer().expires_after(kTlsShutdownTimeout);
  stream_.async_shutdown(
      [self = shared_from_this()](const beast::error_code&) { self->closeNow(); });
}

void Connection::closeNow() {
  phase_ = Phase::kClosed;
  handler_timer_.cancel();
  beast::error_code ignored;
  stream_.next_layer().socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.next_layer().close();
}

}  // namespace metrics_adapter::server
