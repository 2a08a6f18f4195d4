#include "metrics_adapter/hpa/hpa_replicas.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace metrics_adapter::hpa {
namespace {

// The controller averages milli-values in integer arithmetic (sum / count, truncated) before
// dividing by the target, so the doctor does the same to land on the same replica count.
std::int64_t averageMilli(const std::map<std::string, std::int64_t>& values) {
  std::int64_t sum = 0;
  for (const auto& [pod, value] : values) sum += value;
  return values.empty() ? 0 : sum / static_cast<std::int64_t>(values.size());
}

double usageRatio(std::int64_t usage, std::int64_t target) {
  return static_cast<double>(usage) / static_cast<double>(target);
}

std::int32_t ceilReplicas(double value) { return static_cast<std::int32_t>(std::ceil(value)); }

bool withinTolerance(double ratio) { return std::fabs(1.0 - ratio) <= kHpaTolerance; }

// Sorts the pods as the controller's groupPods does, into proposal.ignored (deleted, Failed),
// .unready (Pending; for cpu also Running and not Ready) and .missing (no value), and drops the
// values of the ignored and unready ones from `values`. Returns the count of the rest.
std::int32_t groupPods(const std::vector<HpaPod>& pods, const std::string& resource,
                       std::map<std::string, std::int64_t>& values, ReplicaProposal& proposal) {
  std::int32_t ready = 0;
  for (const HpaPod& pod : pods) {
    if (pod.deleted || pod.phase == "Failed") {
      proposal.ignored.push_back(pod.name);
    } else if (pod.phase == "Pending" ||
               (resource == "cpu" && !pod.ready && values.contains(pod.name))) {
      proposal.unready.push_back(pod.name);
    } else if (!values.contains(pod.name)) {
      proposal.missing.push_back(pod.name);
    } else {
      ++ready;
    }
  }
  for (const auto& name : proposal.ignored) values.erase(name);
  for (const auto& name : proposal.unready) values.erase(name);
  return ready;
}

// The part of the replica calculation both pod-based algorithms share, once the pods are
// grouped and `ratio_of` (values -> usage ratio) gave proposal.ratio: no change within the
// tolerance; otherwise missing pods count as `at_target(pod)` on the way down and 0 on the way
// up, Pending ones as 0 on the way up, and the ratio is taken again.
template <typename RatioOf, typename AtTarget>
void finishPodProposal(std::int32_t current_replicas, std::int32_t ready,
                       std::map<std::string, std::int64_t> values, RatioOf ratio_of,
                       AtTarget at_target, ReplicaProposal& proposal) {
  const bool scale_up_with_unready = !proposal.unready.empty() && proposal.ratio > 1.0;
  if (!scale_up_with_unready && proposal.missing.empty()) {
    proposal.replicas =
        withinTolerance(proposal.ratio) ? current_replicas : ceilReplicas(proposal.ratio * ready);
    return;
  }
  for (const auto& name : proposal.missing)
    values[name] = proposal.ratio < 1.0 ? at_target(name) : 0;
  if (scale_up_with_unready) {
    for (const auto& name : proposal.unready) values[name] = 0;
  }
  const std::optional<double> new_ratio = ratio_of(values);
  if (!new_ratio) {
    proposal.error = "no metrics returned matched known pods";
    return;
  }
  const bool flips =
      (proposal.ratio < 1.0 && *new_ratio > 1.0) || (proposal.ratio > 1.0 && *new_ratio < 1.0);
  if (withinTolerance(*new_ratio) || flips) {
    proposal.replicas = current_replicas;
    return;
  }
  const std::int32_t replicas = ceilReplicas(*new_ratio * static_cast<double>(values.size()));
  const bool wrong_way = (*new_ratio < 1.0 && replicas > current_replicas) ||
                         (*new_ratio > 1.0 && replicas < current_replicas);
  proposal.replicas = wrong_way ? current_replicas : replicas;
}

// The start both pod-based algorithms share: the controller's errors for no pods and for no
// value left once the pods are grouped (`no_values`, worded differently by the two); nullopt
// after setting proposal.error, else the count of ready pods with a value.
std::optional<std::int32_t> startPodProposal(const std::vector<HpaPod>& pods,
                                             const std::string& resource,
                                             std::map<std::string, std::int64_t>& values,
                                             ReplicaProposal& proposal, const char* no_values) {
  if (pods.empty()) {
    proposal.error = "no pods returned by selector while calculating replica count";
    return std::nullopt;
  }
  const std::int32_t ready = groupPods(pods, resource, values, proposal);
  if (values.empty()) {
    proposal.error = no_values;
    return std::nullopt;
  }
  return ready;
}

// The summed usage over the summed requests of the pods that have both, as the controller's
// GetResourceUtilizationRatio: whole percent (truncated), and the raw average usage.
struct Utilization {
  std::int32_t percent = 0;
  std::int64_t average_milli = 0;
};
std::optional<Utilization> utilizationOf(const std::map<std::string, std::int64_t>& values,
                                         const std::map<std::string, std::int64_t>& requests) {
  std::int64_t usage = 0;
  std::int64_t requested = 0;
  std::int64_t entries = 0;
  for (const auto& [pod, value] : values) {
    auto request = requests.find(pod);
    if (request == requests.end()) continue;
    usage += value;
    requested += request->second;
    ++entries;
  }
  if (requested == 0) return std::nullopt;
  return Utilization{static_cast<std::int32_t>(usage * 100 / requested), usage / entries};
}

}  // namespace

ReplicaProposal podsMetricReplicas(std::int32_t current_replicas, std::int64_t target_milli,
                                   const std::map<std::string, std::int64_t>& values_milli,
                                   const std::vector<HpaPod>& pods, const std::string& resource) {
  ReplicaProposal proposal;
  std::map<std::string, std::int64_t> values = values_milli;
  const auto ready = startPodProposal(pods, resource, values, proposal,
                                      "did not receive metrics for any ready pods");
  if (!ready) return proposal;
  proposal.usage_milli = averageMilli(values);
  proposal.ratio = usageRatio(proposal.usage_milli, target_milli);
  finishPodProposal(
      current_replicas, *ready, std::move(values),
      [&](const auto& filled) -> std::optional<double> {
        return usageRatio(averageMilli(filled), target_milli);
      },
      [&](const std::string&) { return target_milli; }, proposal);
  return proposal;
}

PodRequests podRequests(const std::vector<HpaPod>& pods, const std::string& resource,
                        const std::string& container) {
  PodRequests requests;
  for (const HpaPod& pod : pods) {
    std::int64_t sum = 0;
    for (const HpaContainer& spec : pod.containers) {
      if (!container.empty() && spec.name != container) continue;
      auto request = spec.requests_milli.find(resource);
      if (request == spec.requests_milli.end()) {
        return {{},
                "missing request for " + resource + " in container " + spec.name + " of Pod " +
                    pod.name};
      }
      sum += request->second;
    }
    requests.milli[pod.name] = sum;
  }
  return requests;
}

ReplicaProposal utilizationReplicas(std::int32_t current_replicas, std::int32_t target_percent,
                                    const std::map<std::string, std::int64_t>& values_milli,
                                    const std::vector<HpaPod>& pods, const std::string& resource,
                                    const std::string& container) {
  ReplicaProposal proposal;
  std::map<std::string, std::int64_t> values = values_milli;
  const auto ready =
      startPodProposal(pods, resource, values, proposal,
                       "did not receive metrics for targeted pods (pods might be unready)");
  if (!ready) return proposal;
  PodRequests requests = podRequests(pods, resource, container);
  if (!requests.error.empty()) {
    proposal.error = requests.error;
    return proposal;
  }
  const std::optional<Utilization> utilization = utilizationOf(values, requests.milli);
  if (!utilization || target_percent <= 0) {
    proposal.error = "no metrics returned matched known pods";
    return proposal;
  }
  proposal.utilization = utilization->percent;
  proposal.usage_milli = utilization->average_milli;
  proposal.ratio = static_cast<double>(utilization->percent) / target_percent;
  finishPodProposal(
      current_replicas, *ready, std::move(values),
      [&](const auto& filled) -> std::optional<double> {
        auto again = utilizationOf(filled, requests.milli);
        if (!again) return std::nullopt;
        return static_cast<double>(again->percent) / target_percent;
      },
      [&](const std::string& pod) { return requests.milli[pod]; }, proposal);
  return proposal;
}

ReplicaProposal valueMetricReplicas(std::int32_t current_replicas, std::int64_t usage_milli,
                                    std::int64_t target_milli, std::int32_t ready_pods) {
  ReplicaProposal proposal;
  proposal.usage_milli = usage_milli;
  proposal.ratio = usageRatio(usage_milli, target_milli);
  if (current_replicas == 0) {
    proposal.replicas = ceilReplicas(proposal.ratio);
  } else if (withinTolerance(proposal.ratio)) {
    proposal.replicas = current_replicas;
  } else if (ready_pods == 0) {
    proposal.error = "no pods returned by selector while calculating replica count";
  } else {
    proposal.replicas = ceilReplicas(proposal.ratio * ready_pods);
  }
  return proposal;
}

ReplicaProposal averageValueMetricReplicas(std::int32_t status_replicas, std::int64_t usage_milli,
                                           std::int64_t target_milli) {
  ReplicaProposal proposal;
  proposal.usage_milli = usage_milli;
  if (status_replicas == 0) {
    proposal.from_zero = true;
    proposal.ratio = usageRatio(usage_milli, target_milli);
    proposal.replicas = ceilReplicas(proposal.ratio);
    return proposal;
  }
  proposal.ratio = usageRatio(usage_milli, target_milli * status_replicas);
  proposal.replicas = withinTolerance(proposal.ratio)
                          ? status_replicas
                          : ceilReplicas(usageRatio(usage_milli, target_milli));
  return proposal;
}

std::int32_t clampReplicas(std::int32_t proposed, std::int32_t min_replicas,
                           std::int32_t max_replicas) {
  return std::clamp(proposed, min_replicas, std::max(min_replicas, max_replicas));
}

}  // namespace metrics_adapter::hpa
