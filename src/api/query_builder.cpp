#include "metrics_adapter/api/query_builder.h"

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/promql/label_matchers.h"

namespace metrics_adapter::api {
namespace {

std::string joinValues(const std::vector<std::string>& values) {
  std::string joined;
  for (const auto& value : values) {
    if (!joined.empty()) joined += '|';
    joined += value;
  }
  return joined;
}

// Kubernetes keys may contain '.', '-' and '/', which PromQL label names may not.
bool isPrometheusLabelName(const std::string& name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

}  // namespace

BuiltQuery buildCustomQuery(const CustomQuerySpec& spec, const kube::RestMapper& mapper) {
  const auto& rule = *spec.rule;
  BuiltQuery built;
  auto resource_label = rule.resources.labelForResource(spec.resource);
  if (!resource_label) {
    throw ApiError::notFound("rule " + rule.id + " maps no Prometheus label to " +
                             spec.resource.groupResource());
  }
  built.resource_label = *resource_label;

  std::vector<promql::LabelMatcher> matchers;
  promql::TemplateValue values_by_name = std::map<std::string, std::string>();
  auto& by_name = std::get<std::map<std::string, std::string>>(values_by_name);
  try {
    matchers = promql::selectorToMatchers(spec.metric_selector);
  } catch (const promql::SelectorError& e) {
    throw ApiError::badRequest(std::string("metricLabelSelector: ") + e.what());
  }
  for (const auto& requirement : spec.metric_selector.requirements) {
    if (!isPrometheusLabelName(requirement.key)) {
      throw ApiError::badRequest("metricLabelSelector: \"" + requirement.key +
                                 "\" is not a Prometheus label name");
    }
    by_name[requirement.key] = joinValues(requirement.values);
  }

  if (!spec.namespace_name.empty()) {
    auto namespaces = mapper.resourceFor("", "namespaces");
    auto namespace_label = namespaces ? rule.resources.labelForResource(*namespaces) : std::nullopt;
    if (!namespace_label) {
      throw ApiError::notFound("rule " + rule.id +
                               " maps no Prometheus label to namespaces, so namespaced requests "
                               "cannot be answered");
    }
    matchers.push_back({*namespace_label, promql::MatchOperator::kEqual, spec.namespace_name});
    by_name[*namespace_label] = spec.namespace_name;
  }

  if (spec.any_name) {
    matchers.push_back({built.resource_label, promql::MatchOperator::kNotEqual, ""});
    by_name[built.resource_label] = "";
  } else {
    matchers.push_back(promql::objectNamesMatcher(built.resource_label, spec.names));
    by_name[built.resource_label] = joinValues(spec.names);
  }

  promql::TemplateData data;
  data["Series"] = spec.series;
  data["LabelMatchers"] = promql::joinMatchers(matchers);
  data["LabelValuesByName"] = std::move(values_by_name);
  data["GroupBy"] = built.resource_label;
  data["GroupBySlice"] = std::vector<std::string>{built.resource_label};
  try {
    built.promql = rule.metrics_query.render(data);
  } catch (const promql::TemplateError& e) {
    throw ApiError::internal("metricsQuery of " + rule.id + " failed: " + e.what());
  }
  if (built.promql.empty()) {
    throw ApiError::internal("metricsQuery of " + rule.id + " rendered an empty query");
  }
  return built;
}

}  // namespace metrics_adapter::api
