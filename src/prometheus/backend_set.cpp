#include "metrics_adapter/prometheus/backend_set.h"

#include <algorithm>

namespace metrics_adapter::prometheus {

BackendSet::BackendSet(std::vector<std::shared_ptr<const Backend>> backends)
    : backends_(std::move(backends)) {
  std::sort(backends_.begin(), backends_.end(),
            [](const auto& a, const auto& b) { return a->name < b->name; });
}

std::shared_ptr<const BackendSet> BackendSet::single(std::shared_ptr<PrometheusApi> api,
                                                     std::string url) {
  auto backend = std::make_shared<Backend>();
  backend->name = "default";
  backend->url = std::move(url);
  backend->api = std::move(api);
  return std::make_shared<const BackendSet>(
      std::vector<std::shared_ptr<const Backend>>{std::move(backend)});
}

const Backend* BackendSet::find(std::string_view name) const {
  auto it = std::lower_bound(
      backends_.begin(), backends_.end(), name,
      [](const auto& backend, std::string_view key) { return backend->name < key; });
  if (it == backends_.end() || (*it)->name != name) return nullptr;
  return it->get();
}

}  // namespace metrics_adapter::prometheus
