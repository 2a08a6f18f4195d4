#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::hpa {

// An HPA that cannot be read (not autoscaling/v2, a field of the wrong type).
class HpaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A reference to an object: scaleTargetRef, an Object metric's describedObject.
struct ObjectRef {
  std::string api_version;  // "apps/v1"
  std::string kind;         // "Deployment"
  std::string name;
};

// One entry of spec.metrics, the fields the controller reads to ask for it and to compare.
struct HpaMetric {
  std::string type;         // Pods, Object, External, Resource, ContainerResource
  std::string name;         // the metric (or resource: cpu, memory)
  std::string selector;     // metric.selector as a label selector string ("" = none)
  ObjectRef described;      // Object only
  std::string container;    // ContainerResource only
  std::string target_type;  // Value, AverageValue, Utilization
  std::string target_text;  // the quantity as written ("40", "500m"), or the percentage
  std::optional<std::int64_t> target_milli;    // parsed value / averageValue
  std::optional<std::int32_t> target_percent;  // parsed averageUtilization
};

// A condition of status.conditions.
struct HpaCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
};

// The parts of an autoscaling/v2 HorizontalPodAutoscaler the doctor needs.
struct Hpa {
  std::string namespace_name;
  std::string name;
  ObjectRef scale_target;
  std::int32_t min_replicas = 1;
  std::int32_t max_replicas = 0;
  // spec.behavior's stabilization windows, with the controller's defaults: a scale-down takes
  // the highest recommendation of the last 300 s, a scale-up the lowest of the last 0 s.
  std::int32_t scale_down_window_seconds = 300;
  std::int32_t scale_up_window_seconds = 0;
  std::vector<HpaMetric> metrics;
  std::optional<std::int32_t> current_replicas;  // status.currentReplicas
  std::optional<std::int32_t> desired_replicas;  // status.desiredReplicas
  std::vector<HpaCondition> conditions;
  std::vector<std::string> current_metrics;  // status.currentMetrics, one line each
};

// Reads an HPA object (autoscaling/v2 JSON, as the API returns it or as -f gives it). A missing
// metadata.namespace becomes `default_namespace`. Throws HpaError naming the field.
Hpa parseHpa(const nlohmann::json& object, const std::string& default_namespace);

// A metav1.LabelSelector ({matchLabels, matchExpressions}) as the string form a request's
// labelSelector carries ("app=web,tier in (a,b)"), keys sorted as apimachinery writes them.
// Throws HpaError for an unknown operator.
std::string labelSelectorString(const nlohmann::json& selector);

// The documents of a YAML or JSON file (`---`-separated) as JSON values: plain scalars that
// read as integers, floats, booleans or null become those, quoted ones stay strings. Throws
// HpaError for text that is not YAML.
std::vector<nlohmann::json> yamlDocumentsToJson(std::string_view text);

}  // namespace metrics_adapter::hpa
