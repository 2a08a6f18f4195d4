#pragma once

#include <optional>
#include <string>

#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::api {

// One custom.metrics.k8s.io metric request, after routing (docs/api-contract.md "Custom metrics
// routes").
struct CustomMetricRequest {
  std::string version;         // "v1beta1" | "v1beta2"
  std::string resource;        // URL segment: "pods", "deployments.apps"; "namespaces" for R3
  std::string namespace_name;  // "" for root-scoped requests (R1, R3)
  std::string name;            // object name, or "*" for every object in scope
  std::string metric;
  std::string label_selector;         // selects objects (wildcards only)
  std::string metric_label_selector;  // selects series

  bool namespaced() const { return !namespace_name.empty(); }
  bool wildcard() const { return name == "*"; }
};

// The metric request `info` asks for under /apis/custom.metrics.k8s.io/<version>/, read from the
// same attributes authorization checked (resource, name, subresource, namespace), as upstream's
// handler reads its RequestInfo. nullopt when no route matches (404); throws ApiError 400
// "invalid request path" for namespaces/<ns>/<metric>, as upstream does.
std::optional<CustomMetricRequest> parseCustomMetricRequest(const server::RequestInfo& info);

}  // namespace metrics_adapter::api
