#pragma once

#include <string>
#include <vector>

#include "metrics_adapter/kube/rest_mapper.h"
#include "metrics_adapter/promql/label_selector.h"

namespace metrics_adapter::kube {

// Finds the objects a wildcard request with a labelSelector covers. Implemented against the
// Kubernetes API; absent when the adapter runs without one.
class ObjectLister {
 public:
  virtual ~ObjectLister() = default;

  // Names of the `resource` objects in `namespace_name` ("" for cluster-scoped resources or
  // all namespaces) whose labels match `selector`. Throws std::runtime_error when the
  // Kubernetes API cannot answer.
  virtual std::vector<std::string> listNames(const ResourceInfo& resource,
                                             const std::string& namespace_name,
                                             const promql::LabelSelector& selector) = 0;
};

}  // namespace metrics_adapter::kube
