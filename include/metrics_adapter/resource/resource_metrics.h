#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/prometheus/backend_set.h"
#include "metrics_adapter/resource/resource_query.h"
#include "metrics_adapter/resource/usage.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::resource {

struct ResourceMetricsOptions {
  std::chrono::milliseconds query_timeout{std::chrono::seconds(10)};  // per Prometheus query
  // Prometheus queries in flight at once for one podMetrics call (each namespace needs two:
  // CPU and memory), so a list over thousands of namespaces never fans out unbounded.
  std::size_t max_concurrent_queries = 8;
};

struct PodRef {
  std::string namespace_name;
  std::string name;
};

// A namespace whose CPU or memory query failed; its pods are in neither `pods` nor `omitted`.
struct NamespaceFailure {
  std::string namespace_name;
  ResourceQueryError error;  // names the query (the CPU one when both failed)
};

struct PodMetricsResult {
  std::vector<PodUsage> pods;              // in the order asked, each pod once
  std::vector<Omission> omitted;           // asked for, answered, but without usable values
  std::vector<NamespaceFailure> failures;  // sorted by namespace
};

struct NodeMetricsResult {
  std::vector<NodeUsage> nodes;  // in the order asked, each node once
  std::vector<Omission> omitted;
};

// metrics.k8s.io usage from resourceRules (docs/api-contract.md "prometheus-adapter:
// resource-rule rendering"). Thread-safe; holds no state between calls.
class ResourceMetrics {
 public:
  // Queries go to the backend each call is given (resourceRules.backend), typically a
  // CoalescingPrometheusApi, so identical queries of concurrent requests share one call.
  // `self_metrics` may be null.
  ResourceMetrics(ResourceMetricsOptions options,
                  std::shared_ptr<telemetry::SelfMetrics> self_metrics);

  // Usage of `pods` (Running pods, already filtered by the request's selectors) at `at`: one
  // CPU and one memory query per namespace, at most options.max_concurrent_queries at once
  // (on the calling thread and a few short-lived helpers). A namespace whose query fails is
  // reported in `failures` and does not hide the others: a single-namespace request should
  // answer an error naming the query, a list over all namespaces may serve the rest. Pods
  // without usable values are in `omitted` (logged once per call and counted). Does not throw
  // for Prometheus or template failures.
  PodMetricsResult podMetrics(const prometheus::Backend& backend,
                              const discovery::CompiledResourceRules& rules,
                              const std::vector<PodRef>& pods,
                              prometheus::Clock::time_point at) const;

  // Usage of `nodes` at `at`: one CPU and one memory query for all of them, run concurrently.
  // Throws ResourceQueryError naming the query when either fails (prometheus-adapter answers an
  // empty list instead; an error is better on purpose).
  NodeMetricsResult nodeMetrics(const prometheus::Backend& backend,
                                const discovery::CompiledResourceRules& rules,
                                const std::vector<std::string>& nodes,
                                prometheus::Clock::time_point at) const;

 private:
  // The answer shared with every caller of the same query (PrometheusApi::sharedQuery).
  std::shared_ptr<const prometheus::QueryResult> runQuery(const prometheus::Backend& backend,
                                                          const std::string& promql,
                                                          prometheus::Clock::time_point at) const;
  void account(std::string_view resource, const std::vector<Omission>& omitted) const;

  ResourceMetricsOptions options_;
  std::shared_ptr<telemetry::SelfMetrics> self_metrics_;
};

}  // namespace metrics_adapter::resource
