#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace metrics_adapter::hpa {

// The HPA controller's tolerance (--horizontal-pod-autoscaler-tolerance, default 0.1): a usage
// ratio within 1±tolerance keeps the current replica count.
constexpr double kHpaTolerance = 0.1;

// A container of a pod's spec and its requests, resource name ("cpu") -> milli-units.
struct HpaContainer {
  std::string name;
  std::map<std::string, std::int64_t> requests_milli;
};

// A pod of the scale target's selector as the replica calculator sorts it.
struct HpaPod {
  std::string name;
  std::string phase;     // status.phase: Running, Pending, Failed, Succeeded, ""
  bool deleted = false;  // metadata.deletionTimestamp set
  bool ready = false;    // condition Ready is True
  // spec.containers and the restartable init containers (sidecars, restartPolicy Always),
  // whose requests the controller sums since v1.29.
  std::vector<HpaContainer> containers;
};

// What one metric proposes, and why, in the words the doctor prints.
struct ReplicaProposal {
  std::optional<std::int32_t> replicas;     // nullopt: the controller gets an error (`error`)
  std::string error;                        // the controller's message when replicas is nullopt
  std::int64_t usage_milli = 0;             // the usage it compares with the target
  double ratio = 0;                         // usage / target
  std::vector<std::string> missing;         // pods with no value (counted as target or 0)
  std::vector<std::string> unready;         // Pending pods (left out; 0 on a scale-up)
  std::vector<std::string> ignored;         // deleted or Failed pods (left out)
  std::optional<std::int32_t> utilization;  // Utilization targets: usage / requests, in %
  // An AverageValue target at 0 replicas: the controller's ratio divides by 0 pods (NaN or
  // +Inf), so `ratio` holds usage / target instead and the report says so.
  bool from_zero = false;
};

// The requests of `resource` per pod as the controller's calculatePodRequests sums them: every
// container (or only `container`, for a ContainerResource metric), in milli-units. `error` is
// the controller's message for the first container without that request ("missing request for
// cpu in container app of Pod web-1"); then `milli` is empty.
struct PodRequests {
  std::map<std::string, std::int64_t> milli;
  std::string error;
};
PodRequests podRequests(const std::vector<HpaPod>& pods, const std::string& resource,
                        const std::string& container);

// A Pods metric (and AverageValue of a Resource metric): values per pod in milli-units, as the
// controller's calcPlainMetricReplicas turns them into replicas (v1.25-1.32): the average over
// the ready pods with a value against `target_milli`; missing pods count as the target on a
// scale-down and as 0 on a scale-up, Pending ones as 0 on a scale-up; no change within the
// tolerance or when those rules flip the direction. `current_replicas` is the scale's
// spec.replicas. `resource`: "cpu" for a Resource cpu metric (its pods' readiness counts as
// utilizationReplicas says), "" for a Pods metric.
ReplicaProposal podsMetricReplicas(std::int32_t current_replicas, std::int64_t target_milli,
                                   const std::map<std::string, std::int64_t>& values_milli,
                                   const std::vector<HpaPod>& pods,
                                   const std::string& resource = "");

// A Resource or ContainerResource metric with a Utilization target (GetResourceReplicas,
// v1.25-1.32): usage per pod in milli-units (`values_milli`, from metrics.k8s.io) against the
// pods' requests of `resource` (`container`: "" = the whole pod). The utilization is the summed
// usage over the summed requests of the pods with a value, in whole percent; missing pods count
// as at their request on a scale-down and as 0 on a scale-up. For cpu, a Running pod that is not
// Ready counts as unready as the controller treats one within its CPU initialization period
// (the doctor does not read start and transition times).
ReplicaProposal utilizationReplicas(std::int32_t current_replicas, std::int32_t target_percent,
                                    const std::map<std::string, std::int64_t>& values_milli,
                                    const std::vector<HpaPod>& pods, const std::string& resource,
                                    const std::string& container);

// An Object or External metric with a Value target: usage against `target_milli`, times the
// ready pods (Running and Ready), or ceil(ratio) when the target is scaled to zero.
ReplicaProposal valueMetricReplicas(std::int32_t current_replicas, std::int64_t usage_milli,
                                    std::int64_t target_milli, std::int32_t ready_pods);

// An Object or External metric with an AverageValue target: usage divided by the target per
// pod, unless within the tolerance of `status_replicas` (the scale's status.replicas). At 0
// replicas that is always ceil(usage / target): 0 for no usage, as the controller's NaN ratio
// falls outside no tolerance and keeps 0.
ReplicaProposal averageValueMetricReplicas(std::int32_t status_replicas, std::int64_t usage_milli,
                                           std::int64_t target_milli);

// The count the controller sets from the largest proposal: within [min_replicas, max_replicas]
// (before spec.behavior's stabilization window and rate limits, which depend on history).
std::int32_t clampReplicas(std::int32_t proposed, std::int32_t min_replicas,
                           std::int32_t max_replicas);

}  // namespace metrics_adapter::hpa
