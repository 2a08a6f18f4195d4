#include "cli/doctor/doctor_adapter_config.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace metrics_adapter::cli {
namespace {

using nlohmann::json;

// Answers GETs from a table of paths; anything else is a 404, as the API server answers.
class TableKubeApi : public kube::KubeApi {
 public:
  json get(const std::string& path, std::string_view, std::chrono::milliseconds) override {
    auto it = answers.find(path);
    if (it == answers.end()) throw kube::KubeError(404, path + " not found");
    return it->second;
  }
  json post(const std::string&, const json&, std::chrono::milliseconds) override {
    throw kube::KubeError(405, "read-only");
  }
  std::map<std::string, json> answers;
};

constexpr const char* kAdapterPath = "/apis/apps/v1/namespaces/cm/deployments/adapter";
constexpr const char* kConfigMapPath = "/api/v1/namespaces/cm/configmaps/rules";

json adapterDeployment(const json& args, const json& mount, const json& config_map_volume) {
  return {{"spec",
           {{"template",
             {{"spec",
               {{"containers", {{{"name", "adapter"}, {"args", args}, {"volumeMounts", {mount}}}}},
                {"volumes", {{{"name", "config"}, {"configMap", config_map_volume}}}}}}}}}}};
}

TableKubeApi kitShapedCluster() {
  TableKubeApi api;
  api.answers[kAdapterPath] =
      adapterDeployment({"--prometheus-url=http://prom:9090", "--config=/etc/adapter/config.yaml"},
                        {{"name", "config"}, {"mountPath", "/etc/adapter"}}, {{"name", "rules"}});
  api.answers[kConfigMapPath] = {{"data", {{"config.yaml", "rules: []\n"}}}};
  return api;
}

TEST(AdapterDeploymentConfigTest, DirectoryMountOfTheKit) {
  TableKubeApi api = kitShapedCluster();
  const AdapterDeploymentConfig found = readAdapterDeploymentConfig(api, "cm", "adapter");
  EXPECT_EQ(found.config_text, "rules: []\n");
  EXPECT_EQ(found.prometheus_url, "http://prom:9090");
  EXPECT_EQ(found.source, "configmap cm/rules, key config.yaml");
}

TEST(AdapterDeploymentConfigTest, SubPathMountAndFlagsAsTwoWords) {
  TableKubeApi api;
  api.answers[kAdapterPath] = adapterDeployment(
      {"--config", "/etc/adapter.yaml"},
      {{"name", "config"}, {"mountPath", "/etc/adapter.yaml"}, {"subPath", "a.yaml"}},
      {{"name", "rules"}});
  api.answers[kConfigMapPath] = {{"data", {{"a.yaml", "x"}}}};
  const AdapterDeploymentConfig found = readAdapterDeploymentConfig(api, "cm", "adapter");
  EXPECT_EQ(found.config_text, "x");
  EXPECT_FALSE(found.prometheus_url.has_value());
}

TEST(AdapterDeploymentConfigTest, ItemsRenameTheKey) {
  TableKubeApi api;
  api.answers[kAdapterPath] = adapterDeployment(
      {"--config=/etc/adapter/config.yaml"}, {{"name", "config"}, {"mountPath", "/etc/adapter"}},
      {{"name", "rules"}, {"items", {{{"key", "prod.yaml"}, {"path", "config.yaml"}}}}});
  api.answers[kConfigMapPath] = {{"data", {{"prod.yaml", "prod"}}}};
  EXPECT_EQ(readAdapterDeploymentConfig(api, "cm", "adapter").config_text, "prod");
}

TEST(AdapterDeploymentConfigTest, SaysWhatIsMissing) {
  TableKubeApi api = kitShapedCluster();
  api.answers[kConfigMapPath] = {{"data", {{"other.yaml", ""}}}};
  try {
    readAdapterDeploymentConfig(api, "cm", "adapter");
    FAIL() << "a ConfigMap without the key";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("configmap cm/rules has no key config.yaml"),
              std::string::npos)
        << e.what();
  }
  api.answers[kAdapterPath] =
      adapterDeployment({"--v=2"}, {{"name", "config"}, {"mountPath", "/x"}}, {{"name", "rules"}});
  EXPECT_THROW(readAdapterDeploymentConfig(api, "cm", "adapter"), std::runtime_error);
  EXPECT_THROW(readAdapterDeploymentConfig(api, "cm", "absent"), kube::KubeError);
}

}  // namespace
}  // namespace metrics_adapter::cli
