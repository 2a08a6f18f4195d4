#pragma once

#include <string>
#include <vector>

#include "metrics_adapter/api/aggregated_discovery.h"
#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/discovery/registry.h"

namespace metrics_adapter::api {

inline constexpr const char* kCustomMetricsGroup = "custom.metrics.k8s.io";
inline constexpr const char* kExternalMetricsGroup = "external.metrics.k8s.io";
inline constexpr const char* kExternalMetricsVersion = "v1beta1";
inline constexpr const char* kResourceMetricsGroup = "metrics.k8s.io";
inline constexpr const char* kResourceMetricsVersion = "v1beta1";
// Our own group, for the forecast observer page (docs/forecasting.md "The observer page"); its
// APIService is opt-in (deploy/kustomize/components/forecast-observer).
inline constexpr const char* kForecastGroup = "forecast.metrics-adapter.io";
inline constexpr const char* kForecastVersion = "v1alpha1";
inline constexpr const char* kObserverResource = "observer";

// APIGroupList for /apis (docs/api-contract.md "Discovery documents", conformance C6):
// custom.metrics.k8s.io, then external.metrics.k8s.io. Both are always listed, rules or not, so
// neither APIService goes unavailable (docs/api-contract.md "Availability pitfalls" item 1).
Json apiGroupList();
// The same with metrics.k8s.io (v1beta1) last: served when the config has resourceRules.
Json apiGroupListWithResourceMetrics();
// APIGroup for /apis/custom.metrics.k8s.io (C9): versions v1beta1 and v1beta2.
Json customMetricsGroup();
// APIResourceList for /apis/custom.metrics.k8s.io/<version>: one entry per served
// (resource, metric), "resources": [] when nothing is discovered yet (never 404).
Json customMetricsResourceList(const std::string& version,
                               const discovery::RegistrySnapshot& snapshot);

// APIGroup for /apis/external.metrics.k8s.io: version v1beta1, preferred.
Json externalMetricsGroup();
// APIResourceList for /apis/external.metrics.k8s.io/v1beta1: one namespaced
// ExternalMetricValueList entry per external metric and per forecastRule (`forecasts`, listed
// once when an external metric has the same name), "resources": [] when there is none (C5).
Json externalMetricsResourceList(const discovery::RegistrySnapshot& snapshot,
                                 const std::vector<std::string>& forecasts = {});

// APIGroup for /apis/metrics.k8s.io (v1beta1) and its APIResourceList: nodes (NodeMetrics,
// cluster-scoped) and pods (PodMetrics, namespaced), verbs get and list, as metrics-server.
Json resourceMetricsGroup();
Json resourceMetricsResourceList();

// APIGroup for /apis/forecast.metrics-adapter.io and the APIResourceList of its v1alpha1: the
// namespaced resource `observer`, verb get (an HTML page per forecastRule).
Json forecastGroup();
Json forecastResourceList();

// The resources each group serves, from which both the legacy lists above and the aggregated
// discovery document are made: custom.metrics.k8s.io (v1beta1, then v1beta2, so that the first,
// the preferred version of a client reading it, is the legacy document's preferredVersion),
// external.metrics.k8s.io, metrics.k8s.io when `resource_metrics`, and
// forecast.metrics-adapter.io (its APIService is opt-in; a registered group-version missing
// from the aggregated document would be published with no resources).
std::vector<ApiGroupResources> servedResources(const discovery::RegistrySnapshot& snapshot,
                                               const std::vector<std::string>& forecasts,
                                               bool resource_metrics);

bool isCustomMetricsVersion(const std::string& version);

}  // namespace metrics_adapter::api
