#include "app/rest_mapping_refresher.h"

#include <spdlog/spdlog.h>

#include "metrics_adapter/kube/api_discovery.h"

namespace metrics_adapter::app {

RestMappingRefresher::RestMappingRefresher(std::shared_ptr<kube::KubeApi> api,
                                           std::chrono::milliseconds interval,
                                           std::vector<kube::ResourceInfo> current,
                                           OnChange on_change)
    : api_(std::move(api)),
      current_(std::move(current)),
      on_change_(std::move(on_change)),
      task_(interval, [this] { refreshOnce(); }) {}

bool RestMappingRefresher::refreshOnce() {
  std::vector<kube::ResourceInfo> resources;
  try {
    resources = kube::discoverResources(*api_, std::chrono::seconds(10));
  } catch (const std::exception& e) {
    SPDLOG_WARN("REST mapping refresh failed, keeping the current mapping: {}", e.what());
    return false;
  }
  if (resources == current_) return false;
  SPDLOG_INFO("REST mapping changed: {} resources (was {})", resources.size(), current_.size());
  current_ = resources;
  on_change_(std::make_shared<const kube::RestMapper>(std::move(resources)));
  return true;
}

}  // namespace metrics_adapter::app
