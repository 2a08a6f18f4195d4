#include "metrics_adapter/api/resource_metrics_handler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "metrics_adapter/api/custom_metrics_handler.h"
#include "metrics_adapter/api/discovery_documents.h"
#include "metrics_adapter/api/field_selector.h"
#include "metrics_adapter/promql/label_selector.h"
#include "metrics_adapter/promql/quantity.h"
#include "metrics_adapter/promql/template.h"

namespace metrics_adapter::api {
namespace {

// What the API server's field selectors on these lists support (metrics-server's too).
const std::set<std::string> kPodFields = {"metadata.name", "metadata.namespace"};
const std::set<std::string> kNodeFields = {"metadata.name"};

// Only Running pods have usage (metrics-server and prometheus-adapter list pods this way).
constexpr const char* kRunningPods = "status.phase=Running";

struct Selectors {
  promql::LabelSelector labels;
  FieldSelector fields;
};

Selectors parseSelectors(const ResourceMetricsRequest& request) {
  Selectors selectors;
  try {
    selectors.labels = promql::parseLabelSelector(request.label_selector);
  } catch (const promql::SelectorError& e) {
    throw ApiError::badRequest("invalid labelSelector \"" + request.label_selector +
                               "\": " + e.what());
  }
  try {
    selectors.fields =
        parseFieldSelector(request.field_selector, request.nodes ? kNodeFields : kPodFields);
  } catch (const FieldSelectorError& e) {
    throw ApiError::badRequest(e.what());
  }
  return selectors;
}

kube::ResourceInfo coreResource(const kube::RestMapper& mapper, const char* plural) {
  auto resource = mapper.resourceFor("", plural);
  if (!resource) throw ApiError::internal(std::string("the REST mapping has no ") + plural);
  return *resource;
}

// The objects of `resource` the request covers, from the lister's cache. 503 when the
// Kubernetes API cannot answer (or there is none).
std::vector<kube::ObjectMeta> listCovered(kube::ObjectLister* lister,
                                          const kube::ResourceInfo& resource,
                                          const std::string& namespace_name,
                                          const Selectors& selectors,
                                          const std::string& field_selector) {
  if (!lister) {
    throw ApiError::unavailable(
        "metrics.k8s.io needs the Kubernetes API to list pods and nodes: run in a cluster or "
        "pass --kubeconfig");
  }
  std::vector<kube::ObjectMeta> objects;
  try {
    objects = lister->listObjects(resource, namespace_name, selectors.labels, field_selector);
  } catch (const std::runtime_error& e) {
    throw ApiError::unavailable("unable to list " + resource.plural + ": " + e.what());
  }
  std::erase_if(objects, [&](const kube::ObjectMeta& object) {
    return !matches(selectors.fields, [&](const std::string& field) {
      return field == "metadata.name" ? object.name : object.namespace_name;
    });
  });
  return objects;
}

// The ApiError for a failed resource query: Prometheus's own failure (503 when it cannot answer
// now) or a rule failure (500), naming the query either way.
ApiError queryFailure(const resource::ResourceQueryError& error, std::string_view backend) {
  const std::string query = error.query().empty() ? "" : " (query: " + error.query() + ")";
  try {
    if (error.cause()) std::rethrow_exception(error.cause());
  } catch (const prometheus::PrometheusError& cause) {
    const ApiError mapped = prometheusFailure(cause, backend, "resource metrics");
    return {mapped.code(), mapped.reason(), mapped.what() + query};
  } catch (const std::exception&) {
    // a rule failure: reported below with the error's own message
  }
  return ApiError::internal(std::string(error.what()) + query);
}

ApiError noMetrics(const char* group_resource, const std::string& name) {
  return {
      404, "NotFound",
      std::string(group_resource) + "." + kResourceMetricsGroup + " \"" + name + "\" not found",
      server::StatusDetails{.name = name, .group = kResourceMetricsGroup, .kind = group_resource}};
}

ApiError noObject(const char* resource, const std::string& name) {
  return {404, "NotFound", std::string(resource) + " \"" + name + "\" not found",
          server::StatusDetails{.name = name, .kind = resource}};
}

// The answers are written as JSON text directly, not built as a JSON tree: for a list of
// 10,000 pods the tree cost 70 ms and tens of MiB (docs/performance.md "Resource metrics").

// "metadata":{"name":..,"namespace":..,"creationTimestamp":..,"labels":{..}}. metrics-server
// stamps creationTimestamp with the time of the answer; `created` is that, already quoted.
void appendMetadata(std::string& out, const kube::ObjectMeta& object, const std::string& created) {
  out += R"("metadata":{"name":)";
  appendJsonString(out, object.name);
  if (!object.namespace_name.empty()) {
    out += R"(,"namespace":)";
    appendJsonString(out, object.namespace_name);
  }
  out += R"(,"creationTimestamp":)";
  out += created;
  if (!object.labels.empty()) {
    out += R"(,"labels":{)";
    bool first = true;
    for (const auto& [name, value] : object.labels) {
      if (!first) out += ',';
      first = false;
      appendJsonString(out, name);
      out += ':';
      appendJsonString(out, value);
    }
    out += '}';
  }
  out += '}';
}

// {"cpu":"250m","memory":"128Mi"}: quantities are ASCII and need no escaping.
void appendUsage(std::string& out, std::int64_t cpu_nanocores, std::int64_t memory_bytes) {
  out += R"({"cpu":")";
  out += promql::formatNanoQuantity(cpu_nanocores);
  out += R"(","memory":")";
  out += promql::formatByteQuantity(memory_bytes);
  out += R"("})";
}

// ,"timestamp":"..","window":"..". The timestamps of one answer are mostly equal (one
// evaluation time): each distinct one is formatted once.
class TimesWriter {
 public:
  explicit TimesWriter(std::string window) : window_(std::move(window)) {}

  void append(std::string& out, double timestamp) {
    if (formatted_.empty() || timestamp != last_) {
      last_ = timestamp;
      formatted_ = formatTimestamp(timestamp);
    }
    out += R"(,"timestamp":")";
    out += formatted_;
    out += R"(","window":")";
    out += window_;
    out += '"';
  }

 private:
  std::string window_;
  double last_ = 0;
  std::string formatted_;
};

// Writes a PodMetrics/NodeMetrics answer into one string: one object of `kind` for a GET, else a
// `kind`List whose items are added one by one (item() opens one; its members follow, then
// endItem()).
class AnswerWriter {
 public:
  AnswerWriter(const char* kind, bool single, std::size_t expected_bytes) : single_(single) {
    out_.reserve(expected_bytes + 128);
    out_ += R"({"kind":")";
    out_ += kind;
    if (!single) out_ += "List";
    out_ += R"(","apiVersion":")";
    out_ += kResourceMetricsGroup;
    out_ += '/';
    out_ += kResourceMetricsVersion;
    out_ += single ? R"(",)" : R"(","metadata":{},"items":[)";
  }

  std::string& item() {
    if (!single_) out_ += items_++ > 0 ? ",{" : "{";
    return out_;
  }
  void endItem() {
    if (!single_) out_ += '}';
  }

  std::string finish() && {
    out_ += single_ ? "}" : "]}";
    return std::move(out_);
  }

 private:
  bool single_;
  std::size_t items_ = 0;
  std::string out_;
};

std::string windowOf(const discovery::CompiledResourceRules& rules) {
  return formatGoDuration(rules.window_length);
}

std::string nowTimestamp() {
  return formatTimestamp(
      std::chrono::duration<double>(prometheus::Clock::now().time_since_epoch()).count());
}

}  // namespace

std::optional<ResourceMetricsRequest> parseResourceMetricsRequest(const server::RequestInfo& info) {
  if (!info.resource_request || info.api_version != kResourceMetricsVersion ||
      !info.subresource.empty() || info.resource_parts.size() > 2) {
    return std::nullopt;
  }
  ResourceMetricsRequest request;
  if (info.resource == "nodes" && info.namespace_name.empty()) {
    request.nodes = true;
  } else if (info.resource != "pods") {
    return std::nullopt;
  }
  if ((info.verb == "get") == info.name.empty() || (info.verb != "get" && info.verb != "list")) {
    return std::nullopt;
  }
  request.namespace_name = info.namespace_name;
  request.name = info.name;
  request.label_selector = info.get("labelSelector");
  request.field_selector = info.get("fieldSelector");
  return request;
}

std::string formatGoDuration(std::chrono::milliseconds duration) {
  std::int64_t millis = duration.count();
  if (millis == 0) return "0s";
  std::string text;
  if (millis < 0) {
    text = "-";
    millis = -millis;
  }
  if (millis < 1000) return text + std::to_string(millis) + "ms";
  const std::int64_t hours = millis / 3'600'000;
  const std::int64_t minutes = millis / 60'000 % 60;
  const std::int64_t whole_seconds = millis / 1000 % 60;
  const std::int64_t fraction = millis % 1000;
  if (hours > 0) text += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) text += std::to_string(minutes) + "m";
  text += std::to_string(whole_seconds);
  if (fraction > 0) {
    std::string digits = std::to_string(1000 + fraction).substr(1);  // three digits
    while (digits.back() == '0') digits.pop_back();
    text += "." + digits;
  }
  return text + "s";
}

ResourceMetricsHandler::ResourceMetricsHandler(
    std::shared_ptr<kube::ObjectLister> lister,
    std::shared_ptr<const resource::ResourceMetrics> metrics)
    : lister_(std::move(lister)), metrics_(std::move(metrics)) {}

std::string ResourceMetricsHandler::render(const ResourceMetricsRequest& request,
                                           const discovery::CompiledResourceRules& rules,
                                           const prometheus::Backend& backend,
                                           const kube::RestMapper& mapper) const {
  return request.nodes ? nodes(request, rules, backend, mapper)
                       : pods(request, rules, backend, mapper);
}

Json ResourceMetricsHandler::handle(const ResourceMetricsRequest& request,
                                    const discovery::CompiledResourceRules& rules,
                                    const prometheus::Backend& backend,
                                    const kube::RestMapper& mapper) const {
  return Json::parse(render(request, rules, backend, mapper));
}

std::string ResourceMetricsHandler::pods(const ResourceMetricsRequest& request,
                                         const discovery::CompiledResourceRules& rules,
                                         const prometheus::Backend& backend,
                                         const kube::RestMapper& mapper) const {
  const Selectors selectors = parseSelectors(request);
  std::vector<kube::ObjectMeta> objects = listCovered(
      lister_.get(), coreResource(mapper, "pods"), request.namespace_name, selectors, kRunningPods);
  if (!request.name.empty()) {
    std::erase_if(objects, [&](const kube::ObjectMeta& o) { return o.name != request.name; });
    if (objects.empty()) throw noObject("pods", request.name);
  }
  std::vector<resource::PodRef> refs;
  refs.reserve(objects.size());
  for (const auto& object : objects) refs.push_back({object.namespace_name, object.name});
  const resource::PodMetricsResult result =
      metrics_->podMetrics(backend, rules, refs, prometheus::Clock::now());

  // A list over every namespace serves the namespaces that answered; a request for one
  // namespace (or one pod) fails with its query.
  for (const auto& failure : result.failures) {
    if (!request.namespace_name.empty()) throw queryFailure(failure.error, backend.name);
    SPDLOG_WARN("pod metrics of namespace {} left out: {} (query: {})", failure.namespace_name,
                failure.error.what(), failure.error.query());
  }
  if (!request.name.empty() && result.pods.empty()) {
    throw noMetrics("podmetrics", request.namespace_name + "/" + request.name);
  }
  std::string created;
  appendJsonString(created, nowTimestamp());
  TimesWriter times(windowOf(rules));
  // About 280 bytes a pod with one container.
  AnswerWriter answer("PodMetrics", !request.name.empty(), result.pods.size() * 300);
  std::size_t next = 0;  // result.pods keep the order of `refs`, a subsequence of `objects`
  for (const auto& usage : result.pods) {
    while (objects[next].name != usage.name ||
           objects[next].namespace_name != usage.namespace_name) {
      ++next;
    }
    std::string& item = answer.item();
    appendMetadata(item, objects[next], created);
    times.append(item, usage.timestamp);
    item += R"(,"containers":[)";
    for (std::size_t i = 0; i < usage.containers.size(); ++i) {
      const auto& container = usage.containers[i];
      item += i > 0 ? R"(,{"name":)" : R"({"name":)";
      appendJsonString(item, container.name);
      item += R"(,"usage":)";
      appendUsage(item, container.cpu_nanocores, container.memory_bytes);
      item += '}';
    }
    item += ']';
    answer.endItem();
  }
  return std::move(answer).finish();
}

std::string ResourceMetricsHandler::nodes(const ResourceMetricsRequest& request,
                                          const discovery::CompiledResourceRules& rules,
                                          const prometheus::Backend& backend,
                                          const kube::RestMapper& mapper) const {
  const Selectors selectors = parseSelectors(request);
  std::vector<kube::ObjectMeta> objects =
      listCovered(lister_.get(), coreResource(mapper, "nodes"), "", selectors, "");
  if (!request.name.empty()) {
    std::erase_if(objects, [&](const kube::ObjectMeta& o) { return o.name != request.name; });
    if (objects.empty()) throw noObject("nodes", request.name);
  }
  std::vector<std::string> names;
  names.reserve(objects.size());
  for (const auto& object : objects) names.push_back(object.name);
  resource::NodeMetricsResult result;
  try {
    result = metrics_->nodeMetrics(backend, rules, names, prometheus::Clock::now());
  } catch (const resource::ResourceQueryError& e) {
    throw queryFailure(e, backend.name);
  }
  if (!request.name.empty() && result.nodes.empty()) throw noMetrics("nodemetrics", request.name);
  std::string created;
  appendJsonString(created, nowTimestamp());
  TimesWriter times(windowOf(rules));
  AnswerWriter answer("NodeMetrics", !request.name.empty(), result.nodes.size() * 300);
  std::size_t next = 0;
  for (const auto& usage : result.nodes) {
    while (objects[next].name != usage.name) ++next;
    std::string& item = answer.item();
    appendMetadata(item, objects[next], created);
    times.append(item, usage.timestamp);
    item += R"(,"usage":)";
    appendUsage(item, usage.cpu_nanocores, usage.memory_bytes);
    answer.endItem();
  }
  return std::move(answer).finish();
}

}  // namespace metrics_adapter::api
