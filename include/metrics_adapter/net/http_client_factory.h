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
// configureTlsContext, so renewed certificate files apply. The first call sizes cpprestsdk's
// shared thread pool to two threads (see http_client_factory.cpp). Throws std::invalid_argument
// for a malformed origin.
std::unique_ptr<web::http::client::http_client> makeHttpClient(const HttpClientSettings& settings);

}  // namespace metrics_adapter::net
