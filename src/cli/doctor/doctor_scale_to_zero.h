#pragma once

#include <chrono>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/doctor/doctor_diagnosis.h"
#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::cli {

// How far back the doctor reads a metric's series to see where they came from: a Deployment
// parked at zero overnight still has the series of its last pods in it.
inline constexpr std::chrono::hours kZeroLookback{24};

// The label names that carry a pod's name, in the order they are believed: the pod a series is
// about (exported_pod, when the scrape renamed it) before the scraped one.
inline constexpr std::string_view kPodLabels[] = {"exported_pod", "pod", "pod_name",
                                                  "kubernetes_pod_name"};

// Where the series of a metric came from over kZeroLookback, as their pod labels tell.
struct SeriesOrigin {
  enum class Source {
    kUnknown,     // the question could not be asked (no rule, Prometheus failed)
    kNone,        // no series in the lookback
    kTargetPods,  // every series names a pod of the scale target: none while it has no pod
    kElsewhere,   // some series name another pod, or none: they exist without the target's pods
  };
  Source source = Source::kUnknown;
  std::vector<std::string> target_pods;  // the scale target's pods that exported them
  std::vector<std::string> other_pods;   // other pods; "" for series without a pod label
};

// True when `pod` is one of `current_pods` or named as the controller of `target` names its
// pods: <name>-<template hash>-<5 characters> for a Deployment, <name>-<ordinal> for a
// StatefulSet, <name>-<5 characters> for others (ReplicaSet, Job).
bool podOfTarget(const hpa::ObjectRef& target, const std::set<std::string>& current_pods,
                 std::string_view pod);

// Sorts the samples of a `count by (kPodLabels)` query: each names the pod of the first of
// kPodLabels it carries, or none.
SeriesOrigin classifyOrigin(const std::vector<prometheus::Sample>& samples,
                            const hpa::ObjectRef& target,
                            const std::set<std::string>& current_pods);

// For an HPA that may sit at 0 replicas (minReplicas 0, or its target at 0): whether each of its
// metrics has series while the target has no pod (from the rule's series over kZeroLookback,
// their pod labels, and the answer now), into the metrics' at_zero / empty_at_zero; and, when no
// metric can bring the target back from 0, the trap as diagnosis.zero_cause with the metric that
// could wake it instead (the llm-d gateway's queue, with its rule) as zero_fix. Reads
// diagnosis.metrics as diagnoseHpa left them.
void checkScaleToZero(const std::vector<ClusterPod>& pods, const DoctorContext& context,
                      HpaDiagnosis& diagnosis);

}  // namespace metrics_adapter::cli
