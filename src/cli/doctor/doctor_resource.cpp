#include "cli/doctor/doctor_resource.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "cli/explain/explain.h"
#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/resource_metrics_handler.h"
#include "metrics_adapter/promql/quantity.h"
#include "metrics_adapter/resource/resource_metrics.h"
#include "metrics_adapter/resource/resource_query.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::cli {
namespace {

constexpr const char* kResourcePrefix = "/apis/metrics.k8s.io/v1beta1";
constexpr const char* kResourceApiService = "v1beta1.metrics.k8s.io";

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// One pod's value as the controller's metrics client sums it from a PodMetrics item: the
// MilliValue of each container's usage of `resource` (only `container` when given), or why
// there is none.
ServedValue itemUsage(const api::Json& item, const std::string& resource,
                      const std::string& container) {
  ServedValue usage;
  std::int64_t sum = 0;
  std::vector<std::string> names;
  bool found = false;
  for (const auto& entry : item.value("containers", api::Json::array())) {
    const std::string name = entry.value("name", "");
    names.push_back(name);
    if (!container.empty() && name != container) continue;
    const api::Json values = entry.value("usage", api::Json::object());
    const std::string quantity = values.value(resource, "");
    const auto milli = promql::parseMilliQuantity(quantity);
    if (!milli) {
      usage.why_none = "its PodMetrics has no " + resource;
      usage.why_none.append(" usage for container ").append(name);
      return usage;
    }
    sum += *milli;
    usage.quantity.append(usage.quantity.empty() ? "" : ", ")
        .append(name)
        .append(" ")
        .append(quantity);
    found = true;
  }
  if (!found) {
    usage.why_none =
        "its PodMetrics has no container " + container + " (containers: " + joined(names) + ")";
    return usage;
  }
  usage.milli = sum;
  usage.quantity = std::to_string(sum) + "m (" + usage.quantity + ")";
  return usage;
}

// Why the server left these Running pods out of the answer, from the same resource code it
// ran (one more CPU and memory query, for the pods without a value only).
std::map<std::string, std::string> omissionDetails(const discovery::CompiledResourceRules& rules,
                                                   const prometheus::Backend& backend,
                                                   const std::string& namespace_name,
                                                   const std::vector<std::string>& names,
                                                   const DoctorContext& context) {
  std::map<std::string, std::string> details;
  if (names.empty()) return details;
  std::vector<resource::PodRef> refs;
  refs.reserve(names.size());
  for (const auto& name : names) refs.push_back({namespace_name, name});
  const resource::ResourceMetrics metrics({.query_timeout = context.query_timeout}, nullptr);
  const auto result = metrics.podMetrics(backend, rules, refs, prometheus::Clock::now());
  for (const auto& omission : result.omitted) {
    details[omission.name] =
        omission.reason == resource::Omission::Reason::kBadValue
            ? "the server leaves it out: " + omission.detail + " (a bad value is never served)"
            : "the server leaves it out: " + omission.detail +
                  " (the resourceRules query has no sample for it)";
  }
  for (const auto& failure : result.failures) {
    for (const auto& name : names) details.try_emplace(name, failure.error.what());
  }
  return details;
}

std::string whyNoUsage(const ClusterPod& pod, const std::map<std::string, std::string>& details) {
  if (pod.phase != "Running") {
    return "the pod is " + (pod.phase.empty() ? std::string("without a phase") : pod.phase) +
           ": metrics.k8s.io lists Running pods only";
  }
  auto found = details.find(pod.meta.name);
  return found != details.end() ? found->second : "no PodMetrics for it in the answer";
}

// The replicas the controller computes from the pods' values: Utilization against the
// requests, AverageValue as a plain per-pod average.
void proposeFromPods(const hpa::HpaMetric& spec, const HpaDiagnosis& hpa_diagnosis,
                     const std::vector<ClusterPod>& pods,
                     const std::map<std::string, std::int64_t>& values,
                     MetricDiagnosis& diagnosis) {
  if (!hpa_diagnosis.scale) return;
  const std::int32_t current = hpa_diagnosis.scale->spec_replicas;
  if (spec.target_type == "Utilization" && spec.target_percent) {
    diagnosis.proposal = hpa::utilizationReplicas(current, *spec.target_percent, values,
                                                  hpaPods(pods), spec.name, spec.container);
  } else if (spec.target_type == "AverageValue" && spec.target_milli) {
    diagnosis.proposal =
        hpa::podsMetricReplicas(current, *spec.target_milli, values, hpaPods(pods), spec.name);
  } else {
    diagnosis.cause = "the target type " + spec.target_type + " is not one a " + spec.type +
                      " metric takes (Utilization or AverageValue)";
    return;
  }
  diagnosis.has_value = diagnosis.proposal->replicas.has_value();
  if (!diagnosis.has_value && diagnosis.cause.empty()) {
    diagnosis.cause = "failed to get " + spec.name + " utilization: " + diagnosis.proposal->error;
  }
  if (diagnosis.proposal->error.starts_with("missing request")) {
    diagnosis.fix = "set resources.requests." + spec.name + " on every container the metric " +
                    "covers (a ContainerResource metric covers only its container), or use an " +
                    "AverageValue target, which needs no requests";
  }
}

}  // namespace

void diagnoseResource(const hpa::Hpa& hpa, const HpaDiagnosis& hpa_diagnosis,
                      const std::vector<ClusterPod>& pods, const DoctorContext& context,
                      MetricDiagnosis& diagnosis) {
  const hpa::HpaMetric& spec = diagnosis.spec;
  const std::string selector = hpa_diagnosis.scale ? hpa_diagnosis.scale->selector : "";
  const HpaRequest request = hpaRequest(kResourcePrefix, {"namespaces", hpa.namespace_name, "pods"},
                                        {{"labelSelector", selector}});
  diagnosis.request = request.line;
  diagnosis.target = request.target;
  const auto& snapshot = context.run->snapshot;
  const auto& rules = snapshot->resourceRules();
  if (!rules) {
    // Not this adapter's answer: reporting it as a failure would blame the wrong component.
    diagnosis.checked = false;
    const std::string served_by =
        context.cluster ? context.cluster->apiServiceBackend(kResourceApiService) : "";
    diagnosis.cause = std::string(
                          "metrics.k8s.io is not served by this adapter (its config has "
                          "no resourceRules): APIService ") +
                      kResourceApiService + " sends it to " +
                      (served_by.empty() ? "another server (metrics-server, as a rule)"
                                         : "service " + served_by) +
                      ", which this doctor does not check";
    return;
  }
  const prometheus::Backend* backend = snapshot->backend(rules->backend);
  if (!backend) {
    diagnosis.cause = "resourceRules.backend " + rules->backend + " is not configured";
    return;
  }
  diagnosis.rule = "resourceRules." + spec.name + " (window " +
                   (rules->window.empty() ? std::string("0s") : rules->window) + ", backend " +
                   backend->name + ")";
  // The server's lister answers metrics.k8s.io with Running pods only (a field selector the
  // fixed lister does not read): give it those.
  std::vector<kube::ObjectMeta> running;
  std::vector<std::string> running_names;
  for (const auto& pod : pods) {
    if (pod.phase != "Running") continue;
    running.push_back(pod.meta);
    running_names.push_back(pod.meta.name);
  }
  const discovery::CompiledResourceRule& rule = spec.name == "memory" ? rules->memory : rules->cpu;
  if (!running_names.empty()) {
    try {
      diagnosis.promql = resource::renderPodQuery(rule, hpa.namespace_name, running_names);
    } catch (const resource::ResourceQueryError& e) {
      diagnosis.promql = std::string("(not rendered: ") + e.what() + ")";
    }
  }
  const api::ResourceMetricsHandler handler(
      std::make_shared<FixedPodLister>(std::move(running)),
      std::make_shared<const resource::ResourceMetrics>(
          resource::ResourceMetricsOptions{.query_timeout = context.query_timeout}, nullptr));
  std::map<std::string, ServedValue> served;
  try {
    const auto routed =
        api::parseResourceMetricsRequest(server::parseRequestInfo("GET", request.target));
    if (!routed) throw api::ApiError::notFound("the server could not find the requested resource");
    const api::Json answer = handler.handle(*routed, *rules, *backend, snapshot->mapper());
    const api::Json items = answer.value("items", api::Json::array());
    diagnosis.answer = "200, " + std::to_string(items.size()) + " item(s)";
    for (const auto& item : items) {
      served[item["metadata"].value("name", "")] = itemUsage(item, spec.name, spec.container);
    }
  } catch (const api::ApiError& e) {
    diagnosis.answer = std::to_string(e.code()) + " " + e.reason() + ": " + e.what();
    diagnosis.cause = e.what();
    return;
  }
  std::vector<std::string> unserved;
  for (const auto& name : running_names) {
    if (!served.contains(name)) unserved.push_back(name);
  }
  std::map<std::string, std::string> details;
  try {
    details = omissionDetails(*rules, *backend, hpa.namespace_name, unserved, context);
  } catch (const std::exception&) {
    // The pods then read "no PodMetrics for it": what the answer showed.
  }
  std::map<std::string, std::int64_t> values;
  diagnosis.pods = podValues(
      pods, served, [&](const ClusterPod& pod) { return whyNoUsage(pod, details); }, values);
  if (served.empty() && !pods.empty()) {
    // The metrics client fails before the replica calculator sees the pods.
    diagnosis.cause = "failed to get " + spec.name +
                      " utilization: unable to get metrics for "
                      "resource " +
                      spec.name + ": no metrics returned from resource metrics API (" +
                      diagnosis.pods.front().name + ": " + diagnosis.pods.front().why_none + ")";
    return;
  }
  proposeFromPods(spec, hpa_diagnosis, pods, values, diagnosis);
}

}  // namespace metrics_adapter::cli
