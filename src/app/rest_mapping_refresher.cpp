#include "app/rest_mapping_refresher.h"

#include <spdlog/spdlog.h>

#include "metrics_adapter/kube/api_discovery.h"

namespace metrics_adapter::app {

RestMappingRefresher::RestMappingRefresher(std::shared_ptr<kube::KubeApi> api,
                                           std::chrono::milliseconds interval,
                                           std::vector<kube::ResourceInfo> current,
                                           OnChange on_change)
    : api_(std::move(api)),
      interval_(interval),
      current_(std::move(current)),
      on_change_(std::move(on_change)) {}

RestMappingRefresher::~RestMappingRefresher() { stop(); }

bool RestMappingRefresher::refreshOnce() {
  std::vector<kube::ResourceInfo> resources;
  try {
    resources = kube::discoverResources(*api_, std::chrono::seconds(10));
  } catch (const std::exception& e) {
    spdlog::warn("REST mapping refresh failed, keeping the current mapping: {}", e.what());
    return false;
  }
  if (resources == current_) return false;
  spdlog::info("REST mapping changed: {} resources (was {})", resources.size(), current_.size());
  current_ = resources;
  on_change_(std::make_shared<const kube::RestMapper>(std::move(resources)));
  return true;
}

void RestMappingRefresher::start() {
  loop_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!wakeup_.wait_for(lock, interval_, [this] { return stopping_; })) {
      lock.unlock();
      refreshOnce();
      lock.lock();
    }
  });
}

void RestMappingRefresher::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  if (loop_.joinable()) loop_.join();
}

}  // namespace metrics_adapter::app
