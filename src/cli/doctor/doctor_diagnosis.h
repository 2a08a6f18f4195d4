#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/check_config/check_config.h"
#include "cli/doctor/doctor_cluster.h"
#include "metrics_adapter/hpa/hpa_object.h"
#include "metrics_adapter/hpa/hpa_replicas.h"

namespace metrics_adapter::cli {

// One pod of the scale target's selector and what a Pods metric request gave it.
struct PodValue {
  std::string name;
  std::string phase;
  bool ready = false;
  std::optional<std::int64_t> milli;  // the value served, in milli-units
  std::string quantity;               // as served ("37500m")
  std::string why_none;               // when no value: why, in one line
};

// What an answer gave one pod: its value in milli-units and as served, or why it has none.
struct ServedValue {
  std::optional<std::int64_t> milli;
  std::string quantity;
  std::string why_none;
};

// Every pod of `pods` with what `served` (pod name -> value) holds for it, or, when it holds
// nothing, `why_none(pod)`; the values into `values` (pod name -> milli-units) for the replica
// calculator.
std::vector<PodValue> podValues(const std::vector<ClusterPod>& pods,
                                const std::map<std::string, ServedValue>& served,
                                const std::function<std::string(const ClusterPod&)>& why_none,
                                std::map<std::string, std::int64_t>& values);

// What one value of an Object or External answer was.
struct ItemValue {
  std::string what;  // the described object, or the external item's labels
  std::string quantity;
  std::int64_t milli = 0;
};

// One entry of spec.metrics, followed through the server's code.
struct MetricDiagnosis {
  hpa::HpaMetric spec;
  std::string request;               // the GET the HPA controller sends
  std::string target;                // the same request, escaped as it goes over the wire
  std::string rule;                  // "rules[1] serves pods/x from series y"; "" when none
  std::vector<std::string> miss;     // why no rule serves it (explain's lines)
  std::string promql;                // what Prometheus was asked
  std::vector<std::string> samples;  // Prometheus's answer, one line per sample
  std::string answer;                // "200, 3 items" or "404 NotFound: message"
  std::vector<PodValue> pods;        // Pods metrics: every pod of the selector
  std::vector<ItemValue> items;      // Object and External metrics
  std::optional<hpa::ReplicaProposal> proposal;
  bool has_value = false;  // the HPA controller gets a usable value
  bool checked = true;     // false: a type this doctor does not follow yet (Resource)
  std::string cause;       // when !has_value: the cause, one line
  std::string fix;         // what to change, when known
  // Object and External metrics served by a rule: the series it reads and the rule, for the
  // scale-to-zero check; empty / null for a forecast or when no rule serves it.
  std::string series;
  std::shared_ptr<const discovery::CompiledRule> served_by;
  // When the HPA may sit at 0 replicas: whether this metric has series then (one line, "" when
  // not told), and whether it is empty then because only the target's pods export it.
  std::string at_zero;
  bool empty_at_zero = false;
};

// One HPA followed from its spec to the replica count.
struct HpaDiagnosis {
  hpa::Hpa hpa;
  std::optional<TargetScale> scale;
  std::string scale_error;                     // why the scale could not be read
  std::vector<ApiServiceProblem> apiservices;  // in the way between the HPA and the adapter
  std::vector<std::string> denied;             // requests the HPA controller may not make (RBAC)
  std::vector<MetricDiagnosis> metrics;
  std::optional<std::int32_t> computed_replicas;  // max over metrics, within min/max
  bool ok = false;                                // every metric has a value, nothing in the way
  std::string cause;                              // the first cause, "" when ok
  // minReplicas 0 or a target at 0 replicas (checkScaleToZero): what keeps the HPA from leaving
  // 0, and the fix; "" when a metric can wake it.
  bool may_sit_at_zero = false;
  std::string zero_cause;
  std::string zero_fix;
};

// What the diagnosis runs against: the relist the server would do, the cluster's objects.
struct DoctorContext {
  const DiscoveryRun* run = nullptr;
  // The config's forecastRules (external metrics the server answers from forecasts); may be
  // null.
  const std::vector<config::ForecastRule>* forecast_rules = nullptr;
  DoctorCluster* cluster = nullptr;  // null for -f without a cluster
  std::chrono::milliseconds query_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds max_age{std::chrono::minutes(2)};
  // A relist of the same rules looking back far further than max_age (computed when first
  // asked; null when there is none): it still finds a metric whose series are gone, as the
  // server, which remembers the metrics it found, still serves it.
  std::function<const DiscoveryRun*()> history;
};

// Follows every metric of `hpa` through the server's handlers and the HPA algorithm.
HpaDiagnosis diagnoseHpa(const hpa::Hpa& hpa, const DoctorContext& context);

}  // namespace metrics_adapter::cli
