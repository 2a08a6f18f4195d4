#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "metrics_adapter/prometheus/prometheus_api.h"
#include "prometheus/body_pipe.h"
#include "prometheus/cpprest.h"

namespace metrics_adapter::prometheus {

// What one call needs besides the request itself.
struct CallContext {
  std::string server;                              // how messages name Prometheus
  std::string host;                                // for diagnosing connect failures
  std::string port;                                //   "
  std::chrono::milliseconds timeout{0};            // the effective timeout, for messages
  std::chrono::steady_clock::time_point deadline;  // nothing of the call outlives this
};

// One HTTP exchange whose body is read as a stream. Not thread-safe; one per call.
class HttpCall {
 public:
  // Sends `request` and waits for the status line and headers. Throws PrometheusError:
  // kTimeout past the deadline, kUnreachable when no answer could be had (refused, DNS, TLS,
  // connection closed before an answer).
  HttpCall(web::http::client::http_client& client, web::http::http_request request,
           CallContext context);
  // Abandons an unfinished exchange: the connection is closed rather than drained.
  ~HttpCall();

  HttpCall(const HttpCall&) = delete;
  HttpCall& operator=(const HttpCall&) = delete;

  int status() const { return status_; }
  std::optional<std::uint64_t> contentLength() const;

  // Copies up to `capacity` body bytes; returns 0 at the end of the body. Throws PrometheusError:
  // kTimeout past the deadline, kBadResponse when the answer breaks off.
  std::size_t read(char* destination, std::size_t capacity);

  PrometheusError timeoutError() const;

 private:
  void abandon();

  CallContext context_;
  std::shared_ptr<BodyPipe> pipe_;
  pplx::cancellation_token_source cancellation_;
  web::http::http_response response_;
  int status_ = 0;
  bool ended_ = false;
  bool abandoned_ = false;
};

}  // namespace metrics_adapter::prometheus
