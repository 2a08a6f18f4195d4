#include "metrics_adapter/api/custom_metrics_handler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/api/query_builder.h"
#include "metrics_adapter/promql/quantity.h"
#include "metrics_adapter/server/status.h"

namespace metrics_adapter::api {
namespace {

std::string notFoundMessage(const std::string& metric, const std::string& resource) {
  return "the server could not find the metric " + metric + " for " + resource;
}

promql::LabelSelector parseSelector(const std::string& text, const char* parameter) {
  try {
    return promql::parseLabelSelector(text);
  } catch (const promql::SelectorError& e) {
    throw ApiError::badRequest(std::string("invalid ") + parameter + " \"" + text +
                               "\": " + e.what());
  }
}

// One object's value in the answer. `name` points into the query answer, which outlives it.
struct ObjectValue {
  std::string_view name;
  std::string value;
  double timestamp = 0;
};

std::string compactJson(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Writes the items of one MetricValueList as JSON text: what all items share is rendered once,
// so an item costs its name, timestamp and value.
class MetricValueWriter {
 public:
  MetricValueWriter(const CustomMetricRequest& request, const kube::ResourceInfo& resource,
                    const Json& selector) {
    head_ = R"({"describedObject":{"kind":)";
    appendJsonString(head_, resource.kind);
    if (!request.namespace_name.empty()) {
      head_ += R"(,"namespace":)";
      appendJsonString(head_, request.namespace_name);
    }
    head_ += R"(,"name":)";
    middle_ = R"(,"apiVersion":)";
    appendJsonString(middle_, resource.apiVersion());
    middle_ += "},";
    if (request.version == "v1beta1") {
      middle_ += R"("metricName":)";
      appendJsonString(middle_, request.metric);
      middle_ += R"(,"timestamp":)";
      tail_ = R"(,"selector":)" + compactJson(selector) + "}";
    } else {
      middle_ += R"("metric":{"name":)";
      appendJsonString(middle_, request.metric);
      middle_ += R"(,"selector":)" + compactJson(selector) + R"(},"timestamp":)";
      tail_ = "}";
    }
  }

  // About what one item takes, for reserving: the shared parts, a name, a timestamp, a value.
  std::size_t itemSize() const { return head_.size() + middle_.size() + tail_.size() + 80; }

  void append(std::string& out, const ObjectValue& value) {
    out += head_;
    appendJsonString(out, value.name);
    out += middle_;
    out += timestamp_(value.timestamp);
    out += R"(,"value":)";
    appendJsonString(out, value.value);
    out += tail_;
  }

 private:
  // The JSON text of formatTimestamp for values that are mostly equal (an instant query's
  // samples all carry its evaluation time): formats each distinct run once.
  class Timestamps {
   public:
    const std::string& operator()(double seconds_since_epoch) {
      if (text_.empty() || seconds_since_epoch != last_) {
        last_ = seconds_since_epoch;
        text_.clear();
        appendJsonString(text_, formatTimestamp(seconds_since_epoch));
      }
      return text_;
    }

   private:
    double last_ = 0;
    std::string text_;
  };

  std::string head_;    // up to the object's name
  std::string middle_;  // from the object's name to the timestamp
  std::string tail_;    // after the value
  Timestamps timestamp_;
};

std::string metricValueListHead(const std::string& version) {
  std::string head = R"({"kind":"MetricValueList","apiVersion":)";
  appendJsonString(head, "custom.metrics.k8s.io/" + version);
  head += R"(,"metadata":{},"items":[)";
  return head;
}

constexpr std::string_view kMetricValueListTail = "]}";

// The request's resource and metric, resolved in one registry snapshot.
struct ResolvedMetric {
  kube::ResourceInfo resource;
  std::string group_resource;  // "pods", "deployments.apps"
  const discovery::CustomMetric* metric = nullptr;
};

// Step 1: which resource and which rule's metric the request names. Throws ApiError 404 when
// the resource or the metric is unknown, or the path's scope does not match the resource's.
ResolvedMetric resolveMetric(const discovery::RegistrySnapshot& snapshot,
                             const CustomMetricRequest& request) {
  auto resource = snapshot.mapper().parseGroupResource(request.resource);
  if (!resource) {
    throw ApiError::notFound(notFoundMessage(request.metric, request.resource) +
                             ": unknown resource \"" + request.resource + "\"");
  }
  const std::string group_resource = resource->groupResource();
  const discovery::CustomMetric* metric = snapshot.findCustom(group_resource, request.metric);
  if (!metric) {
    throw ApiError::notFound(withSimilarNames(notFoundMessage(request.metric, group_resource),
                                              snapshot.similarCustomNames(request.metric, 3)));
  }
  if (resource->namespaced != request.namespaced()) {
    throw ApiError::notFound(
        notFoundMessage(request.metric, group_resource) + ": " + group_resource + " are " +
        (resource->namespaced ? "namespaced" : "cluster-scoped") + ", use the " +
        (resource->namespaced ? "namespaces/<namespace>/" : "cluster-scoped ") + "path");
  }
  return {*resource, group_resource, metric};
}

// The objects a request is about.
struct ObjectSelection {
  std::vector<std::string> names;  // for the query, and the names an answer may hold
  bool any_name = false;           // every object Prometheus names (`names` is empty)
  bool none_match = false;         // the labelSelector matched no object: the list is empty
};

// Step 2: one named object, every object (a wildcard without labelSelector), or the objects
// the lister matches with the labelSelector. Throws ApiError 400 for a bad selector and 503
// when the objects cannot be listed.
ObjectSelection selectObjects(const CustomMetricRequest& request, const ResolvedMetric& resolved,
                              kube::ObjectLister* lister) {
  ObjectSelection selection;
  if (!request.wildcard()) {
    selection.names = {request.name};
    return selection;
  }
  auto object_selector = parseSelector(request.label_selector, "labelSelector");
  if (object_selector.empty()) {
    selection.any_name = true;
    return selection;
  }
  if (!lister) {
    throw ApiError::unavailable(
        "selecting " + resolved.group_resource +
        " by labelSelector needs the Kubernetes API, which this adapter was not given");
  }
  try {
    selection.names = lister->listNames(resolved.resource, request.namespace_name, object_selector);
  } catch (const std::exception& e) {
    throw ApiError::unavailable("unable to list matching " + resolved.group_resource + ": " +
                                e.what());
  }
  selection.none_match = selection.names.empty();
  return selection;
}

// Step 3: the rule's metricsQuery for these objects.
BuiltQuery buildQuery(const CustomMetricRequest& request, const ResolvedMetric& resolved,
                      const ObjectSelection& objects, const promql::LabelSelector& metric_selector,
                      const kube::RestMapper& mapper) {
  CustomQuerySpec spec;
  spec.rule = resolved.metric->rule.get();
  spec.series = resolved.metric->series_name;
  spec.resource = resolved.resource;
  spec.namespace_name = request.namespace_name;
  spec.metric_selector = metric_selector;
  spec.names = objects.names;  // a view: the selection outlives the query it builds
  spec.any_name = objects.any_name;
  BuiltQuery query = buildCustomQuery(spec, mapper);
  SPDLOG_DEBUG("metric {} on {}: {}", request.metric, resolved.group_resource, query.promql);
  return query;
}

// Step 4: Prometheus's answer, which must be an instant vector. Throws ApiError (503 or 500,
// see prometheusFailure).
std::shared_ptr<const prometheus::QueryResult> runQuery(
    const prometheus::Backend& backend, const BuiltQuery& query, std::chrono::milliseconds timeout,
    const CustomMetricRequest& request, const ResolvedMetric& resolved, QueryTrace* trace) {
  std::shared_ptr<const prometheus::QueryResult> result;
  try {
    result = backend.api->sharedQuery(query.promql, prometheus::Clock::now(),
                                      backend.queryTimeout(timeout));
  } catch (const prometheus::PrometheusError& e) {
    throw prometheusFailure(e, backend.name,
                            "metric " + request.metric + " on " + resolved.group_resource);
  }
  if (trace) {
    trace->queried = true;
    trace->result = *result;
  }
  if (result->type != prometheus::QueryResult::Type::kVector) {
    throw ApiError::internal("metricsQuery of " + resolved.metric->rule->id +
                             " must return an instant vector; Prometheus returned another type");
  }
  return result;
}

// Step 5: the samples mapped onto the objects named by `resource_label`, sorted by name for a
// deterministic answer. Samples for other objects, and NaN/Inf/blank values, are left out.
std::vector<ObjectValue> valuesByObject(const prometheus::QueryResult& result,
                                        const std::string& resource_label,
                                        const ObjectSelection& objects,
                                        const CustomMetricRequest& request,
                                        const std::string& group_resource) {
  // Views, sorted, not a set of copies: an answer names up to every pod of a Deployment.
  std::vector<std::string_view> wanted(objects.names.begin(), objects.names.end());
  std::sort(wanted.begin(), wanted.end());
  std::vector<ObjectValue> values;
  values.reserve(result.samples.size());
  std::size_t skipped = 0;
  for (const auto& sample : result.samples) {
    auto label = sample.labels.find(resource_label);
    if (label == sample.labels.end() || label->second.empty()) continue;
    if (!objects.any_name && !std::binary_search(wanted.begin(), wanted.end(), label->second)) {
      continue;
    }
    auto quantity = promql::sampleToQuantity(sample.value);
    if (!quantity) {
      ++skipped;
      continue;
    }
    values.push_back(ObjectValue{label->second, std::move(*quantity), sample.timestamp});
  }
  if (skipped > 0) {
    SPDLOG_DEBUG("metric {} on {}: skipped {} NaN/Inf/blank samples", request.metric,
                 group_resource, skipped);
  }
  // Several samples for one object: the last wins, as upstream. A stable sort keeps the
  // answer's order within a name, so the last of each run is the one kept.
  std::stable_sort(values.begin(), values.end(),
                   [](const ObjectValue& a, const ObjectValue& b) { return a.name < b.name; });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i + 1 < values.size() && values[i + 1].name == values[i].name) continue;
    if (kept != i) values[kept] = std::move(values[i]);
    ++kept;
  }
  values.resize(kept);
  return values;
}

// Why none of the objects a request is about got a value, in one line for the 404's message
// (which `kubectl describe hpa` shows): samples that are no number, or none carrying their names.
std::string whyNoValue(const prometheus::QueryResult& result, const std::string& resource_label,
                       const ObjectSelection& objects, const ResolvedMetric& resolved) {
  std::vector<std::string_view> wanted(objects.names.begin(), objects.names.end());
  std::sort(wanted.begin(), wanted.end());
  const bool one = wanted.size() == 1;
  std::string_view other;  // an object the answer names that was not asked for
  for (const auto& sample : result.samples) {
    auto label = sample.labels.find(resource_label);
    if (label == sample.labels.end() || label->second.empty()) continue;
    if (std::binary_search(wanted.begin(), wanted.end(), label->second)) {
      return std::string(one ? "its sample is" : "their samples are") +
             " not a number (NaN, ±Inf or an exporter's blank)";
    }
    other = label->second;
  }
  std::string why = resolved.metric->rule->id + "'s query returned ";
  if (one) {
    why += "no sample with " + resource_label + "=\"" + std::string(wanted.front()) + "\"";
  } else if (result.samples.empty()) {
    why += "no sample";
  } else {
    why += std::to_string(result.samples.size()) + " sample(s), none with " + resource_label +
           " naming one of them";
  }
  if (!other.empty()) why += " (one names " + resource_label + "=\"" + std::string(other) + "\")";
  return why;
}

// Step 6: the MetricValueList text (a named object's request kept only its samples: at most one
// value).
std::string writeMetricValueList(const CustomMetricRequest& request, const ResolvedMetric& resolved,
                                 const promql::LabelSelector& metric_selector,
                                 const std::vector<ObjectValue>& values) {
  MetricValueWriter writer(request, resolved.resource,
                           promql::toLabelSelectorJson(metric_selector));
  std::string body = metricValueListHead(request.version);
  body.reserve(body.size() + values.size() * writer.itemSize() + kMetricValueListTail.size());
  bool first = true;
  for (const ObjectValue& value : values) {
    if (!first) body += ',';
    first = false;
    writer.append(body, value);
  }
  body += kMetricValueListTail;
  return body;
}

}  // namespace

CustomMetricsHandler::CustomMetricsHandler(SnapshotSource snapshots,
                                           std::shared_ptr<kube::ObjectLister> lister,
                                           CustomMetricsOptions options)
    : snapshots_(std::move(snapshots)), lister_(std::move(lister)), options_(options) {}

Json CustomMetricsHandler::handle(const CustomMetricRequest& request, QueryTrace* trace) const {
  return Json::parse(render(request, trace));
}

std::string CustomMetricsHandler::render(const CustomMetricRequest& request,
                                         QueryTrace* trace) const {
  // One snapshot for the whole request: its rules and REST mapping belong together.
  auto snapshot = snapshots_();
  const ResolvedMetric resolved = resolveMetric(*snapshot, request);
  const prometheus::Backend& backend = backendOf(*snapshot, resolved.metric->rule->source.backend);
  if (trace) {
    trace->rule_id = resolved.metric->rule->id;
    trace->series = resolved.metric->series_name;
    trace->backend = backend.name;
  }
  auto metric_selector = parseSelector(request.metric_label_selector, "metricLabelSelector");
  const ObjectSelection objects = selectObjects(request, resolved, lister_.get());
  if (objects.none_match) {
    return metricValueListHead(request.version) + std::string(kMetricValueListTail);
  }
  const BuiltQuery query =
      buildQuery(request, resolved, objects, metric_selector, snapshot->mapper());
  if (trace) trace->promql = query.promql;
  const auto result = runQuery(backend, query, options_.query_timeout, request, resolved, trace);
  const auto values =
      valuesByObject(*result, query.resource_label, objects, request, resolved.group_resource);
  if (values.empty() && !objects.any_name) {
    // One named object, or the objects a labelSelector matched (an HPA's Pods metric): the
    // metric exists and so do the objects, so an empty list would hide why none has a value
    // ("Decisions: better on purpose", 5).
    const std::string subject = request.wildcard()
                                    ? ": none of the " + std::to_string(objects.names.size()) +
                                          " " + resolved.group_resource + " matching \"" +
                                          request.label_selector + "\" has a value: "
                                    : " " + request.name + ": ";
    throw ApiError::notFound(notFoundMessage(request.metric, resolved.group_resource) + subject +
                             whyNoValue(*result, query.resource_label, objects, resolved));
  }
  return writeMetricValueList(request, resolved, metric_selector, values);
}

const prometheus::Backend& backendOf(const discovery::RegistrySnapshot& snapshot,
                                     std::string_view name) {
  const prometheus::Backend* backend = snapshot.backend(name);
  if (!backend) {
    throw ApiError::internal("backend \"" + std::string(name) + "\" is not configured");
  }
  return *backend;
}

ApiError prometheusFailure(const prometheus::PrometheusError& error, std::string_view backend,
                           const std::string& what) {
  const std::string context = what + " from backend \"" + std::string(backend) + "\"";
  SPDLOG_WARN("Prometheus failed for {}: {}", context, error.detail());
  using Kind = prometheus::PrometheusError::Kind;
  const std::string_view message = error.what();
  // Prometheus says it cannot answer now (errorType "unavailable" or "timeout", HTTP 503 or 429)
  // as opposed to "this query is wrong": only the former is worth the HPA asking again.
  const bool busy = error.httpStatus() >= 500 || error.httpStatus() == 429 ||
                    message.starts_with("unavailable:") || message.starts_with("timeout:");
  switch (error.kind()) {
    case Kind::kUnreachable:
    case Kind::kTimeout:
      return ApiError::unavailable("unable to fetch " + context + ": " + std::string(message));
    case Kind::kHttpStatus:
    case Kind::kApiError:
      if (busy) {
        return ApiError::unavailable("unable to fetch " + context + ": " + std::string(message));
      }
      break;
    case Kind::kBadResponse:
      break;
  }
  return ApiError::internal("unable to fetch " + context + ": " + std::string(error.what()));
}

void appendJsonString(std::string& out, std::string_view text) {
  server::appendJsonQuoted(out, text);  // the one JSON string escaper, as in Status bodies
}

std::string formatTimestamp(double seconds_since_epoch) {
  // Only servable times reach the cast: converting a double outside time_t's range (1e300) is
  // undefined behaviour. Query answers leave such samples out; this guards every other caller.
  if (!prometheus::isServableSampleTime(seconds_since_epoch)) {
    seconds_since_epoch = seconds_since_epoch > 0 ? prometheus::kMaxSampleTime : 0;
  }
  auto seconds = static_cast<std::time_t>(seconds_since_epoch);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

}  // namespace metrics_adapter::api
