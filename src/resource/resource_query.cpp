#include "metrics_adapter/resource/resource_query.h"

#include <algorithm>
#include <utility>

#include "metrics_adapter/promql/label_matchers.h"

namespace metrics_adapter::resource {
namespace {

void sortUnique(std::vector<std::string>& names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
}

// .LabelValuesByName keeps the names raw, joined with '|', as upstream does.
std::string joinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) {
    if (!joined.empty()) joined += '|';
    joined += name;
  }
  return joined;
}

std::string render(const discovery::CompiledResourceRule& rule, const promql::Template& query,
                   std::string_view field, const promql::TemplateData& data) {
  const std::string what = std::string(field) + " of " + rule.id;
  std::string promql;
  try {
    promql = query.render(data);
  } catch (const promql::TemplateError& e) {
    throw ResourceQueryError(what + " failed: " + e.what(), "", std::current_exception());
  }
  if (promql.empty()) throw ResourceQueryError(what + " rendered an empty query", "", nullptr);
  return promql;
}

}  // namespace

std::string renderPodQuery(const discovery::CompiledResourceRule& rule,
                           std::string_view namespace_name, std::vector<std::string> pod_names) {
  sortUnique(pod_names);
  const std::vector<promql::LabelMatcher> matchers = {
      {rule.namespace_label, promql::MatchOperator::kEqual, std::string(namespace_name)},
      promql::objectNamesMatcher(rule.pod_label, pod_names)};
  std::vector<std::string> group_by = {rule.pod_label, rule.source.container_label};
  std::map<std::string, std::string> by_name;
  by_name[rule.namespace_label] = std::string(namespace_name);
  by_name[rule.pod_label] = joinNames(pod_names);  // overwrites the namespace's, as upstream
  promql::TemplateData data;
  data["Series"] = std::string();
  data["LabelMatchers"] = promql::joinMatchers(matchers);
  data["LabelValuesByName"] = std::move(by_name);
  data["GroupBy"] = group_by[0] + "," + group_by[1];
  data["GroupBySlice"] = std::move(group_by);
  return render(rule, rule.container_query, "containerQuery", data);
}

std::string renderNodeQuery(const discovery::CompiledResourceRule& rule,
                            std::vector<std::string> node_names) {
  sortUnique(node_names);
  promql::TemplateData data;
  data["Series"] = std::string();
  data["LabelMatchers"] =
      promql::joinMatchers({promql::objectNamesMatcher(rule.node_label, node_names)});
  data["LabelValuesByName"] =
      std::map<std::string, std::string>{{rule.node_label, joinNames(node_names)}};
  data["GroupBy"] = rule.node_label;
  data["GroupBySlice"] = std::vector<std::string>{rule.node_label};
  return render(rule, rule.node_query, "nodeQuery", data);
}

}  // namespace metrics_adapter::resource
