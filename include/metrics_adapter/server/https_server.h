#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/server/exchange_observer.h"
#include "metrics_adapter/server/sni_cert_key.h"

namespace metrics_adapter::server {

struct HttpRequest {
  std::string method;  // "GET"
  std::string target;  // raw request target, e.g. "/apis/x/v1beta1/namespaces/a/pods/%2A/m?x=1"
  std::vector<std::pair<std::string, std::string>> headers;  // repeated headers kept, in order
  std::string body;
  std::string remote_address;
  // PEM of the verified-or-not client certificate chain the peer presented (leaf first);
  // empty when none. Verification is the caller's job (delegated auth).
  std::vector<std::string> peer_certificates_pem;

  // First value of a header (case-insensitive name), or "".
  std::string header(std::string_view name) const;
  // The same as a view into `headers`, for callers that must not allocate.
  std::string_view headerView(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  // A view, so an answer allocates nothing for it: it must point at static text (every handler
  // sets a literal), as it is read when the answer is written, after the handler returned.
  std::string_view content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  std::string body;
  ResponseNotes notes;  // for accounting; never sent
  // When set, sent instead of `body`: bytes rendered once and shared by every answer that
  // carries them (the discovery documents), so an answer copies no body.
  std::shared_ptr<const std::string> shared_body;

  // The bytes that are sent: *shared_body when set, else body.
  std::string_view bodyText() const { return shared_body ? *shared_body : body; }
};

// Called on a worker thread (never an I/O thread); may block (e.g. on Prometheus).
using RequestHandler = std::function<HttpResponse(const HttpRequest&)>;

// Called on the connection's I/O thread before the request would go to a worker: the answer
// when it can be given at once from memory (nothing waited for), else nullopt and the request
// goes to the RequestHandler. Must never block: every connection of that thread waits on it.
using AtOnceHandler = std::function<std::optional<HttpResponse>(const HttpRequest&)>;

struct Handlers {
  RequestHandler handler;
  AtOnceHandler at_once;  // may be null: every request goes to the worker pool
};

struct ServerOptions {
  std::string bind_address = "0.0.0.0";
  std::uint16_t port = 6443;  // 0 = pick a free port (see HttpsServer::port())
  // SO_REUSEPORT (--permit-port-sharing): other processes that set it too may listen on the
  // same port, and the kernel spreads new connections among them. SO_REUSEADDR is always set.
  bool reuse_port = false;
  std::string tls_cert_file;  // with tls_key_file; else a self-signed pair in cert_dir
  std::string tls_key_file;
  // Served instead of the pair above to clients whose SNI matches their names (SniCertKey),
  // reloaded like it; a client matching none gets the pair above (or the self-signed one).
  std::vector<SniCertKey> sni_cert_keys;
  std::string cert_dir = "apiserver.local.config/certificates";
  std::string tls_min_version = "VersionTLS12";  // VersionTLS12 | VersionTLS13
  std::vector<std::string> tls_cipher_suites;    // Go/IANA names; empty = forward-secret AEAD
  std::size_t max_header_bytes = 1 << 20;        // larger -> 431 and close
  std::size_t max_body_bytes = 64 << 10;         // larger -> 413 and close (every route is a GET)
  std::size_t max_connections = 1024;            // further accepts are closed at once
  std::size_t max_in_flight = 400;               // queued+running handlers; over -> 429
  std::chrono::seconds header_timeout{10};       // time to receive a full header
  std::chrono::seconds request_timeout{60};      // handler deadline -> 504 Status
  std::chrono::seconds idle_timeout{90};         // keep-alive idle
  // One event loop is enough by far: it does TLS, HTTP and the discovery answers at about 30 us
  // of CPU a request (30,000 a second), while handlers run on the workers. A second loop
  // raised throughput only where the cores were free, and where they were not it made the tail:
  // on 2 cores shared with the client, 2 loops gave a discovery p99 of 2.4 to 3.8 ms, 1 loop
  // 0.8 to 0.9 ms at the same req/s (docs/performance.md, round 3). nginx lands the same way:
  // 86 % of the connections of that run went to one of its two workers.
  unsigned io_threads = 1;
  unsigned worker_threads = 8;
  // How often, at most, the certificate and key files are checked for rotation (on accept).
  std::chrono::milliseconds cert_reload_interval{5000};
};

// The serving certificate's validity period, as checkServingCertificate found it.
struct ServingCertificateInfo {
  std::string not_before;  // UTC, e.g. "2026-01-31T12:00:00Z"
  std::string not_after;
  bool valid_now = false;
};

// Checks the TLS settings of `options` with the functions HttpsServer::start() uses, without
// binding or writing a file: the TLS policy (tls_min_version, tls_cipher_suites), and, when
// tls_cert_file is set, the certificate and key (loaded, matched, and made into the server
// context of a first connection), and so every pair of sni_cert_keys. Returns nullopt when
// start() would use a self-signed pair from cert_dir. Throws std::invalid_argument for the
// policy, std::runtime_error for a pair (an SNI pair's error names --tls-sni-cert-key and its
// value).
std::optional<ServingCertificateInfo> checkServingCertificate(const ServerOptions& options);

// HTTPS/1.1 server on Boost.Beast with bounded header/body sizes, connection count, in-flight
// requests and timeouts. TLS >= 1.2, ALPN http/1.1 only, client certificates requested (not
// required). Errors it answers itself (413, 429, 431, 503, 504) carry a Kubernetes Status body.
// `observer`, when given, sees every answer, those errors included.
class HttpsServer {
 public:
  HttpsServer(ServerOptions options, RequestHandler handler,
              std::shared_ptr<ExchangeObserver> observer = nullptr);
  HttpsServer(ServerOptions options, Handlers handlers,
              std::shared_ptr<ExchangeObserver> observer = nullptr);
  ~HttpsServer();  // stops

  // Loads or generates the certificate, binds and starts the threads. Throws
  // std::runtime_error with a clear message (bad cert/key, port in use).
  void start();
  // Stops accepting, finishes in-flight requests (up to `drain`), joins the threads. A handler
  // still running after `drain` is not interrupted: its client gets 503 "the server is shutting
  // down" with Retry-After, `on_drain_expired` runs (e.g. to cancel the handlers' outbound
  // calls), and stop() waits for the handler to return (its response is dropped). Must not be
  // called from the handler. Idempotent.
  void stop(std::chrono::seconds drain = std::chrono::seconds(10),
            const std::function<void()>& on_drain_expired = {});

  std::uint16_t port() const;  // the bound port (useful with port 0)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace metrics_adapter::server
