#include "metrics_adapter/api/discovery_documents.h"

namespace metrics_adapter::api {
namespace {

Json groupVersion(const std::string& version) {
  return {{"groupVersion", std::string(kCustomMetricsGroup) + "/" + version}, {"version", version}};
}

Json customGroupBody() {
  return {{"name", kCustomMetricsGroup},
          {"versions", Json::array({groupVersion("v1beta1"), groupVersion("v1beta2")})},
          {"preferredVersion", groupVersion("v1beta1")}};
}

}  // namespace

bool isCustomMetricsVersion(const std::string& version) {
  return version == "v1beta1" || version == "v1beta2";
}

Json apiGroupList() {
  return {
      {"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", Json::array({customGroupBody()})}};
}

Json customMetricsGroup() {
  Json group = {{"kind", "APIGroup"}, {"apiVersion", "v1"}};
  group.update(customGroupBody());
  return group;
}

Json customMetricsResourceList(const std::string& version,
                               const discovery::RegistrySnapshot& snapshot) {
  Json resources = Json::array();
  for (const auto& metric : snapshot.customMetrics()) {
    // Scope comes from the resource itself, so every entry sharing a resource prefix agrees
    // (the aggregator drops the whole group-version otherwise, api.md §4.6).
    resources.push_back({{"name", metric.resource.groupResource() + "/" + metric.metric},
                         {"singularName", ""},
                         {"namespaced", metric.resource.namespaced},
                         {"kind", "MetricValueList"},
                         {"verbs", Json::array({"get"})}});
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", std::string(kCustomMetricsGroup) + "/" + version},
          {"resources", std::move(resources)}};
}

}  // namespace metrics_adapter::api
