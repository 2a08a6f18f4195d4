#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::telemetry {

// The adapter's own metrics, served at /metrics in the Prometheus text format. The adapter builds
// one and hands it to every component that records (a test builds its own and reads
// exposition()); every function is thread-safe and cheap enough for the request path. Label
// values are bounded by the callers (routes are templates, never raw paths; rule ids come from
// the config).
class SelfMetrics {
 public:
  SelfMetrics();
  ~SelfMetrics();
  SelfMetrics(const SelfMetrics&) = delete;
  SelfMetrics& operator=(const SelfMetrics&) = delete;

  // One API request: `route` is a template such as "custom_metric", "external_metric",
  // "discovery", "health", "metrics", "other"; `code` the HTTP status.
  void observeRequest(std::string_view route, int code, std::chrono::duration<double> latency);
  void requestStarted();   // in-flight gauge +1
  void requestFinished();  // in-flight gauge -1

  // One Prometheus API call to `backend` (a name from the config's backends, or "default"):
  // endpoint "query", "query_range" or "series"; outcome "success", "timeout", "unreachable",
  // "http_error", "api_error" or "bad_response".
  void observePrometheusCall(std::string_view backend, std::string_view endpoint,
                             std::string_view outcome, std::chrono::duration<double> latency);

  // Samples of one Prometheus answer left out because their time cannot be served.
  void countBadSamples(std::size_t count);

  // metrics.k8s.io objects asked for but left out of an answer: `resource` "pods" or "nodes",
  // `reason` "no_data" (no sample for it) or "bad_value" (NaN, infinite, negative or too large).
  void countResourceOmissions(std::string_view resource, std::string_view reason,
                              std::size_t count);

  // One relist run of one backend's rules, and what each rule found in it (rule = "rules[0]",
  // "externalRules[1]").
  void observeRelist(std::string_view backend, std::chrono::duration<double> duration,
                     std::size_t failed_queries);
  // The end of a relist in which `backend` answered every seriesQuery.
  void setBackendRelistSuccess(std::string_view backend, std::chrono::system_clock::time_point at);
  void setRuleDiscovery(std::string_view rule, std::size_t series, std::size_t metrics);
  void countRuleError(std::string_view rule);  // the rule's seriesQuery failed
  // Drops the series and metrics gauges of rules not named (those of a replaced config).
  void keepRules(const std::vector<std::string>& rules);

  // Object lister cache (wildcards with a labelSelector).
  void countObjectCache(bool hit);
  // The object lister's LISTs by reason: "initial" (first of a resource and namespace), "gone"
  // (the watch's resourceVersion expired: 410) or "retry" (after a failed LIST).
  void countObjectList(std::string_view reason);
  // The object lister's watches by how they ended: "closed" (by the server, e.g. at its
  // timeoutSeconds; watched again from the last resourceVersion), "gone" (410) or "error".
  void countObjectWatch(std::string_view end);

  // Config reloads (file change or SIGHUP): success swapped the rules in, failure kept the old.
  void countConfigReload(bool success);

  void setBuildInfo(std::string_view version);

  // Forecast series whose first method selection has not run yet (they serve their latest
  // value), and the starts that reported Ready before every first selection was done (the
  // 2-minute readiness grace ran out).
  void setForecastSelectionsPending(std::size_t series);
  void countForecastReadyBeforeSelections();

  // Audit (--audit-log-*, --audit-webhook-*): `backend` is "log" or "webhook". An event handed
  // to the backend and written or sent; an event lost, by `reason`: "buffer_full" (batch mode's
  // buffer was full), "too_large" (over the truncate limit even without its bodies),
  // "write_error" (the file could not be written) or "send_error" (the webhook gave up).
  void countAuditEvent(std::string_view backend, std::size_t count = 1);
  void countAuditDropped(std::string_view backend, std::string_view reason, std::size_t count = 1);

  // The text exposition format 0.0.4 of every metric.
  std::string exposition() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Time the calling thread has spent waiting on Prometheus since its last reset(). A request is
// handled on one worker thread from start to end, so the access log reads it per request.
class PrometheusTimeOnThisThread {
 public:
  static void reset();
  static void add(std::chrono::duration<double> waited);
  static std::chrono::duration<double> total();
};

}  // namespace metrics_adapter::telemetry
