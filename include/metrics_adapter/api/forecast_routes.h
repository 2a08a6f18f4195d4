#pragma once

#include <memory>
#include <optional>

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/external_metrics_handler.h"
#include "metrics_adapter/forecast/forecast_service.h"
#include "metrics_adapter/server/https_server.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::api {

// The ExternalMetricValueList of the forecastRule named request.metric (docs/forecasting.md
// "Serving"): one item per series that matches the labelSelector, its value the forecast
// maximum over the horizon, its timestamp the grid time the forecast was made at. nullopt when
// no forecastRule has that name (externalRules answer then). Throws ApiError: 404 when the rule
// is not served in the namespace, 400 for a bad selector, 503 before the first fetch or when
// refreshes have failed for three refresh intervals.
std::optional<Json> forecastMetricValueList(const forecast::ForecastService& forecasts,
                                            const ExternalMetricRequest& request,
                                            forecast::Clock::time_point now);

// GET /apis/forecast.metrics-adapter.io/v1alpha1/namespaces/<ns>/observer/<rule>[?days=N]
// [&target=V][&threshold=V]: the observer page (text/html) of the rule's last N days (default
// 1). Throws ApiError: 404 unknown rule or namespace not served, 400 bad parameters, 503 before
// the first fetch.
server::HttpResponse observerPage(const forecast::ForecastService& forecasts,
                                  const server::RequestInfo& info);

}  // namespace metrics_adapter::api
