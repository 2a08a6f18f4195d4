#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/prometheus/backend_set.h"
#include "metrics_adapter/prometheus/coalescing_prometheus_api.h"
#include "metrics_adapter/prometheus/prometheus_client.h"

namespace metrics_adapter::telemetry {
class SelfMetrics;
}

namespace metrics_adapter::app {

// The client options of the config's `backend`: its own URL, verb, headers, TLS files and
// credentials, over the flags' limits (response size, client timeout, POST threshold). Nothing of
// the flags' credentials or headers: they belong to the flags' own Prometheus.
prometheus::PrometheusClientOptions backendClientOptions(
    const config::Backend& backend, const prometheus::PrometheusClientOptions& flags);

// Builds the backends a config names: "default" from the flags (or the config's own `default`
// entry, which replaces them), and every entry of `backends`, each a PrometheusClient under its
// own CoalescingPrometheusApi. A backend whose settings did not change since the last build is
// kept, with its connections and cached answers, so a reload costs nothing for it; a changed URL
// or credential gives a new client. Thread-safe.
class BackendPool {
 public:
  BackendPool(prometheus::PrometheusClientOptions flags, prometheus::CoalescingOptions coalescing,
              std::shared_ptr<telemetry::SelfMetrics> self_metrics);

  // Throws config::ConfigError naming file, backend and field (an unreadable CA, certificate,
  // key, token or password file; a URL the client refuses). The last good set stays in use.
  std::shared_ptr<const prometheus::BackendSet> build(const config::AdapterConfig& config);

  // Ends every call in progress of every backend of the last build, and fails later ones at once
  // (shutdown).
  void cancelCalls();

 private:
  struct Entry {
    prometheus::PrometheusClientOptions options;
    std::shared_ptr<prometheus::PrometheusClient> client;
    std::shared_ptr<prometheus::CoalescingPrometheusApi> api;
  };
  std::shared_ptr<const prometheus::Backend> backendFor(const config::AdapterConfig& config,
                                                        const config::Backend& backend,
                                                        bool from_flags,
                                                        std::map<std::string, Entry>& next);

  const prometheus::PrometheusClientOptions flags_;
  const prometheus::CoalescingOptions coalescing_;
  std::shared_ptr<telemetry::SelfMetrics> self_metrics_;
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;  // by backend name, as of the last build
  // Every client still in use, those of earlier builds too (a failed reload keeps them serving).
  std::vector<std::weak_ptr<prometheus::PrometheusClient>> clients_;
};

// The backends of the tools (check-config, explain, --dry-run): with `everywhere` (a series
// file), every backend the config names is it; else the real ones, as the server builds them.
// Throws config::ConfigError, or std::invalid_argument naming a --prometheus-* flag.
std::shared_ptr<const prometheus::BackendSet> toolBackends(
    const config::AdapterConfig& config, const prometheus::PrometheusClientOptions& flags,
    const std::shared_ptr<prometheus::PrometheusApi>& everywhere = nullptr);

// "default (https://prometheus:9090), gpu (http://thanos:10902)": for logs and tools.
std::string describeBackends(const prometheus::BackendSet& backends);

}  // namespace metrics_adapter::app
