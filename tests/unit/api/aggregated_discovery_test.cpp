#include "metrics_adapter/api/aggregated_discovery.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::api {
namespace {

constexpr const char* kV2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
constexpr const char* kV2Beta1 =
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

struct NegotiationCase {
  std::string accept;
  std::optional<DiscoveryFormat> expected;
};

TEST(NegotiateDiscovery, PicksTheFirstRangeWeCanServe) {
  const std::vector<NegotiationCase> cases = {
      {"", DiscoveryFormat::kLegacy},
      {"application/json", DiscoveryFormat::kLegacy},
      {"*/*", DiscoveryFormat::kLegacy},
      // The kube-aggregator's discovery manager (client-go discovery.AcceptV2).
      {kV2, DiscoveryFormat::kAggregatedV2},
      // kubectl 1.31: v2, then v2beta1, then the legacy list.
      {std::string(kV2) + "," + kV2Beta1 + ",application/json", DiscoveryFormat::kAggregatedV2},
      {std::string(kV2Beta1) + ",application/json", DiscoveryFormat::kAggregatedV2Beta1},
      // Parameters in any order, spaces, quoted values, other parameters ignored.
      {R"(application/json; as=APIGroupDiscoveryList; v="v2"; g=apidiscovery.k8s.io; profile=nopeer)",
       DiscoveryFormat::kAggregatedV2},
      // Protobuf first (we serve JSON only): skipped, the next range is served.
      {"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
           std::string(kV2),
       DiscoveryFormat::kAggregatedV2},
      {"application/vnd.kubernetes.protobuf, */*", DiscoveryFormat::kLegacy},
      // An unknown conversion is not served as something else.
      {"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json",
       DiscoveryFormat::kLegacy},
      {"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList", std::nullopt},
      {"application/json;g=other.io;v=v2;as=APIGroupDiscoveryList", std::nullopt},
      // q orders the ranges; q=0 refuses one.
      {"application/json;q=0.5," + std::string(kV2), DiscoveryFormat::kAggregatedV2},
      {std::string(kV2) + ";q=0,application/json", DiscoveryFormat::kLegacy},
      {"application/vnd.kubernetes.protobuf", std::nullopt},
      {"application/yaml, text/html", std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(negotiateDiscovery(c.accept), c.expected) << c.accept;
  }
}

TEST(AggregatedContentType, NamesTheVersionServed) {
  EXPECT_EQ(aggregatedContentType(DiscoveryFormat::kAggregatedV2), kV2);
  EXPECT_EQ(aggregatedContentType(DiscoveryFormat::kAggregatedV2Beta1), kV2Beta1);
}

ApiResource resource(const std::string& name, bool namespaced, std::string_view kind,
                     std::vector<std::string_view> verbs = {"get"}) {
  return {name, namespaced, kind, std::move(verbs)};
}

std::vector<ApiGroupResources> legacyGroup(std::string_view group, std::string_view version,
                                           std::vector<ApiResource> resources) {
  return {{group, {version}, std::move(resources)}};
}

Json aggregatedDiscovery(const std::vector<ApiGroupResources>& groups, DiscoveryFormat format) {
  return Json::parse(renderAggregatedDiscovery(groups, format));
}

TEST(AggregatedDiscovery, SlashedNamesBecomeSubresourcesOfAParentWithAnEmptyKind) {
  const auto legacy = legacyGroup("custom.metrics.k8s.io", "v1beta1",
                                  {resource("pods/gpu_util", true, "MetricValueList"),
                                   resource("namespaces/gpu_util", false, "MetricValueList"),
                                   resource("pods/queue", true, "MetricValueList")});
  const Json document = aggregatedDiscovery(legacy, DiscoveryFormat::kAggregatedV2);
  EXPECT_EQ(document["kind"], "APIGroupDiscoveryList");
  EXPECT_EQ(document["apiVersion"], "apidiscovery.k8s.io/v2");
  ASSERT_EQ(document["items"].size(), 1u);
  const Json& group = document["items"][0];
  EXPECT_EQ(group["metadata"]["name"], "custom.metrics.k8s.io");
  const Json& version = group["versions"][0];
  EXPECT_EQ(version["version"], "v1beta1");
  EXPECT_EQ(version["freshness"], "Current");
  const Json& resources = version["resources"];
  ASSERT_EQ(resources.size(), 2u);  // pods, namespaces: in the order first named
  const Json empty_kind = {{"group", ""}, {"version", ""}, {"kind", ""}};
  const Json metric_kind = {{"group", ""}, {"version", ""}, {"kind", "MetricValueList"}};
  EXPECT_EQ(resources[0]["resource"], "pods");
  EXPECT_EQ(resources[0]["scope"], "Namespaced");
  EXPECT_EQ(resources[0]["responseKind"], empty_kind);  // never null: client-go 0.26.0-3 panic
  ASSERT_EQ(resources[0]["subresources"].size(), 2u);
  EXPECT_EQ(resources[0]["subresources"][0]["subresource"], "gpu_util");
  EXPECT_EQ(resources[0]["subresources"][0]["responseKind"], metric_kind);
  EXPECT_EQ(resources[0]["subresources"][0]["verbs"], Json::array({"get"}));
  EXPECT_EQ(resources[0]["subresources"][1]["subresource"], "queue");
  EXPECT_EQ(resources[1]["resource"], "namespaces");
  EXPECT_EQ(resources[1]["scope"], "Cluster");
}

TEST(AggregatedDiscovery, EveryVersionOfAGroupListsItsResources) {
  const std::vector<ApiGroupResources> groups = {{"custom.metrics.k8s.io",
                                                  {"v1beta1", "v1beta2"},
                                                  {resource("pods/m", true, "MetricValueList")}}};
  const Json document = aggregatedDiscovery(groups, DiscoveryFormat::kAggregatedV2);
  const Json& versions = document["items"][0]["versions"];
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0]["version"], "v1beta1");  // the first: what a client takes as preferred
  EXPECT_EQ(versions[1]["version"], "v1beta2");
  EXPECT_EQ(versions[0]["resources"], versions[1]["resources"]);
}

TEST(AggregatedDiscovery, TopLevelResourcesKeepTheirKindAndVerbs) {
  const auto legacy = legacyGroup("metrics.k8s.io", "v1beta1",
                                  {resource("nodes", false, "NodeMetrics", {"get", "list"}),
                                   resource("pods", true, "PodMetrics", {"get", "list"})});
  const Json document = aggregatedDiscovery(legacy, DiscoveryFormat::kAggregatedV2Beta1);
  EXPECT_EQ(document["apiVersion"], "apidiscovery.k8s.io/v2beta1");
  const Json& pods = document["items"][0]["versions"][0]["resources"][1];
  EXPECT_EQ(pods["resource"], "pods");
  EXPECT_EQ(pods["responseKind"]["kind"], "PodMetrics");
  EXPECT_EQ(pods["scope"], "Namespaced");
  EXPECT_EQ(pods["singularResource"], "");
  EXPECT_EQ(pods["verbs"], Json::array({"get", "list"}));
  EXPECT_FALSE(pods.contains("subresources"));
}

TEST(AggregatedDiscovery, AVersionWithNothingDiscoveredHasNoResourcesField) {
  const Json document = aggregatedDiscovery(legacyGroup("external.metrics.k8s.io", "v1beta1", {}),
                                            DiscoveryFormat::kAggregatedV2);
  const Json& version = document["items"][0]["versions"][0];
  EXPECT_EQ(version["version"], "v1beta1");
  EXPECT_FALSE(version.contains("resources"));
}

TEST(AggregatedDiscovery, AnEntryWhoseScopeDisagreesWithItsParentIsLeftOut) {
  const auto legacy = legacyGroup(
      "custom.metrics.k8s.io", "v1beta1",
      {resource("pods/a", true, "MetricValueList"), resource("pods/b", false, "MetricValueList")});
  const Json document = aggregatedDiscovery(legacy, DiscoveryFormat::kAggregatedV2);
  const Json& pods = document["items"][0]["versions"][0]["resources"][0];
  ASSERT_EQ(pods["subresources"].size(), 1u);
  EXPECT_EQ(pods["subresources"][0]["subresource"], "a");
}

TEST(AggregatedDiscovery, NamesAreEscapedAsJson) {
  const auto legacy = legacyGroup("custom.metrics.k8s.io", "v1beta1",
                                  {resource("pods/a\"b", true, "MetricValueList")});
  const Json document = aggregatedDiscovery(legacy, DiscoveryFormat::kAggregatedV2);
  EXPECT_EQ(document["items"][0]["versions"][0]["resources"][0]["subresources"][0]["subresource"],
            "a\"b");
}

}  // namespace
}  // namespace metrics_adapter::api
