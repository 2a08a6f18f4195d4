#include "metrics_adapter/api/custom_metric_request.h"

#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::api {

std::optional<CustomMetricRequest> parseCustomMetricRequest(const std::string& version,
                                                            std::span<const std::string> rest,
                                                            const RequestTarget& target) {
  CustomMetricRequest request;
  request.version = version;
  request.label_selector = target.get("labelSelector");
  request.metric_label_selector = target.get("metricLabelSelector");

  const bool under_namespace = !rest.empty() && rest[0] == "namespaces";
  if (under_namespace && rest.size() == 4 && rest[2] == "metrics") {
    // R3: the Namespace object itself (root-scoped metric on "namespaces").
    request.resource = "namespaces";
    request.name = rest[1];
    request.metric = rest[3];
    return request;
  }
  // namespaces/<ns>/metrics/<x>/<y> is no route (upstream mis-parses it, api.md §3.2).
  if (under_namespace && rest.size() == 5 && rest[2] != "metrics") {
    request.namespace_name = rest[1];
    request.resource = rest[2];
    request.name = rest[3];
    request.metric = rest[4];
    return request;
  }
  if (under_namespace && rest.size() == 3) throw ApiError::badRequest("invalid request path");
  if (!under_namespace && rest.size() == 3) {
    request.resource = rest[0];
    request.name = rest[1];
    request.metric = rest[2];
    return request;
  }
  return std::nullopt;
}

}  // namespace metrics_adapter::api
