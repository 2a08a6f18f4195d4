#include "metrics_adapter/api/discovery_documents.h"

namespace metrics_adapter::api {
namespace {

Json groupVersion(const std::string& group, const std::string& version) {
  return {{"groupVersion", group + "/" + version}, {"version", version}};
}

Json customGroupBody() {
  return {{"name", kCustomMetricsGroup},
          {"versions", Json::array({groupVersion(kCustomMetricsGroup, "v1beta1"),
                                    groupVersion(kCustomMetricsGroup, "v1beta2")})},
          {"preferredVersion", groupVersion(kCustomMetricsGroup, "v1beta1")}};
}

Json externalGroupBody() {
  return {{"name", kExternalMetricsGroup},
          {"versions", Json::array({groupVersion(kExternalMetricsGroup, kExternalMetricsVersion)})},
          {"preferredVersion", groupVersion(kExternalMetricsGroup, kExternalMetricsVersion)}};
}

Json resourceMetricsGroupBody() {
  return {{"name", kResourceMetricsGroup},
          {"versions", Json::array({groupVersion(kResourceMetricsGroup, kResourceMetricsVersion)})},
          {"preferredVersion", groupVersion(kResourceMetricsGroup, kResourceMetricsVersion)}};
}

Json forecastGroupBody() {
  return {{"name", kForecastGroup},
          {"versions", Json::array({groupVersion(kForecastGroup, kForecastVersion)})},
          {"preferredVersion", groupVersion(kForecastGroup, kForecastVersion)}};
}

Json apiGroup(const Json& body) {
  Json group = {{"kind", "APIGroup"}, {"apiVersion", "v1"}};
  group.update(body);
  return group;
}

Json resourceList(const std::string& group_version, Json resources) {
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group_version},
          {"resources", std::move(resources)}};
}

}  // namespace

bool isCustomMetricsVersion(const std::string& version) {
  return version == "v1beta1" || version == "v1beta2";
}

Json apiGroupList() {
  return {{"kind", "APIGroupList"},
          {"apiVersion", "v1"},
          {"groups", Json::array({customGroupBody(), externalGroupBody()})}};
}

Json apiGroupListWithResourceMetrics() {
  Json list = apiGroupList();
  list["groups"].push_back(resourceMetricsGroupBody());
  return list;
}

Json customMetricsGroup() { return apiGroup(customGroupBody()); }

Json externalMetricsGroup() { return apiGroup(externalGroupBody()); }

Json customMetricsResourceList(const std::string& version,
                               const discovery::RegistrySnapshot& snapshot) {
  Json resources = Json::array();
  for (const auto& metric : snapshot.customMetrics()) {
    // Scope comes from the resource itself, so every entry sharing a resource prefix agrees
    // (the aggregator drops the whole group-version otherwise, docs/api-contract.md "Discovery
    // documents").
    resources.push_back({{"name", metric.resource.groupResource() + "/" + metric.metric},
                         {"singularName", ""},
                         {"namespaced", metric.resource.namespaced},
                         {"kind", "MetricValueList"},
                         {"verbs", Json::array({"get"})}});
  }
  return resourceList(std::string(kCustomMetricsGroup) + "/" + version, std::move(resources));
}

Json externalMetricsResourceList(const discovery::RegistrySnapshot& snapshot,
                                 const std::vector<std::string>& forecasts) {
  Json resources = Json::array();
  // Always namespaced, also for `namespaced: false` rules: the only route has a namespace.
  auto add = [&resources](const std::string& name) {
    resources.push_back({{"name", name},
                         {"singularName", ""},
                         {"namespaced", true},
                         {"kind", "ExternalMetricValueList"},
                         {"verbs", Json::array({"get"})}});
  };
  for (const auto& metric : snapshot.externalMetrics()) add(metric.metric);
  for (const std::string& name : forecasts) {
    if (!snapshot.findExternal(name)) add(name);
  }
  return resourceList(std::string(kExternalMetricsGroup) + "/" + kExternalMetricsVersion,
                      std::move(resources));
}

Json resourceMetricsGroup() { return apiGroup(resourceMetricsGroupBody()); }

Json resourceMetricsResourceList() {
  auto resource = [](const char* name, bool namespaced, const char* kind) {
    return Json{{"name", name},
                {"singularName", ""},
                {"namespaced", namespaced},
                {"kind", kind},
                {"verbs", Json::array({"get", "list"})}};
  };
  return resourceList(
      std::string(kResourceMetricsGroup) + "/" + kResourceMetricsVersion,
      Json::array({resource("nodes", false, "NodeMetrics"), resource("pods", true, "PodMetrics")}));
}

Json forecastGroup() { return apiGroup(forecastGroupBody()); }

Json forecastResourceList() {
  Json observer = {{"name", kObserverResource},
                   {"singularName", ""},
                   {"namespaced", true},
                   {"kind", "ForecastObserver"},
                   {"verbs", Json::array({"get"})}};
  return resourceList(std::string(kForecastGroup) + "/" + kForecastVersion,
                      Json::array({std::move(observer)}));
}

Json servedResourceLists(const discovery::RegistrySnapshot& snapshot,
                         const std::vector<std::string>& forecasts, bool resource_metrics) {
  auto group = [](const char* name, Json versions) {
    return Json{{"name", name}, {"versions", std::move(versions)}};
  };
  Json groups = Json::array();
  groups.push_back(
      group(kCustomMetricsGroup, Json::array({customMetricsResourceList("v1beta1", snapshot),
                                              customMetricsResourceList("v1beta2", snapshot)})));
  groups.push_back(group(kExternalMetricsGroup,
                         Json::array({externalMetricsResourceList(snapshot, forecasts)})));
  if (resource_metrics) {
    groups.push_back(group(kResourceMetricsGroup, Json::array({resourceMetricsResourceList()})));
  }
  groups.push_back(group(kForecastGroup, Json::array({forecastResourceList()})));
  return groups;
}

}  // namespace metrics_adapter::api
