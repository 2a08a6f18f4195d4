#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::telemetry {
class SelfMetrics;
}

namespace metrics_adapter::prometheus {

struct PrometheusClientOptions {
  std::string backend = "default";        // the backend's name, in self-metrics and logs
  std::string url = "https://localhost";  // --prometheus-url; its path is kept as a prefix and
                                          // its query parameters are kept on every call
  std::string verb = "GET";               // --prometheus-verb: GET or POST
  // --prometheus-header name=value, sent as Go sends them: names canonicalised ("x-scope-orgid"
  // -> "X-Scope-Orgid"), a repeated name as repeated lines in order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string token_file;        // --prometheus-token-file: trimmed, re-read when it changes
  std::string ca_file;           // --prometheus-ca-file: added to the system roots
  std::string client_cert_file;  // --prometheus-client-tls-cert-file
  std::string client_key_file;   // --prometheus-client-tls-key-file
  // HTTP basic authentication. The password file is read like token_file (whitespace around it
  // trimmed, re-read when it changes); basic_auth_password is the inline form a kubeconfig
  // carries (--prometheus-auth-config). At most one credential: basic auth, token_file or
  // bearer_token, and no Authorization header beside it.
  std::string basic_auth_username;
  std::string basic_auth_password_file;
  std::string basic_auth_password;
  // The rest are set by --prometheus-auth-config and --prometheus-auth-incluster (app module),
  // which also fill token_file, ca_file and the client certificate files.
  std::string bearer_token;      // a static token (kubeconfig user.token)
  std::string ca_data;           // PEM, instead of ca_file
  std::string client_cert_data;  // PEM, instead of client_cert_file
  std::string client_key_data;   // PEM, instead of client_key_file
  // client-go's rule: a kubeconfig's or the service account's CA is the only trust.
  bool ca_replaces_system_roots = false;
  bool insecure_skip_tls_verify = false;            // accept any server certificate
  std::chrono::milliseconds client_timeout{30000};  // hard client-side cap on any call
  std::size_t post_threshold_bytes = 2048;          // GET queries longer than this go by POST
  // --prometheus-max-response-bytes: larger /api/v1/query and /api/v1/query_range answers fail
  // as kBadResponse (answers are held and parsed whole; /api/v1/series answers are streamed and
  // not bounded by this).
  std::size_t max_response_bytes = std::size_t{16} << 20;
  // How often at most the token file's mtime/size/inode is compared to decide on a re-read.
  std::chrono::milliseconds token_recheck_interval{5000};

  bool operator==(const PrometheusClientOptions&) const = default;
};

// cpprestsdk-based client. Validates options in the constructor (bad verb, unreadable files,
// bad URL -> std::invalid_argument with a message naming the flag).
// Calls block the calling thread until the answer or the deadline, which is the call's timeout
// capped by client_timeout (a timeout <= 0 means client_timeout); do not call them from
// cpprestsdk's own thread pool. Redirects are not followed (a 3xx fails as kHttpStatus).
// A PrometheusError's what() never names the URL, host, port, URL query, header values or
// bearer token, even when Prometheus or a proxy quotes them ("[redacted]"); its detail() does.
// Query samples and range points whose time cannot be served are left out (bad_samples), logged
// once per answer and counted in `self_metrics`.
class PrometheusClient : public PrometheusApi {
 public:
  // `self_metrics` records every call; null records into a private instance.
  explicit PrometheusClient(PrometheusClientOptions options,
                            std::shared_ptr<telemetry::SelfMetrics> self_metrics = nullptr);
  ~PrometheusClient() override;

  QueryResult query(const std::string& promql, Clock::time_point at,
                    std::chrono::milliseconds timeout) override;
  // Answers are held and parsed whole, bounded by max_response_bytes like query()'s.
  RangeResult queryRange(const std::string& promql, Clock::time_point start, Clock::time_point end,
                         std::chrono::milliseconds step,
                         std::chrono::milliseconds timeout) override;
  void series(const std::string& selector, Clock::time_point start,
              std::chrono::milliseconds timeout, const SeriesVisitor& visitor) override;

  // For shutdown: every call in progress ends at once and every later call fails at once, as
  // kUnreachable, so no call holds the process until its deadline. Thread-safe.
  void cancelCalls();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses a /api/v1/query JSON answer (pure; used by the client and by tests).
// Throws PrometheusError(kApiError) for status "error", kBadResponse for malformed JSON.
QueryResult parseQueryResponse(std::string_view body);

// Parses a /api/v1/query_range JSON answer (pure; used by the client and by tests) without
// building a document. Values keep "NaN" and "±Inf"; native-histogram points are left out, and so
// is a series that has nothing else; points whose time is not isServableSampleTime() are left out
// and counted in bad_samples. Throws PrometheusError(kApiError) for status "error",
// kBadResponse for malformed JSON or any resultType but "matrix".
RangeResult parseRangeResponse(std::string_view body);

}  // namespace metrics_adapter::prometheus
