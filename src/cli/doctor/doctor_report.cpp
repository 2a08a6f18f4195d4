#include "cli/doctor/doctor_report.h"

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string>

namespace metrics_adapter::cli {
namespace {

using nlohmann::json;

std::string ratioText(double ratio) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(3) << ratio;
  return text.str();
}

std::string namesList(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

void writeProposal(std::ostream& out, const hpa::ReplicaProposal& proposal,
                   const hpa::HpaMetric& spec) {
  out << "    replicas: ";
  if (!proposal.replicas) {
    out << "none: " << proposal.error << "\n";
    return;
  }
  out << *proposal.replicas << " (";
  if (proposal.utilization) out << "utilization " << *proposal.utilization << "% of requests, ";
  out << "usage " << proposal.usage_milli << "m against target " << spec.target_type << " "
      << spec.target_text << ", ";
  if (proposal.from_zero) {
    out << "at 0 replicas: ceil(usage / target), no tolerance)\n";
  } else {
    out << "ratio " << ratioText(proposal.ratio) << ", tolerance " << hpa::kHpaTolerance << ")\n";
  }
  if (!proposal.missing.empty()) {
    out << "      pods without a value, counted as " << (proposal.ratio < 1.0 ? "at target" : "0")
        << ": " << namesList(proposal.missing) << "\n";
  }
  if (!proposal.unready.empty())
    out << "      Pending pods left out: " << namesList(proposal.unready) << "\n";
  if (!proposal.ignored.empty()) {
    out << "      deleted or Failed pods left out: " << namesList(proposal.ignored) << "\n";
  }
}

void writeMetric(std::ostream& out, std::size_t index, const MetricDiagnosis& metric) {
  const hpa::HpaMetric& spec = metric.spec;
  out << "  spec.metrics[" << index << "]: " << spec.type << " " << spec.name;
  if (spec.type == "Object") out << " of " << spec.described.kind << "/" << spec.described.name;
  out << ", target " << spec.target_type << " " << spec.target_text << ": "
      << (!metric.checked    ? "not checked"
          : metric.has_value ? "has a value"
                             : "NO VALUE")
      << "\n";
  if (!metric.has_value && !metric.cause.empty()) out << "    cause: " << metric.cause << "\n";
  if (!metric.fix.empty() && !metric.has_value) out << "    fix: " << metric.fix << "\n";
  if (!metric.at_zero.empty()) out << "    at 0 replicas: " << metric.at_zero << "\n";
  if (!metric.request.empty()) out << "    request: GET " << metric.request << "\n";
  if (!metric.rule.empty()) out << "    rule: " << metric.rule << "\n";
  for (const auto& line : metric.miss) out << "    | " << line << "\n";
  if (!metric.promql.empty()) out << "    PromQL: " << metric.promql << "\n";
  const bool resource = spec.type == "Resource" || spec.type == "ContainerResource";
  if (!metric.promql.empty() && !resource) {
    out << "    Prometheus answered " << metric.samples.size() << " sample(s)\n";
    for (const auto& sample : metric.samples) out << "      " << sample << "\n";
  }
  if (!metric.answer.empty()) out << "    answer: " << metric.answer << "\n";
  if (spec.type == "Pods" || (resource && metric.checked)) {
    std::size_t with_value = 0;
    for (const auto& pod : metric.pods) with_value += pod.milli ? 1 : 0;
    out << "    pods: " << metric.pods.size() << " selected, " << with_value << " with a value\n";
    for (const auto& pod : metric.pods) {
      out << "      " << pod.name << " (" << (pod.phase.empty() ? "no phase" : pod.phase)
          << (pod.ready ? ", ready" : "")
          << "): " << (pod.milli ? pod.quantity : "no value: " + pod.why_none) << "\n";
    }
  }
  for (const auto& item : metric.items)
    out << "    value: " << item.what << " " << item.quantity << "\n";
  if (metric.proposal) writeProposal(out, *metric.proposal, spec);
}

// Why the HPA's status.desiredReplicas may differ from the count computed now: the
// stabilization windows of spec.behavior hold a recommendation back; "" when they do not
// explain the difference.
std::string behaviorNote(const HpaDiagnosis& diagnosis) {
  const hpa::Hpa& hpa = diagnosis.hpa;
  if (!diagnosis.computed_replicas || !hpa.desired_replicas) return "";
  const std::int32_t computed = *diagnosis.computed_replicas;
  const std::int32_t desired = *hpa.desired_replicas;
  if (computed < desired && hpa.scale_down_window_seconds > 0) {
    return "the HPA scales down only to the highest count computed over its scale-down "
           "stabilization window (spec.behavior.scaleDown.stabilizationWindowSeconds: " +
           std::to_string(hpa.scale_down_window_seconds) +
           " s): desiredReplicas stays above the count computed now until the window has passed";
  }
  if (computed > desired && hpa.scale_up_window_seconds > 0) {
    return "the HPA scales up only to the lowest count computed over its scale-up "
           "stabilization window (spec.behavior.scaleUp.stabilizationWindowSeconds: " +
           std::to_string(hpa.scale_up_window_seconds) + " s)";
  }
  // The default scale-up policies allow the larger of double or 4 more pods per 15 s.
  const std::int32_t current = hpa.current_replicas.value_or(desired);
  if (computed > desired && computed > std::max(2 * current, current + 4)) {
    return "a scale-up goes at most to the larger of double or 4 more pods per 15 s (the default "
           "spec.behavior.scaleUp.policies) from currentReplicas " +
           std::to_string(current);
  }
  return "";
}

void writeHpa(std::ostream& out, const HpaDiagnosis& diagnosis) {
  const hpa::Hpa& hpa = diagnosis.hpa;
  out << "HPA " << hpa.namespace_name << "/" << hpa.name << " -> " << hpa.scale_target.kind << "/"
      << hpa.scale_target.name << " (min " << hpa.min_replicas << ", max " << hpa.max_replicas
      << ")\n";
  std::vector<std::string> unchecked;
  for (const auto& metric : diagnosis.metrics) {
    if (!metric.checked) unchecked.push_back(metric.spec.type + " " + metric.spec.name);
  }
  if (diagnosis.ok && unchecked.empty()) {
    out << "ok: every metric has a value\n";
  } else if (diagnosis.ok) {
    out << "ok: every metric checked has a value (not checked: " << namesList(unchecked)
        << ", served by another APIService)\n";
  } else {
    out << "cause: " << diagnosis.cause << "\n";
    if (diagnosis.cause == diagnosis.zero_cause) out << "fix: " << diagnosis.zero_fix << "\n";
  }
  out << "replicas: the HPA algorithm gives ";
  if (diagnosis.computed_replicas) {
    out << *diagnosis.computed_replicas;
  } else {
    out << "none (a metric has no value)";
  }
  for (const auto& metric : diagnosis.metrics) {
    if (!metric.checked) {
      out << " (without the " << metric.spec.type << " metric " << metric.spec.name << ")";
    }
  }
  out << "; the HPA's status says desiredReplicas "
      << (hpa.desired_replicas ? std::to_string(*hpa.desired_replicas) : "(none)")
      << ", currentReplicas "
      << (hpa.current_replicas ? std::to_string(*hpa.current_replicas) : "(none)") << "\n";
  if (const std::string note = behaviorNote(diagnosis); !note.empty()) {
    out << "behavior: " << note << "\n";
  }
  for (const auto& condition : hpa.conditions) {
    out << "condition: " << condition.type << "=" << condition.status << " " << condition.reason
        << (condition.message.empty() ? "" : ": " + condition.message) << "\n";
  }
  for (const auto& problem : diagnosis.apiservices) {
    out << "APIService " << problem.name << ": " << problem.message << "; fix: " << problem.fix
        << "\n";
  }
  for (const auto& denied : diagnosis.denied) out << "forbidden: " << denied << "\n";
  if (diagnosis.scale) {
    out << "scale: spec.replicas " << diagnosis.scale->spec_replicas << ", status.replicas "
        << diagnosis.scale->status_replicas << ", selector " << diagnosis.scale->selector << "\n";
  }
  if (!diagnosis.scale_error.empty()) out << "note: " << diagnosis.scale_error << "\n";
  for (std::size_t i = 0; i < diagnosis.metrics.size(); ++i)
    writeMetric(out, i, diagnosis.metrics[i]);
}

json proposalJson(const hpa::ReplicaProposal& proposal) {
  json result = {
      {"usageMilli", proposal.usage_milli},
      {"utilization", proposal.utilization ? json(*proposal.utilization) : json(nullptr)},
      {"ratio", proposal.from_zero ? json(nullptr) : json(proposal.ratio)},
      {"fromZeroReplicas", proposal.from_zero},
      {"missingPods", proposal.missing},
      {"unreadyPods", proposal.unready},
      {"ignoredPods", proposal.ignored}};
  result["replicas"] = proposal.replicas ? json(*proposal.replicas) : json(nullptr);
  if (!proposal.error.empty()) result["error"] = proposal.error;
  return result;
}

json metricJson(const MetricDiagnosis& metric) {
  json result = {
      {"type", metric.spec.type},  {"metric", metric.spec.name}, {"hasValue", metric.has_value},
      {"checked", metric.checked}, {"cause", metric.cause},      {"fix", metric.fix},
      {"request", metric.request}, {"rule", metric.rule},        {"notServed", metric.miss},
      {"promql", metric.promql},   {"samples", metric.samples},  {"answer", metric.answer}};
  result["target"] = {{"type", metric.spec.target_type}, {"value", metric.spec.target_text}};
  if (!metric.spec.container.empty()) result["container"] = metric.spec.container;
  json pods = json::array();
  for (const auto& pod : metric.pods) {
    json entry = {{"name", pod.name}, {"phase", pod.phase}, {"ready", pod.ready}};
    entry["valueMilli"] = pod.milli ? json(*pod.milli) : json(nullptr);
    if (pod.milli) entry["value"] = pod.quantity;
    if (!pod.why_none.empty()) entry["whyNoValue"] = pod.why_none;
    pods.push_back(entry);
  }
  result["pods"] = pods;
  json items = json::array();
  for (const auto& item : metric.items) {
    items.push_back({{"what", item.what}, {"value", item.quantity}, {"valueMilli", item.milli}});
  }
  result["values"] = items;
  result["replicas"] = metric.proposal ? proposalJson(*metric.proposal) : json(nullptr);
  result["atZero"] = metric.at_zero;
  result["emptyAtZero"] = metric.empty_at_zero;
  return result;
}

}  // namespace

void writeDoctorText(std::ostream& out, const std::vector<HpaDiagnosis>& diagnoses) {
  for (std::size_t i = 0; i < diagnoses.size(); ++i) {
    if (i > 0) out << "\n";
    writeHpa(out, diagnoses[i]);
  }
  if (diagnoses.empty()) out << "no HorizontalPodAutoscaler found\n";
}

json doctorJson(const std::vector<HpaDiagnosis>& diagnoses) {
  json hpas = json::array();
  bool ok = true;
  for (const auto& diagnosis : diagnoses) {
    const hpa::Hpa& hpa = diagnosis.hpa;
    json entry = {{"namespace", hpa.namespace_name},
                  {"name", hpa.name},
                  {"ok", diagnosis.ok},
                  {"cause", diagnosis.cause}};
    entry["scaleTarget"] = hpa.scale_target.kind + "/" + hpa.scale_target.name;
    entry["computedReplicas"] =
        diagnosis.computed_replicas ? json(*diagnosis.computed_replicas) : json(nullptr);
    entry["minReplicas"] = hpa.min_replicas;
    entry["behaviorNote"] = behaviorNote(diagnosis);
    entry["maxReplicas"] = hpa.max_replicas;
    entry["mayScaleToZero"] = diagnosis.may_sit_at_zero;
    entry["zeroCause"] = diagnosis.zero_cause;
    entry["zeroFix"] = diagnosis.zero_fix;
    json status = json::object();
    status["desiredReplicas"] = hpa.desired_replicas ? json(*hpa.desired_replicas) : json(nullptr);
    status["currentReplicas"] = hpa.current_replicas ? json(*hpa.current_replicas) : json(nullptr);
    json conditions = json::array();
    for (const auto& c : hpa.conditions) {
      conditions.push_back(
          {{"type", c.type}, {"status", c.status}, {"reason", c.reason}, {"message", c.message}});
    }
    status["conditions"] = conditions;
    entry["status"] = status;
    json apiservices = json::array();
    for (const auto& problem : diagnosis.apiservices) {
      apiservices.push_back(
          {{"name", problem.name}, {"problem", problem.message}, {"fix", problem.fix}});
    }
    entry["apiServices"] = apiservices;
    entry["forbidden"] = diagnosis.denied;
    if (diagnosis.scale) {
      entry["scale"] = {{"specReplicas", diagnosis.scale->spec_replicas},
                        {"statusReplicas", diagnosis.scale->status_replicas},
                        {"selector", diagnosis.scale->selector}};
    }
    json metrics = json::array();
    for (const auto& metric : diagnosis.metrics) metrics.push_back(metricJson(metric));
    entry["metrics"] = metrics;
    hpas.push_back(entry);
    ok = ok && diagnosis.ok;
  }
  return {{"ok", ok && !diagnoses.empty()}, {"hpas", hpas}};
}

}  // namespace metrics_adapter::cli
