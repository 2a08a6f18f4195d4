#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "metrics_adapter/net/cpprest.h"
#include "metrics_adapter/net/tls_client.h"

namespace metrics_adapter::net {

struct HttpClientSettings {
  std::string origin;  // scheme://host[:port]
  // Bounds exchanges abandoned by their caller; HttpCall enforces each call's own deadline.
  std::chrono::milliseconds timeout{30000};
  TlsClientSettings tls;      // for https origins
  bool verify_server = true;  // false accepts any server certificate
};

// A cpprestsdk client for HttpCall: redirects are not followed (a followed redirect would deliver
// its body outside the response stream HttpCall reads), and every new TLS connection is set up by
// configureTlsContext, so renewed certificate files apply. Throws std::invalid_argument for a
// malformed origin.
std::unique_ptr<web::http::client::http_client> makeHttpClient(const HttpClientSettings& settings);

// The threads of cpprestsdk's shared I/O pool, before any client exists (the process's first
// outbound call); later calls change nothing. cpprestsdk's default is 40, each with its stack and
// malloc arena, while its asynchronous I/O and the body pipes' writers need a few (docs/
// performance.md "Idle memory"). Returns false when the pool was already running.
bool setClientIoThreads(std::size_t threads);

}  // namespace metrics_adapter::net
