#include "cli/doctor/doctor_diagnosis.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "cli/doctor/doctor_access.h"
#include "cli/doctor/doctor_forecast.h"
#include "cli/doctor/doctor_resource.h"
#include "cli/doctor/doctor_scale_to_zero.h"
#include "cli/explain/explain.h"
#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/custom_metric_request.h"
#include "metrics_adapter/api/custom_metrics_handler.h"
#include "metrics_adapter/api/external_metrics_handler.h"
#include "metrics_adapter/forecast/forecast_service.h"
#include "metrics_adapter/promql/label_matchers.h"
#include "metrics_adapter/promql/quantity.h"
#include "metrics_adapter/server/request_info.h"
#include "metrics_adapter/text/percent_encoding.h"

namespace metrics_adapter::cli {
namespace {

constexpr const char* kCustomPrefix = "/apis/custom.metrics.k8s.io/v1beta2";
constexpr const char* kExternalPrefix = "/apis/external.metrics.k8s.io/v1beta1";

// explain's account of a metric no rule serves, as lines; the first is its reason.
std::vector<std::string> missLines(const DoctorContext& context, const std::string& metric,
                                   bool external, const std::string& group_resource) {
  ExplainOptions options;
  options.metric = metric;
  options.external = external;
  options.shared.relist.max_age = context.max_age;
  std::ostringstream text;
  explainMiss(text, options, *context.run, group_resource);
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text.str());
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// The `reason: ...` of explain's lines, and the closest names, as one cause.
std::string missCause(const std::vector<std::string>& lines, const std::string& first) {
  std::string cause = first;
  for (const auto& line : lines) {
    if (line.starts_with("reason: ")) cause += ": " + line.substr(8);
    if (line.starts_with("closest metric names:")) cause += " (" + line + ")";
  }
  return cause;
}

// The snapshot to answer a metric from: the relist's, or, when `serves` finds the metric only in
// the history's (context.history), that one, with `gone` set: its series are gone, and the
// server, which remembers the metrics it found, still serves it (with no value).
std::shared_ptr<const discovery::RegistrySnapshot> servingSnapshot(
    const DoctorContext& context,
    const std::function<bool(const discovery::RegistrySnapshot&)>& serves, bool& gone) {
  gone = false;
  if (serves(*context.run->snapshot) || !context.history) return context.run->snapshot;
  const DiscoveryRun* history = context.history();
  if (!history || !serves(*history->snapshot)) return context.run->snapshot;
  gone = true;
  return history->snapshot;
}

// What the rule line adds about a metric served with no series now.
std::string presenceNote(discovery::MetricPresence presence, bool gone,
                         const DoctorContext& context) {
  const std::string max_age = std::to_string(context.max_age.count() / 1000) + " s";
  if (gone) {
    return "; its series are gone: none within metrics-max-age (" + max_age +
           "), some within the last " + std::to_string(kZeroLookback.count()) +
           " h, so the adapter, which remembers the metrics it found, answers it with no value "
           "(a restarted adapter that never saw them: 404)";
  }
  if (presence == discovery::MetricPresence::kDeclared) {
    return "; no series within metrics-max-age (" + max_age +
           "): served because its seriesQuery names them";
  }
  return "";
}

std::string sampleLine(const prometheus::Sample& sample) {
  std::string line = "{";
  for (const auto& [label, value] : sample.labels) {
    line.append(line.size() > 1 ? ", " : "").append(label).append("=\"").append(value).append("\"");
  }
  std::ostringstream number;
  number << sample.value;
  return line + "} " + number.str();
}

void recordTrace(const api::QueryTrace& trace, MetricDiagnosis& diagnosis) {
  diagnosis.promql = trace.promql;
  if (!trace.queried) return;
  for (const auto& sample : trace.result.samples) diagnosis.samples.push_back(sampleLine(sample));
}

void recordError(MetricDiagnosis& diagnosis, const api::ApiError& error) {
  diagnosis.answer = std::to_string(error.code()) + " " + error.reason() + ": " + error.what();
  if (diagnosis.cause.empty()) diagnosis.cause = error.what();
}

// Routes `target` as the server's router does (`parse`: the API's request parser) and answers
// it with `handle` (one of the server's handlers); keeps the answer or the error, with the
// PromQL and the samples, in `diagnosis`.
template <typename Parse, typename Handle>
std::optional<api::Json> routeAndAnswer(MetricDiagnosis& diagnosis, const std::string& target,
                                        Parse parse, Handle handle) {
  api::QueryTrace trace;
  try {
    auto routed = parse(server::parseRequestInfo("GET", target));
    if (!routed) throw api::ApiError::notFound("the server could not find the requested resource");
    api::Json answer = handle(*routed, &trace);
    recordTrace(trace, diagnosis);
    const std::size_t items = answer.contains("items") ? answer["items"].size() : 0;
    diagnosis.answer = "200, " + std::to_string(items) + " item(s)";
    return answer;
  } catch (const api::ApiError& e) {
    recordTrace(trace, diagnosis);
    recordError(diagnosis, e);
  } catch (const server::InvalidRequestTarget& e) {
    recordError(diagnosis, api::ApiError::badRequest(e.what()));
  }
  return std::nullopt;
}

std::optional<std::int64_t> itemMilli(const api::Json& item, std::string& quantity) {
  if (!item.contains("value") || !item["value"].is_string()) return std::nullopt;
  quantity = item["value"].get<std::string>();
  return promql::parseMilliQuantity(quantity);
}

std::int32_t readyPodCount(const std::vector<ClusterPod>& pods) {
  return static_cast<std::int32_t>(std::count_if(pods.begin(), pods.end(), [](const auto& pod) {
    return pod.phase == "Running" && pod.ready;
  }));
}

// Why the Pods request gave `pod` no value, from what Prometheus answered.
constexpr std::string_view kNoSeriesFor = "Prometheus has no series with ";

// Where Prometheus has series of `metric` for `names` under another namespace label value than
// the HPA's: pod name -> those values. One query for all of them; empty when the rule maps no
// label to namespaces or the query fails (the report then says what it saw).
std::map<std::string, std::set<std::string>> podsInOtherNamespaces(
    const discovery::CustomMetric& metric, const std::string& pod_label,
    const std::vector<std::string>& names, const std::string& namespace_name,
    const DoctorContext& context) {
  std::map<std::string, std::set<std::string>> found;
  const auto& snapshot = *context.run->snapshot;
  const auto namespaces = snapshot.mapper().parseGroupResource("namespaces");
  const auto namespace_label =
      namespaces ? metric.rule->resources.labelForResource(*namespaces) : std::nullopt;
  const prometheus::Backend* backend = snapshot.backend(metric.rule->source.backend);
  if (!namespace_label || !backend || names.empty()) return found;
  std::string regex;
  for (const auto& name : names) {
    if (!regex.empty()) regex += '|';
    for (char c : name) regex += c == '.' ? std::string("\\.") : std::string(1, c);
  }
  const std::string promql = "count by (" + pod_label + ", " + *namespace_label + ") (" +
                             metric.series_name + "{" + pod_label + "=~" +
                             promql::quoteGoString(regex) + "})";
  try {
    const prometheus::QueryResult result = backend->api->query(
        promql, prometheus::Clock::now(), backend->queryTimeout(context.query_timeout));
    for (const auto& sample : result.samples) {
      auto pod = sample.labels.find(pod_label);
      auto where = sample.labels.find(*namespace_label);
      if (pod == sample.labels.end() || where == sample.labels.end()) continue;
      if (where->second != namespace_name) found[pod->second].insert(where->second);
    }
  } catch (const prometheus::PrometheusError&) {
    // A diagnosis of the diagnosis: without it the plain "no series" stands.
  }
  return found;
}

std::string whyNoPodValue(const ClusterPod& pod, const discovery::CustomMetric* metric,
                          const std::optional<std::string>& pod_label,
                          const std::vector<prometheus::Sample>& samples) {
  if (!metric) return "no rule serves the metric";
  if (!pod_label) return "the rule maps no label to pods";
  for (const auto& sample : samples) {
    auto it = sample.labels.find(*pod_label);
    if (it != sample.labels.end() && it->second == pod.meta.name && !std::isfinite(sample.value)) {
      return "its sample is " + sampleLine(sample) + ": NaN and ±Inf are skipped";
    }
  }
  std::string why = std::string(kNoSeriesFor) + *pod_label + "=\"" + pod.meta.name + "\"";
  if (pod.phase == "Pending") why += " (the pod is Pending)";
  return why;
}

// Pods with no series in the HPA's namespace may have them under another namespace label
// value (dcgm-exporter scraped without honorLabels reports its own namespace): say so.
void explainPodsElsewhere(const discovery::CustomMetric& metric, const std::string& pod_label,
                          const hpa::Hpa& hpa, const DoctorContext& context,
                          MetricDiagnosis& diagnosis) {
  std::vector<std::string> unseen;
  for (const auto& pod : diagnosis.pods) {
    if (!pod.milli && pod.why_none.starts_with(kNoSeriesFor)) unseen.push_back(pod.name);
  }
  const auto elsewhere =
      podsInOtherNamespaces(metric, pod_label, unseen, hpa.namespace_name, context);
  for (auto& pod : diagnosis.pods) {
    auto found = elsewhere.find(pod.name);
    if (found == elsewhere.end()) continue;
    std::string where;
    for (const auto& name : found->second) where += (where.empty() ? "" : ", ") + name;
    pod.why_none = "Prometheus has its series only under another namespace (" + where +
                   ") than the HPA's " + hpa.namespace_name +
                   ": the series' namespace label does not name the pod's namespace "
                   "(dcgm-exporter without honorLabels reports its own)";
  }
}

void diagnosePods(const hpa::HpaMetric& spec, const hpa::Hpa& hpa,
                  const HpaDiagnosis& hpa_diagnosis, const std::vector<ClusterPod>& pods,
                  const DoctorContext& context, MetricDiagnosis& diagnosis) {
  const std::string selector = hpa_diagnosis.scale ? hpa_diagnosis.scale->selector : "";
  const HpaRequest request =
      hpaRequest(kCustomPrefix, {"namespaces", hpa.namespace_name, "pods", "*", spec.name},
                 {{"labelSelector", selector}, {"metricLabelSelector", spec.selector}});
  diagnosis.request = request.line;
  diagnosis.target = request.target;
  bool gone = false;
  auto snapshot = servingSnapshot(
      context, [&](const auto& s) { return s.findCustom("pods", spec.name) != nullptr; }, gone);
  const discovery::CustomMetric* metric = snapshot->findCustom("pods", spec.name);
  std::optional<std::string> pod_label;
  if (metric) {
    diagnosis.rule = metric->rule->id + " serves pods/" + spec.name + " from series " +
                     metric->series_name + presenceNote(metric->presence, gone, context);
    pod_label = metric->rule->resources.labelForResource(metric->resource);
  } else {
    diagnosis.miss = missLines(context, spec.name, false, "pods");
    diagnosis.cause = missCause(diagnosis.miss, "no rule serves " + spec.name + " for pods");
    diagnosis.fix = "fix the HPA's metric name or the rule (see the closest names and rules)";
  }
  std::vector<kube::ObjectMeta> metas;
  metas.reserve(pods.size());
  for (const auto& pod : pods) metas.push_back(pod.meta);
  api::CustomMetricsHandler handler(
      [snapshot] { return snapshot; }, std::make_shared<FixedPodLister>(std::move(metas)),
      api::CustomMetricsOptions{.query_timeout = context.query_timeout});
  std::map<std::string, ServedValue> served;
  prometheus::QueryResult result;
  int error_code = 0;  // the handler's ApiError, when it answered one
  const std::optional<api::Json> answer =
      routeAndAnswer(diagnosis, request.target, api::parseCustomMetricRequest,
                     [&](const api::CustomMetricRequest& routed, api::QueryTrace* trace) {
                       // The samples say why a pod has no value (a NaN), also when none has one
                       // and the server answers 404.
                       try {
                         api::Json json = handler.handle(routed, trace);
                         result = trace->result;
                         return json;
                       } catch (const api::ApiError& error) {
                         result = trace->result;
                         error_code = error.code();
                         throw;
                       }
                     });
  if (answer) {
    for (const auto& item : (*answer)["items"]) {
      std::string quantity;
      auto milli = itemMilli(item, quantity);
      const std::string name = item["describedObject"].value("name", "");
      if (milli) served[name] = {milli, quantity, ""};
    }
  }
  std::map<std::string, std::int64_t> values;
  diagnosis.pods = podValues(
      pods, served,
      [&](const ClusterPod& pod) { return whyNoPodValue(pod, metric, pod_label, result.samples); },
      values);
  if (metric && pod_label) explainPodsElsewhere(*metric, *pod_label, hpa, context, diagnosis);
  // With a rule serving the metric and pods selected, the server's only 404 is "none of the pods
  // has a value". It names one cause; the doctor, which sees each pod, names it per pod (and
  // looks for the series under other namespaces), so its own cause leads.
  const bool none_has_value = !answer && metric && !pods.empty() && error_code == 404;
  if (!answer && !none_has_value) return;
  if (values.empty() && (diagnosis.cause.empty() || none_has_value)) {
    diagnosis.cause = pods.empty()
                          ? "the scale target's selector \"" + selector + "\" selects no pod"
                          : "none of the " + std::to_string(pods.size()) + " pods of \"" +
                                selector + "\" has a value: " + diagnosis.pods.front().why_none;
    diagnosis.fix =
        "the series must carry the pod's name in the label the rule maps to pods (dcgm-exporter: "
        "honorLabels: true; the exporter's pod attribution), or the pods are newer than the "
        "last scrape";
  }
  if (!hpa_diagnosis.scale || !spec.target_milli) return;
  diagnosis.proposal = hpa::podsMetricReplicas(hpa_diagnosis.scale->spec_replicas,
                                               *spec.target_milli, values, hpaPods(pods));
  diagnosis.has_value = diagnosis.proposal->replicas.has_value();
  if (!diagnosis.has_value && diagnosis.cause.empty()) diagnosis.cause = diagnosis.proposal->error;
}

// The replicas an Object or External metric's summed value gives.
void proposeFromUsage(const hpa::HpaMetric& spec, const HpaDiagnosis& hpa_diagnosis,
                      const std::vector<ClusterPod>& pods, std::int64_t usage,
                      MetricDiagnosis& diagnosis) {
  if (!hpa_diagnosis.scale || !spec.target_milli) return;
  diagnosis.proposal = spec.target_type == "AverageValue"
                           ? hpa::averageValueMetricReplicas(hpa_diagnosis.scale->status_replicas,
                                                             usage, *spec.target_milli)
                           : hpa::valueMetricReplicas(hpa_diagnosis.scale->spec_replicas, usage,
                                                      *spec.target_milli, readyPodCount(pods));
  diagnosis.has_value = diagnosis.proposal->replicas.has_value();
  if (!diagnosis.has_value) diagnosis.cause = diagnosis.proposal->error;
}

void diagnoseObject(const hpa::HpaMetric& spec, const hpa::Hpa& hpa,
                    const HpaDiagnosis& hpa_diagnosis, const std::vector<ClusterPod>& pods,
                    const DoctorContext& context, MetricDiagnosis& diagnosis) {
  const auto resource =
      context.cluster->resourceOfKind(spec.described.api_version, spec.described.kind);
  if (!resource) {
    diagnosis.cause = "the described object's kind " + spec.described.kind + " (" +
                      spec.described.api_version + ") is not a resource of this cluster";
    return;
  }
  const std::string group_resource = resource->groupResource();
  std::vector<std::string> segments;
  if (group_resource == "namespaces") {
    segments = {"namespaces", spec.described.name, "metrics", spec.name};
  } else if (resource->namespaced) {
    segments = {"namespaces", hpa.namespace_name, group_resource, spec.described.name, spec.name};
  } else {
    segments = {group_resource, spec.described.name, spec.name};
  }
  const HpaRequest request =
      hpaRequest(kCustomPrefix, segments, {{"metricLabelSelector", spec.selector}});
  diagnosis.request = request.line;
  diagnosis.target = request.target;
  bool gone = false;
  auto snapshot = servingSnapshot(
      context, [&](const auto& s) { return s.findCustom(group_resource, spec.name) != nullptr; },
      gone);
  const discovery::CustomMetric* metric = snapshot->findCustom(group_resource, spec.name);
  if (metric) {
    diagnosis.rule = metric->rule->id + " serves " + group_resource + "/" + spec.name +
                     " from series " + metric->series_name +
                     presenceNote(metric->presence, gone, context);
    diagnosis.series = metric->series_name;
    diagnosis.served_by = metric->rule;
  } else {
    diagnosis.miss = missLines(context, spec.name, false, group_resource);
    diagnosis.cause =
        missCause(diagnosis.miss, "no rule serves " + spec.name + " for " + group_resource);
    diagnosis.fix = "a rule whose resources map a label of the series to " + group_resource +
                    " (resources.overrides), and series that carry that label";
  }
  api::CustomMetricsHandler handler(
      [snapshot] { return snapshot; }, nullptr,
      api::CustomMetricsOptions{.query_timeout = context.query_timeout});
  const std::optional<api::Json> answer =
      routeAndAnswer(diagnosis, request.target, api::parseCustomMetricRequest,
                     [&](const api::CustomMetricRequest& routed, api::QueryTrace* trace) {
                       return handler.handle(routed, trace);
                     });
  if (!answer) return;
  for (const auto& item : (*answer)["items"]) {
    std::string quantity;
    if (auto milli = itemMilli(item, quantity)) {
      diagnosis.items.push_back(
          {group_resource + "/" + item["describedObject"].value("name", ""), quantity, *milli});
    }
  }
  if (diagnosis.items.empty()) {
    if (diagnosis.cause.empty()) diagnosis.cause = "the answer holds no value for the object";
    return;
  }
  proposeFromUsage(spec, hpa_diagnosis, pods, diagnosis.items.front().milli, diagnosis);
}

void diagnoseExternal(const hpa::HpaMetric& spec, const hpa::Hpa& hpa,
                      const HpaDiagnosis& hpa_diagnosis, const std::vector<ClusterPod>& pods,
                      const DoctorContext& context, MetricDiagnosis& diagnosis) {
  const HpaRequest request =
      hpaRequest(kExternalPrefix, {"namespaces", hpa.namespace_name, spec.name},
                 {{"labelSelector", spec.selector}});
  diagnosis.request = request.line;
  diagnosis.target = request.target;
  const config::ForecastRule* forecast_rule = forecastRuleNamed(context, spec.name);
  bool gone = false;
  auto snapshot =
      forecast_rule
          ? context.run->snapshot
          : servingSnapshot(
                context, [&](const auto& s) { return s.findExternal(spec.name) != nullptr; }, gone);
  const discovery::ExternalMetric* metric =
      forecast_rule ? nullptr : snapshot->findExternal(spec.name);
  if (forecast_rule) {
    diagnosis.rule =
        "forecastRules " + forecast_rule->name + " serves it: the forecast maximum over the next " +
        std::to_string(forecast_rule->horizon.count()) + " s of " + forecast_rule->query;
  } else if (metric) {
    diagnosis.rule = metric->rule->id + " serves " + spec.name + " from series " +
                     metric->series_name + presenceNote(metric->presence, gone, context);
    diagnosis.series = metric->series_name;
    diagnosis.served_by = metric->rule;
  } else {
    diagnosis.miss = missLines(context, spec.name, true, "");
    diagnosis.cause = missCause(diagnosis.miss, "no externalRule serves " + spec.name);
    diagnosis.fix = "fix the HPA's metric name or the externalRule (see the closest names)";
  }
  api::ExternalMetricsHandler handler(
      [snapshot] { return snapshot; },
      api::ExternalMetricsOptions{.query_timeout = context.query_timeout});
  const std::optional<api::Json> answer =
      routeAndAnswer(diagnosis, request.target, api::parseExternalMetricRequest,
                     [&](const api::ExternalMetricRequest& routed, api::QueryTrace* trace) {
                       if (forecast_rule) return answerForecast(*forecast_rule, routed, context);
                       return handler.handle(routed, trace);
                     });
  if (!answer) return;
  std::int64_t sum = 0;
  for (const auto& item : (*answer)["items"]) {
    std::string quantity;
    if (auto milli = itemMilli(item, quantity)) {
      diagnosis.items.push_back(
          {item.value("metricLabels", api::Json::object()).dump(), quantity, *milli});
      sum += *milli;
    }
  }
  if (diagnosis.items.empty() && forecast_rule) {
    diagnosis.cause = "the forecast " + spec.name + " has no series that matches the selector \"" +
                      spec.selector + "\": its query returned none over the history read (up " +
                      "to " + std::to_string(forecast::kReadDelay.count()) + " s ago)";
    diagnosis.fix =
        "compare the forecastRule's query and the HPA's metric.selector with the "
        "series in Prometheus";
    return;
  }
  if (diagnosis.items.empty()) {
    diagnosis.cause =
        "no series of " + spec.name + " matches the selector \"" + spec.selector +
        "\" (the PromQL returned " + std::to_string(diagnosis.samples.size()) +
        " samples); the HPA reports \"no metrics returned from external metrics API\"";
    diagnosis.fix = "compare the HPA's metric.selector with the series' labels in Prometheus";
    return;
  }
  proposeFromUsage(spec, hpa_diagnosis, pods, sum, diagnosis);
}

}  // namespace

std::vector<PodValue> podValues(const std::vector<ClusterPod>& pods,
                                const std::map<std::string, ServedValue>& served,
                                const std::function<std::string(const ClusterPod&)>& why_none,
                                std::map<std::string, std::int64_t>& values) {
  std::vector<PodValue> result;
  result.reserve(pods.size());
  for (const auto& pod : pods) {
    PodValue value{pod.meta.name, pod.phase, pod.ready, std::nullopt, "", ""};
    if (auto it = served.find(pod.meta.name); it != served.end()) {
      value.milli = it->second.milli;
      value.quantity = it->second.quantity;
      value.why_none = it->second.why_none;
    } else {
      value.why_none = why_none(pod);
    }
    if (value.milli) values[pod.meta.name] = *value.milli;
    result.push_back(std::move(value));
  }
  return result;
}

HpaDiagnosis diagnoseHpa(const hpa::Hpa& hpa, const DoctorContext& context) {
  HpaDiagnosis diagnosis;
  diagnosis.hpa = hpa;
  std::vector<ClusterPod> pods;
  checkApiServices(hpa, *context.cluster, diagnosis);
  try {
    diagnosis.scale = context.cluster->scale(hpa.namespace_name, hpa.scale_target);
    pods = context.cluster->pods(hpa.namespace_name, diagnosis.scale->selector);
  } catch (const std::exception& e) {
    diagnosis.scale_error = std::string("cannot read the scale target ") + hpa.scale_target.kind +
                            "/" + hpa.scale_target.name + ": " + e.what();
  }
  for (const auto& spec : hpa.metrics) {
    MetricDiagnosis metric;
    metric.spec = spec;
    if (spec.type == "Pods") {
      diagnosePods(spec, hpa, diagnosis, pods, context, metric);
    } else if (spec.type == "Object") {
      diagnoseObject(spec, hpa, diagnosis, pods, context, metric);
    } else if (spec.type == "External") {
      diagnoseExternal(spec, hpa, diagnosis, pods, context, metric);
    } else if (spec.type == "Resource" || spec.type == "ContainerResource") {
      diagnoseResource(hpa, diagnosis, pods, context, metric);
    } else {
      metric.checked = false;
      metric.cause = "the metric type " + spec.type + " is not one autoscaling/v2 knows";
    }
    diagnosis.metrics.push_back(std::move(metric));
  }
  checkHpaControllerAccess(*context.cluster, diagnosis);
  checkScaleToZero(pods, context, diagnosis);
  // Unchecked metrics (metrics.k8s.io served by another APIService) neither fail the HPA nor
  // enter the replica count: the report says the count leaves them out. An HPA with no metric
  // at all has nothing to scale on. At 0 replicas a metric only the target's pods export has no
  // value, as it must; when another metric can wake the target the controller scales on that
  // one (a metric it cannot get holds back only a scale-down), so the empty one fails nothing.
  const bool excused_at_zero = diagnosis.scale && diagnosis.scale->spec_replicas == 0 &&
                               diagnosis.may_sit_at_zero && diagnosis.zero_cause.empty();
  bool all_values = !diagnosis.metrics.empty();
  std::optional<std::int32_t> largest;
  for (const auto& metric : diagnosis.metrics) {
    all_values = all_values &&
                 (metric.has_value || !metric.checked || (excused_at_zero && metric.empty_at_zero));
    if (metric.proposal && metric.proposal->replicas) {
      largest = std::max(largest.value_or(0), *metric.proposal->replicas);
    }
  }
  if (all_values && largest) {
    diagnosis.computed_replicas = hpa::clampReplicas(*largest, hpa.min_replicas, hpa.max_replicas);
  }
  if (!diagnosis.apiservices.empty()) {
    const auto& first = diagnosis.apiservices.front();
    diagnosis.cause = "APIService " + first.name + " is " + first.message +
                      ": the HPA controller cannot reach the adapter; fix: " + first.fix;
  } else if (!diagnosis.denied.empty()) {
    diagnosis.cause = "the HPA controller may not read the metric: " + diagnosis.denied.front() +
                      "; fix: apply the kit again (it binds metrics-adapter-metrics-reader to "
                      "the controller; docs/troubleshooting.md)";
  } else if (!diagnosis.scale) {
    diagnosis.cause = diagnosis.scale_error;
  } else if (diagnosis.metrics.empty()) {
    diagnosis.cause = "spec.metrics is empty";
  } else if (!diagnosis.zero_cause.empty()) {
    diagnosis.cause = diagnosis.zero_cause;
  } else {
    for (std::size_t i = 0; i < diagnosis.metrics.size(); ++i) {
      const auto& metric = diagnosis.metrics[i];
      if (metric.has_value || !metric.checked || (excused_at_zero && metric.empty_at_zero)) {
        continue;
      }
      diagnosis.cause = "spec.metrics[" + std::to_string(i) + "] (" + metric.spec.type + " " +
                        metric.spec.name + "): " + metric.cause;
      break;
    }
  }
  diagnosis.ok = all_values && diagnosis.cause.empty();
  return diagnosis;
}

}  // namespace metrics_adapter::cli
