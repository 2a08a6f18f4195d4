#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/custom_metric_request.h"
#include "metrics_adapter/discovery/registry.h"
#include "metrics_adapter/kube/object_lister.h"
#include "metrics_adapter/kube/rest_mapper.h"
#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::api {

using SnapshotSource = std::function<std::shared_ptr<const discovery::RegistrySnapshot>()>;

// What one metric request did, for `metrics-adapter explain`: filled as far as the request got.
struct QueryTrace {
  std::string rule_id;   // the rule serving the metric
  std::string backend;   // the backend it was asked of
  std::string series;    // the Prometheus series behind the metric name
  std::string promql;    // the rendered metricsQuery
  bool queried = false;  // true once Prometheus answered; `result` is then its raw answer
  prometheus::QueryResult result;
};

struct CustomMetricsOptions {
  std::chrono::milliseconds query_timeout{std::chrono::seconds(10)};
};

// Answers custom.metrics.k8s.io metric requests: registry lookup, object listing, PromQL,
// Prometheus, MetricValueList. Thread-safe.
class CustomMetricsHandler {
 public:
  // `lister` may be null: wildcard requests with a labelSelector then fail with 503.
  // Each metric is queried at the backend its rule names (RegistrySnapshot::backend).
  CustomMetricsHandler(SnapshotSource snapshots, std::shared_ptr<kube::ObjectLister> lister,
                       CustomMetricsOptions options);

  // The MetricValueList for `request` in its version's shape, as compact JSON text: byte for
  // byte what nlohmann's dump() writes for handle()'s tree, but written without building one.
  // Throws ApiError. When `trace` is given it receives the rule, the PromQL and
  // Prometheus' answer, also when render() throws.
  std::string render(const CustomMetricRequest& request, QueryTrace* trace = nullptr) const;

  // render() as a JSON tree, for pretty-printing and `metrics-adapter explain`.
  Json handle(const CustomMetricRequest& request, QueryTrace* trace = nullptr) const;

 private:
  SnapshotSource snapshots_;
  std::shared_ptr<kube::ObjectLister> lister_;
  CustomMetricsOptions options_;
};

// Maps a Prometheus failure to the Status the client sees: unreachable, timeouts and 5xx are
// 503 ServiceUnavailable; Prometheus rejecting the query is 500 with its message. The message
// names what was asked (`what`: "metric x on pods") and the backend that failed.
ApiError prometheusFailure(const prometheus::PrometheusError& error, std::string_view backend,
                           const std::string& what);

// The backend called `name` in `snapshot`; ApiError 500 when the rule set has none (a rule set
// built without its backends: a bug, never a config the loader accepts).
const prometheus::Backend& backendOf(const discovery::RegistrySnapshot& snapshot,
                                     std::string_view name);

// Appends `text` as a JSON string: the bytes nlohmann's dump writes for it, invalid UTF-8
// replaced by U+FFFD.
void appendJsonString(std::string& out, std::string_view text);

// RFC 3339, UTC, second precision ("2024-05-01T12:00:00Z").
std::string formatTimestamp(double seconds_since_epoch);

}  // namespace metrics_adapter::api
