#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "metrics_adapter/api/custom_metrics_handler.h"
#include "metrics_adapter/api/external_metrics_handler.h"
#include "metrics_adapter/server/https_server.h"

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

// Turns HTTP requests into API answers: method and Accept checks, discovery documents, metric
// routes, health endpoints, Status JSON for every error. Thread-safe.
class Router {
 public:
  // `external_metrics` may be null: external discovery is still served (empty or not, so the
  // APIService stays available) and external metric requests answer 404.
  Router(std::shared_ptr<const CustomMetricsHandler> custom_metrics,
         std::shared_ptr<const ExternalMetricsHandler> external_metrics, SnapshotSource snapshots,
         HealthChecks health, std::string version);
  // Without external metrics handling (as before external.metrics.k8s.io was served).
  Router(std::shared_ptr<const CustomMetricsHandler> custom_metrics, SnapshotSource snapshots,
         HealthChecks health, std::string version);

  server::HttpResponse handle(const server::HttpRequest& request) const;

 private:
  server::HttpResponse route(const server::HttpRequest& request) const;
  // The answer to a path under /apis/external.metrics.k8s.io; throws ApiError.
  Json external(const std::vector<std::string>& parts, const RequestTarget& target) const;
  server::HttpResponse health(const std::string& endpoint, const std::vector<HealthCheck>& checks,
                              bool verbose) const;

  std::shared_ptr<const CustomMetricsHandler> custom_metrics_;
  std::shared_ptr<const ExternalMetricsHandler> external_metrics_;
  SnapshotSource snapshots_;
  HealthChecks health_;
  std::string version_;
};

}  // namespace metrics_adapter::api
