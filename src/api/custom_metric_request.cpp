#include "metrics_adapter/api/custom_metric_request.h"

#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::api {

std::optional<CustomMetricRequest> parseCustomMetricRequest(const server::RequestInfo& info) {
  // A watch or proxy verb, or a list (no name), is no metric route: serving it as a get would
  // answer something other than what was authorized.
  if (!info.resource_request || info.verb != "get" || info.resource_parts.size() > 3) {
    if (info.resource_request && !info.namespace_name.empty() && info.resource_parts.size() == 1 &&
        info.verb == "list") {
      throw ApiError::badRequest("invalid request path");  // namespaces/<ns>/<metric>
    }
    return std::nullopt;
  }
  CustomMetricRequest request;
  request.version = info.api_version;
  request.label_selector = info.get("labelSelector");
  request.metric_label_selector = info.get("metricLabelSelector");
  if (!info.namespace_name.empty() && info.resource == "metrics") {
    // R3: the Namespace object itself (a root-scoped metric on "namespaces"), upstream's rewrite
    // of the pseudo-resource "metrics". namespaces/<ns>/metrics/<x>/<y> is no route.
    if (info.resource_parts.size() != 2) return std::nullopt;
    request.resource = "namespaces";
    request.name = info.namespace_name;
    request.metric = info.name;
    return request;
  }
  if (info.resource_parts.size() != 3) return std::nullopt;
  request.namespace_name = info.namespace_name;
  request.resource = info.resource;
  request.name = info.name;
  request.metric = info.subresource;
  return request;
}

}  // namespace metrics_adapter::api
