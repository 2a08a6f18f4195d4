#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::prometheus {

// One Prometheus-compatible query API that rules name (`backends` in the config; the
// --prometheus-* flags define "default"). Each has its own client, connections, cache and
// coalescing, so one that is down or slow fails only the rules that name it.
struct Backend {
  std::string name;
  std::string url;  // for explain and logs: as configured, without credentials
  std::shared_ptr<PrometheusApi> api;
  // The deadline of one query against this backend; nullopt: the caller's (--prometheus-timeout).
  std::optional<std::chrono::milliseconds> query_timeout;
  bool optional = false;  // readiness does not wait for its first relist

  std::chrono::milliseconds queryTimeout(std::chrono::milliseconds fallback) const {
    return query_timeout.value_or(fallback);
  }
};

// The backends in force, by name. Immutable: a config reload builds a new set (keeping the
// Backend objects whose settings did not change, with their caches and connections).
class BackendSet {
 public:
  explicit BackendSet(std::vector<std::shared_ptr<const Backend>> backends);

  // A set holding only `api` as "default": for tools and tests with one Prometheus.
  static std::shared_ptr<const BackendSet> single(std::shared_ptr<PrometheusApi> api,
                                                  std::string url = "");

  // The backend called `name`, or null.
  const Backend* find(std::string_view name) const;
  // In name order.
  const std::vector<std::shared_ptr<const Backend>>& all() const { return backends_; }

 private:
  std::vector<std::shared_ptr<const Backend>> backends_;
};

}  // namespace metrics_adapter::prometheus
