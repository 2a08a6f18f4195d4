#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

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
  ~RestMappingRefresher();

  void start();
  void stop();
  // One refresh now; true when the mapping changed.
  bool refreshOnce();

 private:
  std::shared_ptr<kube::KubeApi> api_;
  std::chrono::milliseconds interval_;
  std::vector<kube::ResourceInfo> current_;
  OnChange on_change_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool stopping_ = false;
  std::thread loop_;
};

}  // namespace metrics_adapter::app
