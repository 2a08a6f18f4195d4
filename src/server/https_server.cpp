#include "metrics_adapter/server/https_server.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/error.hpp>
#include <future>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "server/connection.h"
#include "server/self_signed.h"
#include "server/server_state.h"
#include "server/tls_context_provider.h"
#include "server/tls_policy.h"

namespace metrics_adapter::server {
namespace net = boost::asio;
namespace beast = boost::beast;
using net::ip::tcp;

namespace {

constexpr std::chrono::milliseconds kAcceptRetryDelay{100};
constexpr std::chrono::seconds kLimitWarningInterval{10};
// How long the 503s for requests still running after the drain may take to write.
constexpr std::chrono::seconds kAbandonWriteTimeout{1};

std::string formatAddress(const std::string& host, std::uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// An exception escaping a completion handler unwinds run(); the handler and the connection it
// owned are gone by then, so log and keep serving everyone else.
void runIoContext(net::io_context& io_context) {
  for (;;) {
    try {
      io_context.run();
      return;
    } catch (const std::exception& e) {
      SPDLOG_ERROR("unexpected exception on an I/O thread: {}", e.what());
    } catch (...) {
      SPDLOG_ERROR("unexpected non-standard exception on an I/O thread");
    }
  }
}

void validate(const ServerOptions& options) {
  const auto require = [](bool ok, const char* message) {
    if (!ok) throw std::runtime_error(std::string("invalid server options: ") + message);
  };
  require(options.io_threads > 0, "io_threads must be at least 1");
  require(options.worker_threads > 0, "worker_threads must be at least 1");
  require(options.max_in_flight > 0, "max_in_flight must be at least 1");
  require(options.max_connections > 0, "max_connections must be at least 1");
  require(options.max_header_bytes > 0 &&
              options.max_header_bytes <= std::numeric_limits<std::uint32_t>::max(),
          "max_header_bytes must be between 1 and 4294967295");
  require(options.header_timeout.count() > 0, "header_timeout must be positive");
  require(options.request_timeout.count() > 0, "request_timeout must be positive");
  require(options.idle_timeout.count() > 0, "idle_timeout must be positive");
  require(options.tls_cert_file.empty() == options.tls_key_file.empty(),
          "tls_cert_file and tls_key_file must be set together");
}

}  // namespace

struct HttpsServer::Impl {
  Impl(ServerOptions server_options, Handlers request_handlers,
       std::shared_ptr<ExchangeObserver> exchange_observer)
      : options(std::move(server_options)),
        handlers(std::move(request_handlers)),
        observer(std::move(exchange_observer)) {}

  void startLocked();
  void stopLocked(std::chrono::seconds drain, const std::function<void()>& on_drain_expired);
  void accept();
  void onAccept(const beast::error_code& ec, tcp::socket socket);
  net::io_context& nextConnectionContext();

  const ServerOptions options;
  const Handlers handlers;
  const std::shared_ptr<ExchangeObserver> observer;
  std::mutex lifecycle_mutex;
  bool running = false;
  std::atomic<std::uint16_t> port{0};
  std::shared_ptr<TlsContextProvider> tls;
  std::shared_ptr<ServerState> state;
  // One io_context per I/O thread, as nginx has one event loop per worker: a connection lives
  // on one thread, so its handlers need no strand, and the threads never wake each other to
  // share one queue (measured: futex wake-ups were most of the CPU per discovery request).
  std::vector<std::unique_ptr<net::io_context>> io_contexts;
  // Keeps run() going on a context that has no connection yet.
  std::vector<net::executor_work_guard<net::io_context::executor_type>> keep_running;
  std::unique_ptr<tcp::acceptor> acceptor;  // on io_contexts[0]
  std::unique_ptr<net::steady_timer> accept_retry;
  std::vector<std::thread> io_threads;
  // Only touched on the acceptor's thread.
  std::size_t next_context = 0;
  std::chrono::steady_clock::time_point last_limit_warning;
  std::size_t refused_since_warning = 0;
};

void HttpsServer::Impl::startLocked() {
  validate(options);
  TlsPolicy policy;
  try {
    policy = makeTlsPolicy(options.tls_min_version, options.tls_cipher_suites);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  std::string cert_file = options.tls_cert_file;
  std::string key_file = options.tls_key_file;
  if (cert_file.empty()) {
    const CertificatePaths paths = ensureSelfSignedCertificate(options.cert_dir);
    cert_file = paths.cert_file;
    key_file = paths.key_file;
  }
  auto provider = std::make_shared<TlsContextProvider>(
      policy, cert_file, key_file, options.sni_cert_keys, options.cert_reload_interval);

  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(options.bind_address, ec);
  if (ec) throw std::runtime_error("invalid bind_address \"" + options.bind_address + "\"");
  const tcp::endpoint endpoint(address, options.port);
  const std::string where = formatAddress(options.bind_address, options.port);

  std::vector<std::unique_ptr<net::io_context>> contexts;
  for (unsigned i = 0; i < options.io_threads; ++i) {
    contexts.push_back(std::make_unique<net::io_context>(1));  // 1: run by one thread
  }
  auto listener = std::make_unique<tcp::acceptor>(*contexts.front());
  const auto check = [&](const char* step) {
    if (ec)
      throw std::runtime_error("cannot listen on " + where + ": " + step + ": " + ec.message());
  };
  listener->open(endpoint.protocol(), ec);
  check("open");
  listener->set_option(net::socket_base::reuse_address(true), ec);
  check("SO_REUSEADDR");
  if (options.reuse_port) {
    listener->set_option(net::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true), ec);
    check("SO_REUSEPORT");
  }
  if (address.is_v6() && address.is_unspecified()) {
    beast::error_code ignored;  // dual-stack where the OS allows it
    listener->set_option(net::ip::v6_only(false), ignored);
  }
  listener->bind(endpoint, ec);
  check("bind");
  listener->listen(net::socket_base::max_listen_connections, ec);
  check("listen");
  const tcp::endpoint bound = listener->local_endpoint(ec);
  check("local address");

  tls = std::move(provider);
  state = std::make_shared<ServerState>(options, handlers, observer);
  accept_retry = std::make_unique<net::steady_timer>(listener->get_executor());
  acceptor = std::move(listener);
  io_contexts = std::move(contexts);
  port = bound.port();
  accept();
  io_threads.reserve(io_contexts.size());
  for (const auto& context : io_contexts) {
    keep_running.push_back(net::make_work_guard(*context));
    io_threads.emplace_back([&context = *context] { runIoContext(context); });
  }
  running = true;
  SPDLOG_INFO("serving HTTPS on {}", formatAddress(options.bind_address, port));
}

void HttpsServer::Impl::stopLocked(std::chrono::seconds drain,
                                   const std::function<void()>& on_drain_expired) {
  const auto deadline = std::chrono::steady_clock::now() + drain;
  state->stopping = true;
  std::promise<void> acceptor_closed;
  net::post(acceptor->get_executor(), [this, &acceptor_closed] {
    beast::error_code ignored;
    acceptor->close(ignored);
    accept_retry->cancel();
    acceptor_closed.set_value();
  });
  acceptor_closed.get_future().wait();
  for (const auto& connection : state->connections.snapshot()) connection->closeIfIdle();
  if (!state->requests.waitIdle(deadline)) {
    SPDLOG_WARN("shutting down with {} request(s) still in progress", state->requests.active());
    // Their clients get a 503 to retry elsewhere rather than a dropped connection.
    for (const auto& connection : state->connections.snapshot()) {
      connection->abandonPendingRequest();
    }
    state->requests.waitIdle(std::chrono::steady_clock::now() + kAbandonWriteTimeout);
    if (on_drain_expired) on_drain_expired();
  }
  keep_running.clear();
  for (const auto& context : io_contexts) context->stop();
  for (std::thread& thread : io_threads) thread.join();
  io_threads.clear();
  // Joins the workers (waiting for running handlers) and drops queued work before the
  // connections it refers to are destroyed along with the io_context.
  state->pool.stop();
  accept_retry.reset();
  acceptor.reset();
  io_contexts.clear();
  state.reset();
  tls.reset();
  running = false;
}

net::io_context& HttpsServer::Impl::nextConnectionContext() {
  net::io_context& context = *io_contexts[next_context];
  next_context = (next_context + 1) % io_contexts.size();
  return context;
}

void HttpsServer::Impl::accept() {
  acceptor->async_accept(
      nextConnectionContext(),
      [this](const beast::error_code& ec, tcp::socket socket) { onAccept(ec, std::move(socket)); });
}

void HttpsServer::Impl::onAccept(const beast::error_code& ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor->is_open()) return;
  if (ec) {
    // E.g. out of file descriptors: back off instead of spinning on the error.
    SPDLOG_WARN("accepting a connection failed: {}", ec.message());
    accept_retry->expires_after(kAcceptRetryDelay);
    accept_retry->async_wait([this](const beast::error_code& wait_ec) {
      if (!wait_ec && acceptor->is_open()) accept();
    });
    return;
  }
  if (state->connections.size() >= options.max_connections) {
    ++refused_since_warning;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_limit_warning >= kLimitWarningInterval) {
      SPDLOG_WARN("connection limit {} reached; closed {} new connection(s)",
                  options.max_connections, refused_since_warning);
      last_limit_warning = now;
      refused_since_warning = 0;
    }
    beast::error_code ignored;
    socket.close(ignored);
  } else {
    try {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Connection>(std::move(socket), tls->current(), state)->start();
    } catch (const std::exception& e) {
      SPDLOG_ERROR("cannot set up a new connection: {}", e.what());
    }
  }
  accept();
}

HttpsServer::HttpsServer(ServerOptions options, RequestHandler handler,
                         std::shared_ptr<ExchangeObserver> observer)
    : HttpsServer(std::move(options), Handlers{std::move(handler), nullptr}, std::move(observer)) {}

HttpsServer::HttpsServer(ServerOptions options, Handlers handlers,
                         std::shared_ptr<ExchangeObserver> observer)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handlers), std::move(observer))) {}

HttpsServer::~HttpsServer() {
  try {
    stop();
  } catch (const std::exception& e) {
    SPDLOG_ERROR("stopping the HTTPS server failed: {}", e.what());
  }
}

void HttpsServer::start() {
  std::lock_guard lock(impl_->lifecycle_mutex);
  if (impl_->running) throw std::runtime_error("the HTTPS server is already running");
  impl_->startLocked();
}

void HttpsServer::stop(std::chrono::seconds drain, const std::function<void()>& on_drain_expired) {
  std::lock_guard lock(impl_->lifecycle_mutex);
  if (impl_->running) impl_->stopLocked(drain, on_drain_expired);
}

std::uint16_t HttpsServer::port() const { return impl_->port; }

}  // namespace metrics_adapter::server
