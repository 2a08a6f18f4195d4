#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/custom_metrics_handler.h"
#include "metrics_adapter/api/external_metrics_handler.h"
#include "metrics_adapter/api/openapi_documents.h"
#include "metrics_adapter/api/resource_metrics_handler.h"
#include "metrics_adapter/api/version_info.h"
#include "metrics_adapter/forecast/forecast_service.h"
#include "metrics_adapter/server/https_server.h"
#include "metrics_adapter/server/request_info.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::api {

// A named health check: nullopt when healthy, else the (logged, never shown) reason.
struct HealthCheck {
  std::string name;
  std::function<std::optional<std::string>()> check;
};

struct HealthChecks {
  std::vector<HealthCheck> live;   // /livez and /healthz
  std::vector<HealthCheck> ready;  // /readyz (also runs the live checks)
};

// What the router serves from. Any handler may be null: its routes then answer 404 (discovery
// is still served, so the APIService stays available).
struct RouterParts {
  std::shared_ptr<const CustomMetricsHandler> custom_metrics{};
  std::shared_ptr<const ExternalMetricsHandler> external_metrics{};
  std::shared_ptr<const forecast::ForecastService> forecasts{};  // the observer pages
  // metrics.k8s.io, served while the registry snapshot's rules have resourceRules.
  std::shared_ptr<const ResourceMetricsHandler> resource_metrics{};
  SnapshotSource snapshots{};
  HealthChecks health{};
  std::shared_ptr<const telemetry::SelfMetrics> self_metrics{};  // served at /metrics
  VersionInfo version{};
};

// The route and handle stages of the request pipeline: method and Accept checks, discovery
// documents, metric routes, health endpoints, /metrics and /version, a Status JSON for every
// error. Thread-safe.
class Router {
 public:
  explicit Router(RouterParts parts);

  // The answer to `request`, whose target `info` was parsed from (and authorized for).
  server::HttpResponse route(const server::HttpRequest& request,
                             const server::RequestInfo& info) const;

  // Whether route() answers `info` from memory, never waiting on anything: the discovery
  // documents (API groups and resource lists, rendered once per snapshot), /version and the
  // OpenAPI documents (rendered at the first request for them, in a few milliseconds).
  static bool answersFromMemory(const server::RequestInfo& info);

 private:
  // Whether metrics.k8s.io is served now (a handler, and resourceRules in the snapshot).
  bool servesResourceMetrics() const;
  // /apis: the legacy APIGroupList or, as the Accept header asks, the aggregated discovery
  // document (with its ETag; 304 for a matching If-None-Match); throws ApiError (406).
  server::HttpResponse apiGroups(const server::HttpRequest& request, bool pretty) const;
  // /openapi/v2, /openapi/v3 and /openapi/v3/apis/<group>/<version>; throws ApiError.
  server::HttpResponse openApi(const server::HttpRequest& request,
                               const server::RequestInfo& info) const;
  // The answer to a metric path under /apis/external.metrics.k8s.io; throws ApiError.
  Json external(const server::RequestInfo& info) const;
  // The answer to a path under /apis/metrics.k8s.io; throws ApiError.
  server::HttpResponse resourceMetrics(const server::RequestInfo& info, bool pretty) const;
  // The answer to a path under /apis/forecast.metrics-adapter.io; throws ApiError.
  server::HttpResponse forecastGroup(const server::RequestInfo& info, bool pretty) const;
  server::HttpResponse health(const std::string& endpoint, const std::vector<HealthCheck>& checks,
                              bool verbose) const;

  RouterParts parts_;
  // Without and with metrics.k8s.io (which resourceRules turn on and off at a reload), built
  // at the first OpenAPI request for each.
  std::shared_ptr<const LazyOpenApiDocuments> openapi_;
  std::shared_ptr<const LazyOpenApiDocuments> openapi_with_resource_metrics_;
};

// The Status answer for `error` (the one Status writer, server::statusJson).
server::HttpResponse errorResponse(const ApiError& error);

// The route template of a request for the self-metrics: a fixed name per kind of path
// ("custom_metric", "external_metric", "resource_metric", "forecast_observer", "discovery",
// "openapi", "health", "metrics", "other"), so that
// client-chosen paths cannot create new series.
std::string_view routeLabel(const server::RequestInfo& info);

}  // namespace metrics_adapter::api
