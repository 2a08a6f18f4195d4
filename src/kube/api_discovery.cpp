#include "metrics_adapter/kube/api_discovery.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::kube {
namespace {

constexpr std::string_view kAcceptJson = "application/json";

std::string stringField(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::vector<ResourceInfo> parseApiResourceList(const nlohmann::json& list, std::string_view group,
                                               std::string_view version) {
  std::vector<ResourceInfo> resources;
  auto items = list.find("resources");
  if (!list.is_object() || items == list.end() || !items->is_array()) return resources;
  for (const auto& item : *items) {
    if (!item.is_object()) continue;
    ResourceInfo info;
    info.plural = stringField(item, "name");
    info.kind = stringField(item, "kind");
    if (info.plural.empty() || info.kind.empty() || info.plural.find('/') != std::string::npos) {
      continue;
    }
    info.group = std::string(group);
    info.version = std::string(version);
    info.singular = stringField(item, "singularName");
    if (info.singular.empty()) info.singular = text::lowerAscii(info.kind);
    auto namespaced = item.find("namespaced");
    info.namespaced =
        namespaced != item.end() && namespaced->is_boolean() && namespaced->get<bool>();
    resources.push_back(std::move(info));
  }
  return resources;
}

std::vector<ResourceInfo> discoverResources(KubeApi& api, std::chrono::milliseconds timeout) {
  std::vector<ResourceInfo> resources =
      parseApiResourceList(api.get("/api/v1", kAcceptJson, timeout), "", "v1");
  nlohmann::json groups = api.get("/apis", kAcceptJson, timeout);
  auto group_list = groups.find("groups");
  if (group_list == groups.end() || !group_list->is_array()) return resources;
  for (const auto& group : *group_list) {
    if (!group.is_object()) continue;
    std::string name = stringField(group, "name");
    auto preferred = group.find("preferredVersion");
    if (name.empty() || preferred == group.end() || !preferred->is_object()) continue;
    std::string version = stringField(*preferred, "version");
    if (version.empty()) continue;
    try {
      std::string path = "/apis/" + name;
      path.append("/").append(version);
      auto found = parseApiResourceList(api.get(path, kAcceptJson, timeout), name, version);
      resources.insert(resources.end(), found.begin(), found.end());
    } catch (const KubeError& e) {
      // Aggregated groups (ours included) can be unavailable; the rest of the mapping stands.
      SPDLOG_DEBUG("REST mapping: skipping {}/{}: {}", name, version, e.what());
    }
  }
  return resources;
}

}  // namespace metrics_adapter::kube
