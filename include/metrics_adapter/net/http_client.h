#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/net/tls_client.h"

namespace metrics_adapter::net {

struct HttpClientSettings {
  std::string origin;  // scheme://host[:port]
  // Bounds exchanges abandoned by their caller; HttpCall enforces each call's own deadline.
  std::chrono::milliseconds timeout{30000};
  TlsClientSettings tls;      // for https origins
  bool verify_server = true;  // false accepts any server certificate
};

// One request, in our own terms: the client library stays inside the net module.
struct HttpRequest {
  std::string method = "GET";
  std::string target = "/";  // path and query, joined to the client's origin
  std::vector<std::pair<std::string, std::string>> headers;  // in order; a name may repeat
  std::string body;  // sent when not empty (give its Content-Type in `headers`)

  // Whether a header of that name (any case) is set.
  bool hasHeader(std::string_view name) const;
};

// A client for one origin, for HttpCall: redirects are not followed (a followed redirect would
// deliver its body outside the response stream HttpCall reads), and every new TLS connection is
// set up from the settings' files again, so renewed certificate files apply. Opaque: its
// cpprestsdk client lives in http_client.cpp.
class HttpClient {
 public:
  // The first client sizes cpprestsdk's shared thread pool to two threads (see
  // http_client.cpp). Throws std::invalid_argument for a malformed origin.
  explicit HttpClient(const HttpClientSettings& settings);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  struct Native;  // defined in src/net/http_client_native.h
  Native& native() { return *native_; }

 private:
  std::unique_ptr<Native> native_;
};

std::unique_ptr<HttpClient> makeHttpClient(const HttpClientSettings& settings);

// Whether `target` (a path with an optional query) can be sent as a request target: the
// client's URI rules, checked before a call so a caller can name the bad path itself.
bool isValidRequestTarget(const std::string& target);

}  // namespace metrics_adapter::net
