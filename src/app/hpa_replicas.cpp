#include "app/hpa_replicas.h"

#include <algorithm>
#include <cmath>

namespace metrics_adapter::app {
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

}  // namespace

ReplicaProposal podsMetricReplicas(std::int32_t current_replicas, std::int64_t target_milli,
                                   const std::map<std::string, std::int64_t>& values_milli,
                                   const std::vector<HpaPod>& pods) {
  ReplicaProposal proposal;
  if (pods.empty()) {
    proposal.error = "no pods returned by selector while calculating replica count";
    return proposal;
  }
  std::map<std::string, std::int64_t> values = values_milli;
  std::int32_t ready = 0;
  for (const HpaPod& pod : pods) {
    if (pod.deleted || pod.phase == "Failed") {
      proposal.ignored.push_back(pod.name);
    } else if (pod.phase == "Pending") {
      proposal.unready.push_back(pod.name);
    } else if (!values.contains(pod.name)) {
      proposal.missing.push_back(pod.name);
    } else {
      ++ready;
    }
  }
  for (const auto& name : proposal.ignored) values.erase(name);
  for (const auto& name : proposal.unready) values.erase(name);
  if (values.empty()) {
    proposal.error = "did not receive metrics for any ready pods";
    return proposal;
  }
  proposal.usage_milli = averageMilli(values);
  proposal.ratio = usageRatio(proposal.usage_milli, target_milli);
  const bool scale_up_with_unready = !proposal.unready.empty() && proposal.ratio > 1.0;
  if (!scale_up_with_unready && proposal.missing.empty()) {
    proposal.replicas =
        withinTolerance(proposal.ratio) ? current_replicas : ceilReplicas(proposal.ratio * ready);
    return proposal;
  }
  // Missing pods hold the scale back: they count as at target on the way down, idle on the
  // way up; Pending pods count as idle on the way up.
  for (const auto& name : proposal.missing) values[name] = proposal.ratio < 1.0 ? target_milli : 0;
  if (scale_up_with_unready) {
    for (const auto& name : proposal.unready) values[name] = 0;
  }
  const double new_ratio = usageRatio(averageMilli(values), target_milli);
  const bool flips =
      (proposal.ratio < 1.0 && new_ratio > 1.0) || (proposal.ratio > 1.0 && new_ratio < 1.0);
  if (withinTolerance(new_ratio) || flips) {
    proposal.replicas = current_replicas;
    return proposal;
  }
  const std::int32_t replicas = ceilReplicas(new_ratio * static_cast<double>(values.size()));
  const bool wrong_way = (new_ratio < 1.0 && replicas > current_replicas) ||
                         (new_ratio > 1.0 && replicas < current_replicas);
  proposal.replicas = wrong_way ? current_replicas : replicas;
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

}  // namespace metrics_adapter::app
