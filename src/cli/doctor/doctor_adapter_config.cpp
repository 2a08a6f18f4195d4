#include "cli/doctor/doctor_adapter_config.h"

#include <chrono>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "metrics_adapter/text/percent_encoding.h"

namespace metrics_adapter::cli {
namespace {

constexpr std::chrono::seconds kAdapterReadTimeout{10};

std::vector<std::string> containerWords(const nlohmann::json& container) {
  std::vector<std::string> words;
  for (const char* key : {"command", "args"}) {
    if (!container.contains(key) || !container[key].is_array()) continue;
    for (const auto& word : container[key]) {
      if (word.is_string()) words.push_back(word.get<std::string>());
    }
  }
  return words;
}

// The value of `--name=value`, `--name value` or `-name=value` among `words`, as the server's
// flag parser reads them.
std::optional<std::string> flagValue(const std::vector<std::string>& words, std::string_view name) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    if (!word.starts_with("-")) continue;
    word.remove_prefix(word.starts_with("--") ? 2 : 1);
    if (!word.starts_with(name)) continue;
    word.remove_prefix(name.size());
    if (word.starts_with("=")) return std::string(word.substr(1));
    if (word.empty() && i + 1 < words.size()) return words[i + 1];
  }
  return std::nullopt;
}

// The words joined, for messages built inside the loops below.
std::string joined(std::initializer_list<std::string_view> parts) {
  std::string text;
  for (const std::string_view part : parts) text.append(part);
  return text;
}

}  // namespace

AdapterDeploymentConfig readAdapterDeploymentConfig(kube::KubeApi& api,
                                                    const std::string& namespace_name,
                                                    const std::string& name) {
  const std::string where = "deployment " + namespace_name + "/" + name;
  const nlohmann::json deployment =
      api.get("/apis/apps/v1/namespaces/" + text::percentEncode(namespace_name) + "/deployments/" +
                  text::percentEncode(name),
              "application/json", kAdapterReadTimeout);
  const nlohmann::json pod_spec = deployment.value("spec", nlohmann::json::object())
                                      .value("template", nlohmann::json::object())
                                      .value("spec", nlohmann::json::object());
  for (const auto& container : pod_spec.value("containers", nlohmann::json::array())) {
    const std::vector<std::string> words = containerWords(container);
    const std::optional<std::string> config_path = flagValue(words, "config");
    if (!config_path) continue;
    AdapterDeploymentConfig found;
    found.prometheus_url = flagValue(words, "prometheus-url");
    // The mount holding the file: a subPath mount is the file itself, a directory mount has the
    // file under it (its key, unless the volume's items rename it).
    std::string volume_name;
    std::string relative;
    std::size_t longest = 0;
    for (const auto& mount : container.value("volumeMounts", nlohmann::json::array())) {
      const std::string mount_path = mount.value("mountPath", "");
      const std::string sub_path = mount.value("subPath", "");
      if (!sub_path.empty() && mount_path == *config_path) {
        volume_name = mount.value("name", "");
        relative = sub_path;
        break;
      }
      if (sub_path.empty() && config_path->starts_with(mount_path + "/") &&
          mount_path.size() > longest) {
        longest = mount_path.size();
        volume_name = mount.value("name", "");
        relative = config_path->substr(mount_path.size() + 1);
      }
    }
    if (volume_name.empty()) {
      throw std::runtime_error(
          joined({where, ": no volume is mounted at --config ", *config_path}));
    }
    for (const auto& volume : pod_spec.value("volumes", nlohmann::json::array())) {
      if (volume.value("name", "") != volume_name) continue;
      if (!volume.contains("configMap")) {
        throw std::runtime_error(joined({where, ": volume ", volume_name, " is not a ConfigMap"}));
      }
      const nlohmann::json& source = volume["configMap"];
      std::string key = relative;
      for (const auto& item : source.value("items", nlohmann::json::array())) {
        if (item.value("path", "") == relative) key = item.value("key", relative);
      }
      const std::string map_name = source.value("name", "");
      const nlohmann::json config_map =
          api.get(joined({"/api/v1/namespaces/", text::percentEncode(namespace_name),
                          "/configmaps/", text::percentEncode(map_name)}),
                  "application/json", kAdapterReadTimeout);
      const nlohmann::json data = config_map.value("data", nlohmann::json::object());
      if (!data.contains(key) || !data[key].is_string()) {
        throw std::runtime_error(
            joined({"configmap ", namespace_name, "/", map_name, " has no key ", key, " (", where,
                    " reads --config ", *config_path, ")"}));
      }
      found.config_text = data[key].get<std::string>();
      found.source = joined({"configmap ", namespace_name, "/", map_name, ", key ", key});
      return found;
    }
    throw std::runtime_error(joined({where, ": no volume ", volume_name}));
  }
  throw std::runtime_error(where + ": no container has a --config flag");
}

}  // namespace metrics_adapter::cli
