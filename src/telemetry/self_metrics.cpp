#include "metrics_adapter/telemetry/self_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace metrics_adapter::telemetry {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

// API answers range from a cached discovery document (well under 1 ms) to a PromQL query
// that runs into the client timeout (seconds).
const Histogram::BucketBoundaries kRequestBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,    1,     2.5,  5,     10};
// A relist is one /api/v1/series call per distinct seriesQuery, run in parallel; large
// clusters take tens of seconds.
const Histogram::BucketBoundaries kRelistBuckets = {0.01, 0.05, 0.1, 0.25, 0.5, 1,  2.5,
                                                    5,    10,   20,  30,   60,  120};

std::string text(std::string_view value) { return std::string(value); }

}  // namespace

struct SelfMetrics::Impl {
  prometheus::Registry registry;

  Family<Counter>& requests = prometheus::BuildCounter()
                                  .Name("metrics_adapter_requests_total")
                                  .Help("API requests by route template and HTTP status code.")
                                  .Register(registry);
  Family<Histogram>& request_duration =
      prometheus::BuildHistogram()
          .Name("metrics_adapter_request_duration_seconds")
          .Help("Time to answer an API request, by route template.")
          .Register(registry);
  Gauge& in_flight = prometheus::BuildGauge()
                         .Name("metrics_adapter_requests_in_flight")
                         .Help("API requests being answered right now.")
                         .Register(registry)
                         .Add({});
  Family<Counter>& prometheus_requests =
      prometheus::BuildCounter()
          .Name("metrics_adapter_prometheus_requests_total")
          .Help("Calls to the Prometheus HTTP API by backend, endpoint and outcome.")
          .Register(registry);
  Family<Histogram>& prometheus_duration =
      prometheus::BuildHistogram()
          .Name("metrics_adapter_prometheus_request_duration_seconds")
          .Help("Duration of calls to the Prometheus HTTP API, by backend and endpoint.")
          .Register(registry);
  Counter& bad_samples = prometheus::BuildCounter()
                             .Name("metrics_adapter_prometheus_bad_samples_total")
                             .Help(
                                 "Query samples left out because their time cannot be served "
                                 "(NaN, infinite, before 1970 or after 9999).")
                             .Register(registry)
                             .Add({});
  Family<Counter>& resource_omissions =
      prometheus::BuildCounter()
          .Name("metrics_adapter_resource_metrics_omitted_total")
          .Help(
              "metrics.k8s.io pods and nodes left out of answers, by reason (no_data: no sample; "
              "bad_value: NaN, infinite, negative or too large).")
          .Register(registry);
  Family<Histogram>& relist_duration =
      prometheus::BuildHistogram()
          .Name("metrics_adapter_relist_duration_seconds")
          .Help("Duration of one rediscovery of every rule's series, by backend.")
          .Register(registry);
  Family<Gauge>& relist_failed =
      prometheus::BuildGauge()
          .Name("metrics_adapter_relist_failed_queries")
          .Help("seriesQuery calls that failed in the last relist, by backend.")
          .Register(registry);
  Family<Gauge>& relist_success =
      prometheus::BuildGauge()
          .Name("metrics_adapter_backend_last_successful_relist_timestamp_seconds")
          .Help("When a backend last answered every seriesQuery of a relist (Unix time).")
          .Register(registry);
  Family<Gauge>& rule_series = prometheus::BuildGauge()
                                   .Name("metrics_adapter_rule_series")
                                   .Help("Series a rule's seriesQuery returned in its last run.")
                                   .Register(registry);
  Family<Gauge>& rule_metrics = prometheus::BuildGauge()
                                    .Name("metrics_adapter_rule_metrics")
                                    .Help("Metrics a rule currently exposes.")
                                    .Register(registry);
  Family<Counter>& rule_errors = prometheus::BuildCounter()
                                     .Name("metrics_adapter_rule_errors_total")
                                     .Help("Relist runs in which a rule's seriesQuery failed.")
                                     .Register(registry);
  Family<Counter>& object_cache = prometheus::BuildCounter()
                                      .Name("metrics_adapter_object_cache_requests_total")
                                      .Help("Object lister cache lookups by result (hit or miss).")
                                      .Register(registry);
  Counter& cache_hits = object_cache.Add({{"result", "hit"}});
  Counter& cache_misses = object_cache.Add({{"result", "miss"}});
  Family<Counter>& object_lists = prometheus::BuildCounter()
                                      .Name("metrics_adapter_object_lists_total")
                                      .Help("Object lister LISTs by reason (initial, gone, retry).")
                                      .Register(registry);
  Family<Counter>& object_watches =
      prometheus::BuildCounter()
          .Name("metrics_adapter_object_watches_total")
          .Help("Object lister watches by how they ended (closed, gone, error).")
          .Register(registry);
  Family<Counter>& reloads = prometheus::BuildCounter()
                                 .Name("metrics_adapter_config_reloads_total")
                                 .Help("Config reloads by result (success or failure).")
                                 .Register(registry);
  Counter& reload_successes = reloads.Add({{"result", "success"}});
  Counter& reload_failures = reloads.Add({{"result", "failure"}});
  Gauge& last_reload_success =
      prometheus::BuildGauge()
          .Name("metrics_adapter_config_last_reload_success_timestamp_seconds")
          .Help("Unix time of the last config reload that was swapped in.")
          .Register(registry)
          .Add({});
  Gauge& forecast_selections_pending =
      prometheus::BuildGauge()
          .Name("metrics_adapter_forecast_first_selections_pending")
          .Help(
              "Forecast series whose first method selection has not run yet (they serve "
              "their latest value).")
          .Register(registry)
          .Add({});
  Counter& forecast_ready_before_selections =
      prometheus::BuildCounter()
          .Name("metrics_adapter_forecast_ready_before_selections_total")
          .Help(
              "Starts that reported Ready before every forecast series had its first method "
              "selection (the 2-minute readiness grace ran out).")
          .Register(registry)
          .Add({});
  Family<Counter>& audit_events =
      prometheus::BuildCounter()
          .Name("metrics_adapter_audit_events_total")
          .Help("Audit events written or sent, by backend (log, webhook).")
          .Register(registry);
  // Counted per event, on the answering thread in blocking mode: looked up once.
  Counter& audit_log_events = audit_events.Add({{"backend", "log"}});
  Counter& audit_webhook_events = audit_events.Add({{"backend", "webhook"}});
  Family<Counter>& audit_dropped =
      prometheus::BuildCounter()
          .Name("metrics_adapter_audit_events_dropped_total")
          .Help(
              "Audit events lost, by backend and reason (buffer_full, too_large, write_error, "
              "send_error).")
          .Register(registry);
  Family<Gauge>& build_info = prometheus::BuildGauge()
                                  .Name("metrics_adapter_build_info")
                                  .Help("Always 1; the version label names the running build.")
                                  .Register(registry);

  std::mutex mutex;  // guards the label bookkeeping below, not the metric values
  std::map<std::string, std::pair<Gauge*, Gauge*>, std::less<>> rules;
  Gauge* build_info_gauge = nullptr;

  // The series of one (route, code), looked up once: Family::Add builds a label map and a new
  // Histogram on every call even when the series exists, a dozen allocations per request.
  // Routes are a fixed handful and codes few, so a short list does.
  struct RequestSeries {
    std::string route;
    int code;
    Counter* requests;
    Histogram* duration;
  };
  std::mutex request_series_mutex;
  std::vector<RequestSeries> request_series;

  std::pair<Counter*, Histogram*> requestSeries(std::string_view route, int code) {
    std::lock_guard lock(request_series_mutex);
    for (const RequestSeries& known : request_series) {
      if (known.code == code && known.route == route) return {known.requests, known.duration};
    }
    const RequestSeries& added = request_series.emplace_back(
        RequestSeries{std::string(route), code,
                      &requests.Add({{"route", text(route)}, {"code", std::to_string(code)}}),
                      &request_duration.Add({{"route", text(route)}}, kRequestBuckets)});
    return {added.requests, added.duration};
  }
};

SelfMetrics::SelfMetrics() : impl_(std::make_unique<Impl>()) {}
SelfMetrics::~SelfMetrics() = default;

void SelfMetrics::observeRequest(std::string_view route, int code,
                                 std::chrono::duration<double> latency) {
  const auto [requests, duration] = impl_->requestSeries(route, code);
  requests->Increment();
  duration->Observe(latency.count());
}

void SelfMetrics::requestStarted() { impl_->in_flight.Increment(); }

void SelfMetrics::requestFinished() { impl_->in_flight.Decrement(); }

void SelfMetrics::observePrometheusCall(std::string_view backend, std::string_view endpoint,
                                        std::string_view outcome,
                                        std::chrono::duration<double> latency) {
  impl_->prometheus_requests
      .Add({{"backend", text(backend)}, {"endpoint", text(endpoint)}, {"outcome", text(outcome)}})
      .Increment();
  impl_->prometheus_duration
      .Add({{"backend", text(backend)}, {"endpoint", text(endpoint)}}, kRequestBuckets)
      .Observe(latency.count());
}

void SelfMetrics::countBadSamples(std::size_t count) {
  impl_->bad_samples.Increment(static_cast<double>(count));
}

void SelfMetrics::countResourceOmissions(std::string_view resource, std::string_view reason,
                                         std::size_t count) {
  impl_->resource_omissions.Add({{"resource", text(resource)}, {"reason", text(reason)}})
      .Increment(static_cast<double>(count));
}

void SelfMetrics::observeRelist(std::string_view backend, std::chrono::duration<double> duration,
                                std::size_t failed_queries) {
  const prometheus::Labels labels{{"backend", text(backend)}};
  impl_->relist_duration.Add(labels, kRelistBuckets).Observe(duration.count());
  impl_->relist_failed.Add(labels).Set(static_cast<double>(failed_queries));
}

void SelfMetrics::setBackendRelistSuccess(std::string_view backend,
                                          std::chrono::system_clock::time_point at) {
  impl_->relist_success.Add({{"backend", text(backend)}})
      .Set(std::chrono::duration<double>(at.time_since_epoch()).count());
}

void SelfMetrics::setRuleDiscovery(std::string_view rule, std::size_t series, std::size_t metrics) {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->rules.find(rule);
  if (it == impl_->rules.end()) {
    const prometheus::Labels labels{{"rule", text(rule)}};
    it = impl_->rules
             .emplace(text(rule),
                      std::pair{&impl_->rule_series.Add(labels), &impl_->rule_metrics.Add(labels)})
             .first;
  }
  it->second.first->Set(static_cast<double>(series));
  it->second.second->Set(static_cast<double>(metrics));
}

void SelfMetrics::keepRules(const std::vector<std::string>& rules) {
  std::set<std::string_view> kept(rules.begin(), rules.end());
  std::lock_guard lock(impl_->mutex);
  for (auto it = impl_->rules.begin(); it != impl_->rules.end();) {
    if (kept.contains(it->first)) {
      ++it;
      continue;
    }
    impl_->rule_series.Remove(it->second.first);
    impl_->rule_metrics.Remove(it->second.second);
    it = impl_->rules.erase(it);
  }
}

void SelfMetrics::countRuleError(std::string_view rule) {
  impl_->rule_errors.Add({{"rule", text(rule)}}).Increment();
}

void SelfMetrics::countObjectCache(bool hit) {
  (hit ? impl_->cache_hits : impl_->cache_misses).Increment();
}

void SelfMetrics::countObjectList(std::string_view reason) {
  impl_->object_lists.Add({{"reason", text(reason)}}).Increment();
}

void SelfMetrics::countObjectWatch(std::string_view end) {
  impl_->object_watches.Add({{"end", text(end)}}).Increment();
}

void SelfMetrics::countAuditEvent(std::string_view backend, std::size_t count) {
  const auto events = static_cast<double>(count);
  if (backend == "log") return impl_->audit_log_events.Increment(events);
  if (backend == "webhook") return impl_->audit_webhook_events.Increment(events);
  impl_->audit_events.Add({{"backend", text(backend)}}).Increment(events);
}

void SelfMetrics::countAuditDropped(std::string_view backend, std::string_view reason,
                                    std::size_t count) {
  impl_->audit_dropped.Add({{"backend", text(backend)}, {"reason", text(reason)}})
      .Increment(static_cast<double>(count));
}

void SelfMetrics::countConfigReload(bool success) {
  if (!success) {
    impl_->reload_failures.Increment();
    return;
  }
  impl_->reload_successes.Increment();
  impl_->last_reload_success.SetToCurrentTime();
}

void SelfMetrics::setForecastSelectionsPending(std::size_t series) {
  impl_->forecast_selections_pending.Set(static_cast<double>(series));
}

void SelfMetrics::countForecastReadyBeforeSelections() {
  impl_->forecast_ready_before_selections.Increment();
}

void SelfMetrics::setBuildInfo(std::string_view version) {
  std::lock_guard lock(impl_->mutex);
  if (impl_->build_info_gauge != nullptr) impl_->build_info.Remove(impl_->build_info_gauge);
  impl_->build_info_gauge = &impl_->build_info.Add({{"version", text(version)}});
  impl_->build_info_gauge->Set(1);
}

std::string SelfMetrics::exposition() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, impl_->registry.Collect());
  return out.str();
}

namespace {
thread_local std::chrono::duration<double> prometheus_time_on_this_thread{0};
}  // namespace

void PrometheusTimeOnThisThread::reset() { prometheus_time_on_this_thread = {}; }

void PrometheusTimeOnThisThread::add(std::chrono::duration<double> waited) {
  prometheus_time_on_this_thread += waited;
}

std::chrono::duration<double> PrometheusTimeOnThisThread::total() {
  return prometheus_time_on_this_thread;
}

}  // namespace metrics_adapter::telemetry
