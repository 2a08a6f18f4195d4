#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace metrics_adapter::app {

// The HPA controller's tolerance (--horizontal-pod-autoscaler-tolerance, default 0.1): a usage
// ratio within 1±tolerance keeps the current replica count.
constexpr double kHpaTolerance = 0.1;

// A pod of the scale target's selector as the replica calculator sorts it.
struct HpaPod {
  std::string name;
  std::string phase;     // status.phase: Running, Pending, Failed, Succeeded, ""
  bool deleted = false;  // metadata.deletionTimestamp set
  bool ready = false;    // condition Ready is True
};

// What one metric proposes, and why, in the words the doctor prints.
struct ReplicaProposal {
  std::optional<std::int32_t> replicas;  // nullopt: the controller gets an error (`error`)
  std::string error;                     // the controller's message when replicas is nullopt
  std::int64_t usage_milli = 0;          // the usage it compares with the target
  double ratio = 0;                      // usage / target
  std::vector<std::string> missing;      // pods with no value (counted as target or 0)
  std::vector<std::string> unready;      // Pending pods (left out; 0 on a scale-up)
  std::vector<std::string> ignored;      // deleted or Failed pods (left out)
};

// A Pods metric (and AverageValue of a Resource metric): values per pod in milli-units, as the
// controller's calcPlainMetricReplicas turns them into replicas (v1.25-1.32): the average over
// the ready pods with a value against `target_milli`; missing pods count as the target on a
// scale-down and as 0 on a scale-up, Pending ones as 0 on a scale-up; no change within the
// tolerance or when those rules flip the direction. `current_replicas` is the scale's
// spec.replicas.
ReplicaProposal podsMetricReplicas(std::int32_t current_replicas, std::int64_t target_milli,
                                   const std::map<std::string, std::int64_t>& values_milli,
                                   const std::vector<HpaPod>& pods);

// An Object or External metric with a Value target: usage against `target_milli`, times the
// ready pods (Running and Ready), or ceil(ratio) when the target is scaled to zero.
ReplicaProposal valueMetricReplicas(std::int32_t current_replicas, std::int64_t usage_milli,
                                    std::int64_t target_milli, std::int32_t ready_pods);

// An Object or External metric with an AverageValue target: usage divided by the target per
// pod, unless within the tolerance of `status_replicas` (the scale's status.replicas).
ReplicaProposal averageValueMetricReplicas(std::int32_t status_replicas, std::int64_t usage_milli,
                                           std::int64_t target_milli);

// The count the controller sets from the largest proposal: within [min_replicas, max_replicas]
// (before spec.behavior's stabilization window and rate limits, which depend on history).
std::int32_t clampReplicas(std::int32_t proposed, std::int32_t min_replicas,
                           std::int32_t max_replicas);

}  // namespace metrics_adapter::app
