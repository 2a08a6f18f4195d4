#include "metrics_adapter/api/discovery_documents.h"

#include <nlohmann/json.hpp>

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

std::vector<ApiResource> customMetricResources(const discovery::RegistrySnapshot& snapshot) {
  std::vector<ApiResource> resources;
  resources.reserve(snapshot.customMetrics().size());
  for (const auto& metric : snapshot.customMetrics()) {
    // Scope comes from the resource itself, so every entry sharing a resource prefix agrees
    // (the aggregator drops the whole group-version otherwise, docs/api-contract.md "Discovery
    // documents").
    resources.push_back({metric.resource.groupResource() + "/" + metric.metric,
                         metric.resource.namespaced,
                         "MetricValueList",
                         {"get"}});
  }
  return resources;
}

std::vector<ApiResource> externalMetricResources(const discovery::RegistrySnapshot& snapshot,
                                                 const std::vector<std::string>& forecasts) {
  std::vector<ApiResource> resources;
  // Always namespaced, also for `namespaced: false` rules: the only route has a namespace.
  auto add = [&resources](const std::string& name) {
    resources.push_back({name, true, "ExternalMetricValueList", {"get"}});
  };
  for (const auto& metric : snapshot.externalMetrics()) add(metric.metric);
  for (const std::string& name : forecasts) {
    if (!snapshot.findExternal(name)) add(name);
  }
  return resources;
}

std::vector<ApiResource> resourceMetricResources() {
  return {{"nodes", false, "NodeMetrics", {"get", "list"}},
          {"pods", true, "PodMetrics", {"get", "list"}}};
}

std::vector<ApiResource> forecastResources() {
  return {{kObserverResource, true, "ForecastObserver", {"get"}}};
}

Json resourceList(const std::string& group_version, const std::vector<ApiResource>& resources) {
  Json entries = Json::array();
  for (const auto& resource : resources) {
    Json verbs = Json::array();
    for (const auto verb : resource.verbs) verbs.push_back(verb);
    entries.push_back({{"name", resource.name},
                       {"singularName", ""},
                       {"namespaced", resource.namespaced},
                       {"kind", resource.kind},
                       {"verbs", std::move(verbs)}});
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group_version},
          {"resources", std::move(entries)}};
}

Json customMetricsResourceList(const std::string& version,
                               const discovery::RegistrySnapshot& snapshot) {
  return resourceList(std::string(kCustomMetricsGroup) + "/" + version,
                      customMetricResources(snapshot));
}

Json externalMetricsResourceList(const discovery::RegistrySnapshot& snapshot,
                                 const std::vector<std::string>& forecasts) {
  return resourceList(std::string(kExternalMetricsGroup) + "/" + kExternalMetricsVersion,
                      externalMetricResources(snapshot, forecasts));
}

Json resourceMetricsGroup() { return apiGroup(resourceMetricsGroupBody()); }

Json resourceMetricsResourceList() {
  return resourceList(std::string(kResourceMetricsGroup) + "/" + kResourceMetricsVersion,
                      resourceMetricResources());
}

Json forecastGroup() { return apiGroup(forecastGroupBody()); }

Json forecastResourceList() {
  return resourceList(std::string(kForecastGroup) + "/" + kForecastVersion, forecastResources());
}

std::vector<ApiGroupResources> servedResources(const discovery::RegistrySnapshot& snapshot,
                                               const std::vector<std::string>& forecasts,
                                               bool resource_metrics) {
  std::vector<ApiGroupResources> groups;
  groups.push_back({kCustomMetricsGroup, {"v1beta1", "v1beta2"}, customMetricResources(snapshot)});
  groups.push_back({kExternalMetricsGroup,
                    {kExternalMetricsVersion},
                    externalMetricResources(snapshot, forecasts)});
  if (resource_metrics) {
    groups.push_back({kResourceMetricsGroup, {kResourceMetricsVersion}, resourceMetricResources()});
  }
  groups.push_back({kForecastGroup, {kForecastVersion}, forecastResources()});
  return groups;
}

}  // namespace metrics_adapter::api
