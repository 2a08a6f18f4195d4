#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/custom_metrics_handler.h"
#include "metrics_adapter/forecast/forecast_service.h"
#include "metrics_adapter/prometheus/prometheus_api.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::api {

// One external.metrics.k8s.io/v1beta1 metric request, after routing (docs/api-contract.md "External
// metrics routes").
struct ExternalMetricRequest {
  std::string namespace_name;  // the HPA's namespace; always present
  std::string metric;
  std::string label_selector;  // selects series by their labels
};

// The metric request `info` asks for under /apis/external.metrics.k8s.io/v1beta1/, read from the
// attributes authorization checked. The only route is namespaces/<ns>/<metric>, a list of the
// pseudo-resource <metric>; anything else is nullopt (404, conformance C43), including a metric
// named "status" or "finalize", which upstream's request attributes read as a subresource of
// the namespace.
std::optional<ExternalMetricRequest> parseExternalMetricRequest(const server::RequestInfo& info);

struct ExternalMetricsOptions {
  std::chrono::milliseconds query_timeout{std::chrono::seconds(10)};
};

// Answers external.metrics.k8s.io metric requests from `forecastRules` (their latest forecasts,
// when `forecasts` is given) and `externalRules` (registry lookup, PromQL, Prometheus),
// ExternalMetricValueList. A forecastRule's name wins over an external metric of the same name.
// Thread-safe.
class ExternalMetricsHandler {
 public:
  // Each metric is queried at the backend its rule names (RegistrySnapshot::backend).
  ExternalMetricsHandler(SnapshotSource snapshots, ExternalMetricsOptions options,
                         std::shared_ptr<const forecast::ForecastService> forecasts = nullptr);

  // One item per sample of the query's answer (sorted by labels; NaN, ±Inf and DCGM blanks
  // skipped), or one unlabelled item for a scalar. Throws ApiError: 404 unknown metric, 400 bad
  // selector, 503 Prometheus unreachable, 500 Prometheus or rule failure.
  // When `trace` is given it receives the rule, the PromQL and Prometheus' answer, also when
  // handle() throws.
  Json handle(const ExternalMetricRequest& request, QueryTrace* trace = nullptr) const;

 private:
  SnapshotSource snapshots_;
  ExternalMetricsOptions options_;
  std::shared_ptr<const forecast::ForecastService> forecasts_;
};

}  // namespace metrics_adapter::api
