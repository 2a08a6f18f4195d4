#include "cli/doctor/doctor_scale_to_zero.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "metrics_adapter/discovery/registry.h"
#include "metrics_adapter/promql/label_matchers.h"
#include "metrics_adapter/promql/label_selector.h"

namespace metrics_adapter::cli {
namespace {

// The External metric that can wake an inference Deployment from zero: the requests the llm-d
// gateway (Gateway API Inference Extension flow control) holds for its pool, exported by the
// gateway's endpoint picker, so it exists while the pool has no pod.
constexpr const char* kGatewayQueue = "inference_pool_flow_control_queue_size";
constexpr std::size_t kNamesShown = 3;
// How the at_zero line of a metric without series at 0 replicas starts; the trap's cause quotes
// the rest.
constexpr const char* kEmpty = "empty: ";

bool lowerAlnum(std::string_view text, std::size_t min, std::size_t max) {
  return text.size() >= min && text.size() <= max &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) ||
                  std::islower(static_cast<unsigned char>(c));
         });
}

std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < kNamesShown; ++i) {
    text += (i ? ", " : "") + (names[i].empty() ? std::string("(no pod label)") : names[i]);
  }
  if (names.size() > kNamesShown) text += ", ...";
  return text;
}

bool podBased(const std::string& type) {
  return type == "Pods" || type == "Resource" || type == "ContainerResource";
}

std::string failedReason(const std::string& type) {
  return "FailedGet" + (type == "ContainerResource" ? std::string("Resource") : type) + "Metric";
}

// The series of `metric` over kZeroLookback grouped by their pod labels, in the HPA's namespace
// and under its selector, as the rule reads them.
SeriesOrigin readOrigin(const MetricDiagnosis& metric, const hpa::Hpa& hpa,
                        const DoctorContext& context, const std::set<std::string>& current) {
  const discovery::CompiledRule& rule = *metric.served_by;
  const auto& snapshot = *context.run->snapshot;
  const prometheus::Backend* backend = snapshot.backend(rule.source.backend);
  if (!backend) return {};
  std::vector<promql::LabelMatcher> matchers = {
      {"__name__", promql::MatchOperator::kEqual, metric.series}};
  const auto namespaces = snapshot.mapper().parseGroupResource("namespaces");
  const auto namespace_label =
      namespaces ? rule.resources.labelForResource(*namespaces) : std::nullopt;
  if (namespace_label && rule.resources.namespaced()) {
    matchers.push_back({*namespace_label, promql::MatchOperator::kEqual, hpa.namespace_name});
  }
  try {
    for (auto& matcher :
         promql::selectorToMatchers(promql::parseLabelSelector(metric.spec.selector)))
      matchers.push_back(std::move(matcher));
  } catch (const promql::SelectorError&) {
    return {};  // the metric's own diagnosis names the bad selector
  }
  std::string by;
  for (const auto label : kPodLabels) by.append(by.empty() ? "" : ", ").append(label);
  const std::string promql = "count by (" + by + ") (last_over_time({" +
                             promql::joinMatchers(matchers) + "}[" +
                             std::to_string(kZeroLookback.count()) + "h]))";
  try {
    const prometheus::QueryResult result = backend->api->query(
        promql, prometheus::Clock::now(), backend->queryTimeout(context.query_timeout));
    return classifyOrigin(result.samples, hpa.scale_target, current);
  } catch (const prometheus::PrometheusError&) {
    return {};
  }
}

// The External or Object metric's standing at zero, into its at_zero / empty_at_zero.
void describeAtZero(const SeriesOrigin& origin, const std::string& kind, MetricDiagnosis& metric) {
  const std::string series = metric.series + " (" + metric.served_by->id + ")";
  switch (origin.source) {
    case SeriesOrigin::Source::kTargetPods:
      metric.empty_at_zero = true;
      metric.at_zero = std::string(kEmpty) + "its series " + series + " come only from the " +
                       kind + "'s own pods (" + listed(origin.target_pods) +
                       "), so with no pod there is no series";
      break;
    case SeriesOrigin::Source::kElsewhere:
      metric.at_zero = "has series: its series " + series +
                       " come from outside the scale target (" + listed(origin.other_pods) + ")";
      break;
    case SeriesOrigin::Source::kNone:
      metric.empty_at_zero = !metric.has_value;
      metric.at_zero = std::string(kEmpty) + "no series of " + series + " now nor in the last " +
                       std::to_string(kZeroLookback.count()) + " h";
      break;
    case SeriesOrigin::Source::kUnknown:
      break;
  }
}

// What could wake the target instead, from the adapter's config or our presets.
std::string wakeAlternative(const DoctorContext& context) {
  const discovery::ExternalMetric* queue = context.run->snapshot->findExternal(kGatewayQueue);
  const std::string rule = queue ? queue->rule->id + " of the adapter's config serves it"
                                 : "add config/llm-d-epp.yaml's externalRule for it, which reads "
                                   "inference_extension_flow_control_queue_size or "
                                   "llm_d_epp_flow_control_queue_size";
  return std::string("wake it on a metric that exists while no pod runs: External ") +
         kGatewayQueue + ", the requests the llm-d gateway holds for the InferencePool (" + rule +
         "; deploy/examples/hpa-scale-to-zero-gateway.yaml), or a forecastRule of the demand "
         "measured at the gateway (deploy/examples/hpa-scale-to-zero-forecast.yaml); or set "
         "minReplicas: 1, so one pod keeps the series alive";
}

}  // namespace

bool podOfTarget(const hpa::ObjectRef& target, const std::set<std::string>& current_pods,
                 std::string_view pod) {
  if (current_pods.contains(std::string(pod))) return true;
  const std::string prefix = target.name + "-";
  if (!pod.starts_with(prefix)) return false;
  const std::string_view rest = pod.substr(prefix.size());
  if (target.kind == "StatefulSet") {
    return !rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
  }
  const auto dash = rest.rfind('-');
  if (target.kind == "Deployment") {
    return dash != std::string_view::npos && lowerAlnum(rest.substr(0, dash), 1, 10) &&
           lowerAlnum(rest.substr(dash + 1), 5, 5);
  }
  return lowerAlnum(rest, 5, 5);
}

SeriesOrigin classifyOrigin(const std::vector<prometheus::Sample>& samples,
                            const hpa::ObjectRef& target,
                            const std::set<std::string>& current_pods) {
  SeriesOrigin origin;
  origin.source = SeriesOrigin::Source::kNone;
  std::set<std::string> mine;
  std::set<std::string> others;
  for (const auto& sample : samples) {
    std::string pod;
    for (const auto label : kPodLabels) {
      auto it = sample.labels.find(std::string(label));
      if (it != sample.labels.end() && !it->second.empty()) {
        pod = it->second;
        break;
      }
    }
    (!pod.empty() && podOfTarget(target, current_pods, pod) ? mine : others).insert(pod);
  }
  origin.target_pods.assign(mine.begin(), mine.end());
  origin.other_pods.assign(others.begin(), others.end());
  if (!others.empty()) {
    origin.source = SeriesOrigin::Source::kElsewhere;
  } else if (!mine.empty()) {
    origin.source = SeriesOrigin::Source::kTargetPods;
  }
  return origin;
}

void checkScaleToZero(const std::vector<ClusterPod>& pods, const DoctorContext& context,
                      HpaDiagnosis& diagnosis) {
  const hpa::Hpa& hpa = diagnosis.hpa;
  const bool at_zero = diagnosis.scale && diagnosis.scale->spec_replicas == 0;
  if (hpa.min_replicas != 0 && !at_zero) return;
  diagnosis.may_sit_at_zero = true;
  const std::string target = hpa.scale_target.kind + "/" + hpa.scale_target.name;
  if (hpa.min_replicas > 0) {
    diagnosis.zero_cause = target + " is at 0 replicas and minReplicas is " +
                           std::to_string(hpa.min_replicas) +
                           ": the HPA controller does not scale a target someone set to 0 "
                           "(ScalingActive False, ScalingDisabled: scaling is disabled since "
                           "the replica count of the target is zero)";
    diagnosis.zero_fix =
        "scale it up (kubectl scale --replicas=1), or set minReplicas: 0 with a metric that "
        "exists while no pod runs";
    return;
  }
  if (std::none_of(diagnosis.metrics.begin(), diagnosis.metrics.end(), [](const auto& metric) {
        return metric.spec.type == "Object" || metric.spec.type == "External";
      })) {
    diagnosis.zero_cause =
        "minReplicas: 0 needs an Object or External metric, which can exist while no pod runs: "
        "the API server refuses this HPA (spec.metrics: Forbidden: must specify at least one "
        "Object or External metric to support scaling to zero replicas)";
    diagnosis.zero_fix = wakeAlternative(context);
    return;
  }
  std::set<std::string> current;
  for (const auto& pod : pods) current.insert(pod.meta.name);
  bool wakes = false;
  std::optional<std::size_t> trap;
  for (std::size_t i = 0; i < diagnosis.metrics.size(); ++i) {
    MetricDiagnosis& metric = diagnosis.metrics[i];
    if (podBased(metric.spec.type)) {
      metric.empty_at_zero = true;
      metric.at_zero = std::string(kEmpty) + "a " + metric.spec.type +
                       " metric is measured on the target's own pods";
    } else if (metric.served_by) {
      describeAtZero(readOrigin(metric, hpa, context, current), hpa.scale_target.kind, metric);
    } else if (metric.rule.starts_with("forecastRules")) {
      metric.at_zero = "has series: a forecast, served from its query's history while no pod runs";
    }
    if (metric.has_value && !metric.empty_at_zero) wakes = true;
    if (metric.empty_at_zero && !trap) trap = i;
  }
  if (wakes || !trap) return;
  const MetricDiagnosis& metric = diagnosis.metrics[*trap];
  diagnosis.zero_cause =
      "spec.metrics[" + std::to_string(*trap) + "] (" + metric.spec.type + " " + metric.spec.name +
      ") cannot bring " + target + " back from 0 replicas" +
      (at_zero ? ", where it sits now" : " once it scales there") +
      ", and no other metric can: " + metric.at_zero.substr(std::string_view(kEmpty).size()) +
      "; the adapter then answers no value and the HPA reports " + failedReason(metric.spec.type) +
      " and stays at 0 while requests wait";
  diagnosis.zero_fix = wakeAlternative(context);
}

}  // namespace metrics_adapter::cli
