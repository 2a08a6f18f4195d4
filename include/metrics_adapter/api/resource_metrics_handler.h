#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/registry.h"
#include "metrics_adapter/kube/object_lister.h"
#include "metrics_adapter/resource/resource_metrics.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::api {

// One metrics.k8s.io/v1beta1 request (docs/api-contract.md "Resource metrics routes").
struct ResourceMetricsRequest {
  bool nodes = false;          // nodes, else pods
  std::string namespace_name;  // pods: "" = every namespace
  std::string name;            // "" = a list
  std::string label_selector;  // lists only
  std::string field_selector;  // lists only
};

// The request `info` asks for under /apis/metrics.k8s.io/v1beta1/, read from the attributes
// authorization checked: list or get of nodes, pods, namespaces/<ns>/pods; nullopt otherwise.
std::optional<ResourceMetricsRequest> parseResourceMetricsRequest(const server::RequestInfo& info);

// "3m0s": a duration as Go's time.Duration.String() writes it, the form of metav1.Duration
// (PodMetrics.window).
std::string formatGoDuration(std::chrono::milliseconds duration);

// Answers metrics.k8s.io from resourceRules: the Running pods and the nodes from the cached
// object lists (no LIST per request), their usage from resource::ResourceMetrics, PodMetrics and
// NodeMetrics as metrics-server writes them. Thread-safe.
class ResourceMetricsHandler {
 public:
  // `lister` may be null (no Kubernetes API): every request then answers 503.
  ResourceMetricsHandler(std::shared_ptr<kube::ObjectLister> lister,
                         std::shared_ptr<const resource::ResourceMetrics> metrics);

  // The PodMetrics(List) or NodeMetrics(List) of `request` under `rules` (read from the current
  // registry snapshot, so reloads apply) asked of `backend`, for the objects of `mapper`'s pods
  // and nodes.
  // Throws ApiError: 400 bad selector, 404 unknown object or object without metrics, 503
  // Kubernetes or Prometheus unavailable (naming the query), 500 rule failures.
  // The answer as compact JSON text, written directly (a JSON tree of a 10,000-pod list cost
  // 70 ms and tens of MiB).
  std::string render(const ResourceMetricsRequest& request,
                     const discovery::CompiledResourceRules& rules,
                     const prometheus::Backend& backend, const kube::RestMapper& mapper) const;
  // The same as a JSON value (tests, pretty-printed answers).
  Json handle(const ResourceMetricsRequest& request, const discovery::CompiledResourceRules& rules,
              const prometheus::Backend& backend, const kube::RestMapper& mapper) const;

 private:
  std::string pods(const ResourceMetricsRequest& request,
                   const discovery::CompiledResourceRules& rules,
                   const prometheus::Backend& backend, const kube::RestMapper& mapper) const;
  std::string nodes(const ResourceMetricsRequest& request,
                    const discovery::CompiledResourceRules& rules,
                    const prometheus::Backend& backend, const kube::RestMapper& mapper) const;

  std::shared_ptr<kube::ObjectLister> lister_;
  std::shared_ptr<const resource::ResourceMetrics> metrics_;
};

}  // namespace metrics_adapter::api
