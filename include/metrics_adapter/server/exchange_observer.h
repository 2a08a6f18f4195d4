#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace metrics_adapter::server {

// What the request pipeline learned about a request, carried back with its response so that
// accounting can record it.
struct ResponseNotes {
  std::string user;   // who the caller turned out to be; "" when unknown
  std::string route;  // the route template, a bounded label; "" when the pipeline did not set it
  std::optional<std::chrono::microseconds> backend_time;  // time spent waiting on Prometheus
};

// One request and the answer written for it.
struct Exchange {
  std::string_view method;  // "" when the request could not be read (413, 431, malformed)
  std::string_view target;  // the raw request target, "" likewise
  std::string_view remote;
  int code = 0;
  std::chrono::microseconds latency{0};  // from the end of the request header to the answer
  const ResponseNotes* notes = nullptr;  // never null
};

// Sees every answer the server writes: the handler's and those the server gives itself (400 for
// malformed HTTP, 413, 429, 431, 503 while stopping, 504 when the handler runs late). Called on
// an I/O thread, so it must be quick; it must not throw.
class ExchangeObserver {
 public:
  virtual ~ExchangeObserver() = default;
  virtual void observe(const Exchange& exchange) = 0;
};

}  // namespace metrics_adapter::server
