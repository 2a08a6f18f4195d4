#include "metrics_adapter/hpa/hpa_object.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "metrics_adapter/promql/quantity.h"

namespace metrics_adapter::hpa {
namespace {

using nlohmann::json;

const json& hpaField(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string hpaText(const json& object, const char* key) {
  const json& value = hpaField(object, key);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return value.dump();
  return "";
}

std::optional<std::int32_t> hpaInt(const json& object, const char* key, const std::string& path) {
  const json& value = hpaField(object, key);
  if (value.is_null()) return std::nullopt;
  if (!value.is_number_integer()) throw HpaError(path + "." + key + ": not an integer");
  return value.get<std::int32_t>();
}

ObjectRef objectRef(const json& ref) {
  return {hpaText(ref, "apiVersion"), hpaText(ref, "kind"), hpaText(ref, "name")};
}

// The target of a metric: Value and AverageValue are quantities, Utilization a percentage.
void readTarget(const json& target, const std::string& path, HpaMetric& metric) {
  metric.target_type = hpaText(target, "type");
  if (metric.target_type == "Utilization") {
    const std::string percent = hpaText(target, "averageUtilization");
    metric.target_text = percent + "%";
    std::int32_t parsed = 0;
    const auto [end, error] =
        std::from_chars(percent.data(), percent.data() + percent.size(), parsed);
    if (error != std::errc() || end != percent.data() + percent.size() || parsed <= 0) {
      throw HpaError(path + ".target.averageUtilization: not a positive integer: \"" + percent +
                     "\"");
    }
    metric.target_percent = parsed;
    return;
  }
  const char* key = metric.target_type == "Value" ? "value" : "averageValue";
  metric.target_text = hpaText(target, key);
  metric.target_milli = promql::parseMilliQuantity(metric.target_text);
  if (!metric.target_milli) {
    throw HpaError(path + ".target." + key + ": not a quantity: \"" + metric.target_text + "\"");
  }
}

HpaMetric readMetric(const json& entry, const std::string& path) {
  HpaMetric metric;
  metric.type = hpaText(entry, "type");
  if (metric.type == "Resource" || metric.type == "ContainerResource") {
    const json& source =
        hpaField(entry, metric.type == "Resource" ? "resource" : "containerResource");
    metric.name = hpaText(source, "name");
    metric.container = hpaText(source, "container");
    readTarget(hpaField(source, "target"), path, metric);
    return metric;
  }
  const char* key = metric.type == "Pods"       ? "pods"
                    : metric.type == "Object"   ? "object"
                    : metric.type == "External" ? "external"
                                                : nullptr;
  if (!key) throw HpaError(path + ".type: unknown metric type \"" + metric.type + "\"");
  const json& source = hpaField(entry, key);
  const json& identifier = hpaField(source, "metric");
  metric.name = hpaText(identifier, "name");
  if (metric.name.empty()) throw HpaError(path + "." + key + ".metric.name: missing");
  if (!hpaField(identifier, "selector").is_null()) {
    metric.selector = labelSelectorString(hpaField(identifier, "selector"));
  }
  if (metric.type == "Object") metric.described = objectRef(hpaField(source, "describedObject"));
  readTarget(hpaField(source, "target"), path + "." + key, metric);
  return metric;
}

std::string currentMetricLine(const json& entry) {
  std::string type = hpaText(entry, "type");
  for (const char* key : {"pods", "object", "external", "resource", "containerResource"}) {
    const json& source = hpaField(entry, key);
    if (source.is_null()) continue;
    const json& identifier = hpaField(source, "metric");
    const std::string name =
        identifier.is_null() ? hpaText(source, "name") : hpaText(identifier, "name");
    std::string line = type;
    line.append(" ").append(name).append(": ").append(hpaField(source, "current").dump());
    return line;
  }
  return type;
}

// A plain YAML scalar as JSON reads it: YAML 1.2 core schema's int, float, bool and null.
json yamlScalar(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() != "?") return text;  // quoted or tagged: a string
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return nullptr;
  }
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  std::int64_t integer = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
  if (error == std::errc() && end == text.data() + text.size()) return integer;
  double number = 0;
  auto [fend, ferror] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ferror == std::errc() && fend == text.data() + text.size()) return number;
  return text;
}

json yamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      json object = json::object();
      for (const auto& entry : node) object[entry.first.Scalar()] = yamlToJson(entry.second);
      return object;
    }
    case YAML::NodeType::Sequence: {
      json array = json::array();
      for (const auto& item : node) array.push_back(yamlToJson(item));
      return array;
    }
    case YAML::NodeType::Scalar:
      return yamlScalar(node);
    default:
      return nullptr;
  }
}

}  // namespace

Hpa parseHpa(const json& object, const std::string& default_namespace) {
  const std::string kind = hpaText(object, "kind");
  const std::string api_version = hpaText(object, "apiVersion");
  if (kind != "HorizontalPodAutoscaler" || api_version != "autoscaling/v2") {
    throw HpaError("not an autoscaling/v2 HorizontalPodAutoscaler (kind \"" + kind +
                   "\", apiVersion \"" + api_version + "\")");
  }
  Hpa hpa;
  const json& metadata = hpaField(object, "metadata");
  hpa.name = hpaText(metadata, "name");
  hpa.namespace_name = hpaText(metadata, "namespace");
  if (hpa.namespace_name.empty()) hpa.namespace_name = default_namespace;
  const json& spec = hpaField(object, "spec");
  hpa.scale_target = objectRef(hpaField(spec, "scaleTargetRef"));
  hpa.min_replicas = hpaInt(spec, "minReplicas", "spec").value_or(1);
  hpa.max_replicas = hpaInt(spec, "maxReplicas", "spec").value_or(0);
  const json& behavior = hpaField(spec, "behavior");
  hpa.scale_down_window_seconds = hpaInt(hpaField(behavior, "scaleDown"),
                                         "stabilizationWindowSeconds", "spec.behavior.scaleDown")
                                      .value_or(hpa.scale_down_window_seconds);
  hpa.scale_up_window_seconds =
      hpaInt(hpaField(behavior, "scaleUp"), "stabilizationWindowSeconds", "spec.behavior.scaleUp")
          .value_or(hpa.scale_up_window_seconds);
  const json& metrics = hpaField(spec, "metrics");
  for (std::size_t i = 0; metrics.is_array() && i < metrics.size(); ++i) {
    hpa.metrics.push_back(readMetric(metrics[i], "spec.metrics[" + std::to_string(i) + "]"));
  }
  const json& status = hpaField(object, "status");
  hpa.current_replicas = hpaInt(status, "currentReplicas", "status");
  hpa.desired_replicas = hpaInt(status, "desiredReplicas", "status");
  const json& conditions = hpaField(status, "conditions");
  for (std::size_t i = 0; conditions.is_array() && i < conditions.size(); ++i) {
    const json& c = conditions[i];
    hpa.conditions.push_back(
        {hpaText(c, "type"), hpaText(c, "status"), hpaText(c, "reason"), hpaText(c, "message")});
  }
  const json& current = hpaField(status, "currentMetrics");
  for (std::size_t i = 0; current.is_array() && i < current.size(); ++i) {
    hpa.current_metrics.push_back(currentMetricLine(current[i]));
  }
  return hpa;
}

std::string labelSelectorString(const json& selector) {
  // key -> its requirement's text; apimachinery sorts requirements by key.
  std::vector<std::pair<std::string, std::string>> requirements;
  const json& match_labels = hpaField(selector, "matchLabels");
  if (match_labels.is_object()) {
    for (const auto& [key, value] : match_labels.items()) {
      requirements.emplace_back(
          key, key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
    }
  }
  const json& expressions = hpaField(selector, "matchExpressions");
  for (std::size_t i = 0; expressions.is_array() && i < expressions.size(); ++i) {
    const std::string key = hpaText(expressions[i], "key");
    const std::string op = hpaText(expressions[i], "operator");
    std::vector<std::string> values;
    const json& listed = hpaField(expressions[i], "values");
    for (std::size_t j = 0; listed.is_array() && j < listed.size(); ++j) {
      values.push_back(listed[j].is_string() ? listed[j].get<std::string>() : listed[j].dump());
    }
    std::sort(values.begin(), values.end());
    std::string joined;
    for (const auto& value : values) joined += (joined.empty() ? "" : ",") + value;
    if (op == "In") {
      requirements.emplace_back(key, std::string(key).append(" in (").append(joined).append(")"));
    } else if (op == "NotIn") {
      requirements.emplace_back(key,
                                std::string(key).append(" notin (").append(joined).append(")"));
    } else if (op == "Exists") {
      requirements.emplace_back(key, key);
    } else if (op == "DoesNotExist") {
      requirements.emplace_back(key, "!" + key);
    } else {
      throw HpaError("selector.matchExpressions[" + std::to_string(i) + "].operator: \"" + op +
                     "\" is not a valid label selector operator");
    }
  }
  std::stable_sort(requirements.begin(), requirements.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text;
  for (const auto& [key, requirement] : requirements)
    text += (text.empty() ? "" : ",") + requirement;
  return text;
}

std::vector<json> yamlDocumentsToJson(std::string_view text) {
  std::vector<json> documents;
  try {
    for (const YAML::Node& node : YAML::LoadAll(std::string(text))) {
      if (node.IsNull()) continue;
      documents.push_back(yamlToJson(node));
    }
  } catch (const YAML::Exception& e) {
    throw HpaError(std::string("not YAML: ") + e.what());
  }
  return documents;
}

}  // namespace metrics_adapter::hpa
