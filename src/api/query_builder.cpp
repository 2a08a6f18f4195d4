#include "metrics_adapter/api/query_builder.h"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/promql/label_matchers.h"

namespace metrics_adapter::api {
namespace {

using ValuesByName = std::map<std::string, std::string>;

std::string joinValues(std::span<const std::string> values) {
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

// The selector's matchers in key order, with their .LabelValuesByName entries (values joined
// with '|', raw, as upstream). Throws ApiError 400 naming the query `parameter`.
std::vector<promql::LabelMatcher> selectorMatchers(const promql::LabelSelector& selector,
                                                   const std::string& parameter,
                                                   ValuesByName& by_name) {
  std::vector<promql::LabelMatcher> matchers;
  try {
    matchers = promql::selectorToMatchers(selector);
  } catch (const promql::SelectorError& e) {
    throw ApiError::badRequest(parameter + ": " + e.what());
  }
  for (const auto& requirement : selector.requirements) {
    if (!isPrometheusLabelName(requirement.key)) {
      throw ApiError::badRequest(parameter + ": \"" + requirement.key +
                                 "\" is not a Prometheus label name");
    }
    by_name[requirement.key] = joinValues(requirement.values);
  }
  return matchers;
}

// The label the rule maps to the namespaces resource (override or template), if any.
std::optional<std::string> namespaceLabel(const discovery::CompiledRule& rule,
                                          const kube::RestMapper& mapper) {
  auto namespaces = mapper.resourceFor("", "namespaces");
  return namespaces ? rule.resources.labelForResource(*namespaces) : std::nullopt;
}

std::string renderQuery(const discovery::CompiledRule& rule, const promql::TemplateData& data) {
  std::string promql;
  try {
    promql = rule.metrics_query.render(data);
  } catch (const promql::TemplateError& e) {
    throw ApiError::internal("metricsQuery of " + rule.id + " failed: " + e.what());
  }
  if (promql.empty()) {
    throw ApiError::internal("metricsQuery of " + rule.id + " rendered an empty query");
  }
  return promql;
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

  ValuesByName by_name;
  std::vector<promql::LabelMatcher> matchers =
      selectorMatchers(spec.metric_selector, "metricLabelSelector", by_name);

  if (!spec.namespace_name.empty()) {
    auto namespace_label = namespaceLabel(rule, mapper);
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
    matchers.push_back(promql::objectNamesMatcher(
        built.resource_label, std::vector<std::string>(spec.names.begin(), spec.names.end())));
    by_name[built.resource_label] = joinValues(spec.names);
  }

  promql::TemplateData data;
  data["Series"] = spec.series;
  data["LabelMatchers"] = promql::joinMatchers(matchers);
  data["LabelValuesByName"] = std::move(by_name);
  data["GroupBy"] = built.resource_label;
  data["GroupBySlice"] = std::vector<std::string>{built.resource_label};
  built.promql = renderQuery(rule, data);
  return built;
}

std::string buildExternalQuery(const ExternalQuerySpec& spec, const kube::RestMapper& mapper) {
  const auto& rule = *spec.rule;
  ValuesByName by_name;
  std::vector<promql::LabelMatcher> matchers =
      selectorMatchers(spec.selector, "labelSelector", by_name);

  if (rule.resources.namespaced()) {
    auto namespace_label = namespaceLabel(rule, mapper);
    if (!namespace_label) {
      // Upstream fails here too (500), but without saying why.
      throw ApiError::internal(
          rule.id +
          " is namespaced but maps no Prometheus label to namespaces; set "
          "resources.overrides.<label>.resource: namespace (e.g. namespace: {resource: "
          "namespace}), or resources.namespaced: false to ignore the request's namespace");
    }
    matchers.push_back({*namespace_label, promql::MatchOperator::kEqual, spec.namespace_name});
    by_name[*namespace_label] = spec.namespace_name;
  }

  promql::TemplateData data;
  data["Series"] = spec.series;
  data["LabelMatchers"] = promql::joinMatchers(matchers);
  data["LabelValuesByName"] = std::move(by_name);
  data["GroupBy"] = std::string();
  data["GroupBySlice"] = std::vector<std::string>();
  return renderQuery(rule, data);
}

}  // namespace metrics_adapter::api
