#include "metrics_adapter/kube/api_discovery.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

namespace metrics_adapter::kube {
namespace {

class DiscoveryApi : public KubeApi {
 public:
  std::map<std::string, nlohmann::json> answers;
  nlohmann::json get(const std::string& path, std::string_view,
                     std::chrono::milliseconds) override {
    auto it = answers.find(path);
    if (it == answers.end()) throw KubeError(503, "unavailable: " + path);
    return it->second;
  }
  nlohmann::json post(const std::string&, const nlohmann::json&,
                      std::chrono::milliseconds) override {
    return nullptr;
  }
};

TEST(ParseApiResourceListTest, SkipsSubresourcesAndDerivesSingulars) {
  auto list = nlohmann::json::parse(R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
    {"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["list"]},
    {"name":"pods/status","singularName":"","namespaced":true,"kind":"Pod"},
    {"name":"nodes","singularName":"","namespaced":false,"kind":"Node"},
    {"name":"broken"}, 42]})");
  auto resources = parseApiResourceList(list, "", "v1");
  ASSERT_EQ(resources.size(), 2u);
  EXPECT_EQ(resources[0], (ResourceInfo{"", "v1", "Pod", "pods", "pod", true}));
  EXPECT_EQ(resources[1], (ResourceInfo{"", "v1", "Node", "nodes", "node", false}));
  EXPECT_TRUE(parseApiResourceList(nlohmann::json::array(), "", "v1").empty());
}

TEST(DiscoverResourcesTest, CoreFirstThenPreferredGroupVersionsAndFailingGroupsSkipped) {
  DiscoveryApi api;
  api.answers["/api/v1"] = {
      {"resources", {{{"name", "pods"}, {"kind", "Pod"}, {"namespaced", true}}}}};
  api.answers["/apis"] = nlohmann::json::parse(R"({"groups":[
    {"name":"apps","preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},
    {"name":"custom.metrics.k8s.io","preferredVersion":{"version":"v1beta2"}},
    {"name":"serving.kserve.io","preferredVersion":{"version":"v1beta1"}}]})");
  api.answers["/apis/apps/v1"] = {
      {"resources", {{{"name", "deployments"}, {"kind", "Deployment"}, {"namespaced", true}}}}};
  api.answers["/apis/serving.kserve.io/v1beta1"] = {
      {"resources",
       {{{"name", "inferenceservices"}, {"kind", "InferenceService"}, {"namespaced", true}}}}};
  auto resources = discoverResources(api, std::chrono::seconds(1));
  ASSERT_EQ(resources.size(), 3u);
  EXPECT_EQ(resources[0].plural, "pods");
  EXPECT_EQ(resources[1].groupResource(), "deployments.apps");
  EXPECT_EQ(resources[2].groupResource(), "inferenceservices.serving.kserve.io");
  EXPECT_EQ(resources[2].singular, "inferenceservice");
  EXPECT_EQ(resources[2].apiVersion(), "serving.kserve.io/v1beta1");

  api.answers.erase("/api/v1");
  EXPECT_THROW(discoverResources(api, std::chrono::seconds(1)), KubeError);
}

}  // namespace
}  // namespace metrics_adapter::kube
