#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "app/periodic_task.h"
#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/kube/rest_mapper.h"

namespace metrics_adapter::app {

// Re-reads the cluster's API discovery every `interval` and calls `on_change` with a new REST
// mapping when the set of resources changed (a CRD was installed or removed), so rules naming
// it are enabled without a restart. Failures keep the current mapping.
class RestMappingRefresher {
 public:
  using OnChange = std::function<void(std::shared_ptr<const kube::RestMapper>)>;

  RestMappingRefresher(std::shared_ptr<kube::KubeApi> api, std::chrono::milliseconds interval,
                       std::vector<kube::ResourceInfo> current, OnChange on_change);

  void start() { task_.start(); }
  void stop() { task_.stop(); }
  // One refresh now; true when the mapping changed.
  bool refreshOnce();

 private:
  std::shared_ptr<kube::KubeApi> api_;
  std::vector<kube::ResourceInfo> current_;
  OnChange on_change_;
  PeriodicTask task_;  // last: stops before the members it uses go away
};

}  // namespace metrics_adapter::app
