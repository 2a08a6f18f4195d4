#pragma once

#include <map>
#include <string>
#include <vector>

#include "metrics_adapter/kube/rest_mapper.h"
#include "metrics_adapter/promql/label_selector.h"

namespace metrics_adapter::kube {

// The metadata the adapter keeps of an object: what a label selector, a namespace filter and a
// metrics.k8s.io answer need, and nothing else (the informers hold 150 000 of them).
struct ObjectMeta {
  std::string namespace_name;  // metadata.namespace; "" for cluster-scoped objects
  std::string name;
  std::map<std::string, std::string> labels;
  std::string creation_timestamp;  // metadata.creationTimestamp as given (RFC 3339); may be ""
};

// Finds the objects a wildcard request with a labelSelector covers. Implemented against the
// Kubernetes API; absent when the adapter runs without one.
class ObjectLister {
 public:
  virtual ~ObjectLister() = default;

  // Names of the `resource` objects in `namespace_name` ("" for cluster-scoped resources or
  // all namespaces) whose labels match `selector`, in the order of listObjects. Throws
  // std::runtime_error when the Kubernetes API cannot answer.
  virtual std::vector<std::string> listNames(const ResourceInfo& resource,
                                             const std::string& namespace_name,
                                             const promql::LabelSelector& selector) = 0;

  // The `resource` objects in `namespace_name` ("" for cluster-scoped resources or all
  // namespaces) whose labels match `selector`, among those the API server returns for
  // `field_selector` (as in a LIST's fieldSelector, e.g. "status.phase=Running"; "" = all),
  // sorted by namespace, then name. Throws std::runtime_error when the Kubernetes API cannot
  // answer. Overriders keep the default argument.
  virtual std::vector<ObjectMeta> listObjects(const ResourceInfo& resource,
                                              const std::string& namespace_name,
                                              const promql::LabelSelector& selector,
                                              const std::string& field_selector = "") = 0;
};

}  // namespace metrics_adapter::kube
