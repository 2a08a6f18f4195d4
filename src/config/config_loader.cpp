#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/value_checks.h"
#include "config/yaml_reader.h"
#include "metrics_adapter/config/config.h"

namespace metrics_adapter::config {
namespace {

// Configs are a few kilobytes; anything near this is a wrong path, not a config.
constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;

class ConfigParser {
 public:
  explicit ConfigParser(AdapterConfig* config) : config_(config), reader_(config) {}

  void parseDocument(const YAML::Node& root) {
    for (const auto& [key, value] :
         reader_.mapEntries(root, "", {"rules", "externalRules", "resourceRules"})) {
      if (key == "rules") {
        config_->rules = discoveryRules(value, key);
      } else if (key == "externalRules") {
        config_->external_rules = discoveryRules(value, key);
      } else {
        config_->resource_rules = resourceRules(value, key);
      }
    }
  }

 private:
  std::vector<DiscoveryRule> discoveryRules(const YAML::Node& node, const std::string& path) {
    std::vector<DiscoveryRule> rules;
    const std::vector<YAML::Node> items = reader_.listItems(node, path);
    for (std::size_t i = 0; i < items.size(); ++i) {
      rules.push_back(discoveryRule(items[i], indexPath(path, i)));
    }
    return rules;
  }

  DiscoveryRule discoveryRule(const YAML::Node& node, const std::string& path) {
    DiscoveryRule rule;
    for (const auto& [key, value] : reader_.mapEntries(
             node, path, {"seriesQuery", "seriesFilters", "resources", "name", "metricsQuery"})) {
      const std::string field = childPath(path, key);
      if (key == "seriesQuery") {
        rule.series_query = reader_.scalar(value, field);
      } else if (key == "seriesFilters") {
        const std::vector<YAML::Node> items = reader_.listItems(value, field);
        for (std::size_t i = 0; i < items.size(); ++i) {
          rule.series_filters.push_back(seriesFilter(items[i], indexPath(field, i)));
        }
      } else if (key == "resources") {
        rule.resources = resourceMapping(value, field);
      } else if (key == "name") {
        rule.name = nameMapping(value, field);
      } else {
        rule.metrics_query = reader_.scalar(value, field);
      }
    }
    return rule;
  }

  // Exactly one of is/isNot, as upstream demands; an empty pattern counts as absent there too.
  SeriesFilter seriesFilter(const YAML::Node& node, const std::string& path) {
    std::string is;
    std::string is_not;
    for (const auto& [key, value] : reader_.mapEntries(node, path, {"is", "isNot"})) {
      (key == "is" ? is : is_not) = reader_.scalar(value, childPath(path, key));
    }
    if (!is.empty() && !is_not.empty()) {
      reader_.fail(node, path, "has both is and isNot; use one of them per entry");
    }
    if (is.empty() && is_not.empty()) {
      reader_.fail(node, path, "needs one of is or isNot");
    }
    SeriesFilter filter{.is = !is.empty(), .pattern = is.empty() ? is_not : is};
    checkRegex(node, childPath(path, filter.is ? "is" : "isNot"), filter.pattern);
    return filter;
  }

  ResourceMapping resourceMapping(const YAML::Node& node, const std::string& path) {
    ResourceMapping mapping;
    for (const auto& [key, value] :
         reader_.mapEntries(node, path, {"template", "overrides", "namespaced"})) {
      const std::string field = childPath(path, key);
      if (key == "template") {
        mapping.template_text = reader_.scalar(value, field);
      } else if (key == "overrides") {
        for (const auto& [label, target] : reader_.mapEntries(value, field, {})) {
          mapping.overrides[label] = groupResource(target, childPath(field, label));
        }
      } else {
        mapping.namespaced = reader_.boolean(value, field);
      }
    }
    return mapping;
  }

  GroupResourceRef groupResource(const YAML::Node& node, const std::string& path) {
    GroupResourceRef ref;
    for (const auto& [key, value] : reader_.mapEntries(node, path, {"group", "resource"})) {
      (key == "group" ? ref.group : ref.resource) = reader_.scalar(value, childPath(path, key));
    }
    return ref;
  }

  NameMapping nameMapping(const YAML::Node& node, const std::string& path) {
    NameMapping name;
    for (const auto& [key, value] : reader_.mapEntries(node, path, {"matches", "as"})) {
      (key == "matches" ? name.matches : name.as) = reader_.scalar(value, childPath(path, key));
    }
    const int groups = checkRegex(node, childPath(path, "matches"), name.matches);
    if (name.as.empty() && groups >= 2) {
      reader_.fail(node, childPath(path, "as"),
                   "required when name.matches has 2 or more capture groups");
    }
    return name;
  }

  ResourceRules resourceRules(const YAML::Node& node, const std::string& path) {
    ResourceRules rules;
    for (const auto& [key, value] : reader_.mapEntries(node, path, {"cpu", "memory", "window"})) {
      const std::string field = childPath(path, key);
      if (key == "cpu") {
        rules.cpu = resourceRule(value, field);
      } else if (key == "memory") {
        rules.memory = resourceRule(value, field);
      } else {
        rules.window = reader_.scalar(value, field);
        if (auto problem = durationProblem(rules.window)) reader_.fail(value, field, *problem);
      }
    }
    return rules;
  }

  ResourceRule resourceRule(const YAML::Node& node, const std::string& path) {
    ResourceRule rule;
    for (const auto& [key, value] : reader_.mapEntries(
             node, path, {"containerQuery", "nodeQuery", "resources", "containerLabel"})) {
      const std::string field = childPath(path, key);
      if (key == "containerQuery") {
        rule.container_query = reader_.scalar(value, field);
      } else if (key == "nodeQuery") {
        rule.node_query = reader_.scalar(value, field);
      } else if (key == "resources") {
        rule.resources = resourceMapping(value, field);
      } else {
        rule.container_label = reader_.scalar(value, field);
      }
    }
    return rule;
  }

  // Returns the number of capture groups of `pattern` ("" is valid and has none).
  int checkRegex(const YAML::Node& node, const std::string& path, const std::string& pattern) {
    int groups = 0;
    if (auto problem = regexProblem(pattern, &groups)) reader_.fail(node, path, *problem);
    return groups;
  }

  AdapterConfig* config_;
  YamlReader reader_;
};

}  // namespace

AdapterConfig parseConfig(std::string_view yaml_text, const std::string& source_name) {
  AdapterConfig config;
  config.source = source_name;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    std::string problem = "invalid YAML: " + e.msg;
    if (!e.mark.is_null()) {
      problem += " (line " + std::to_string(e.mark.line + 1) + ", column " +
                 std::to_string(e.mark.column + 1) + ")";
    }
    throw ConfigError(formatConfigError(config, "", problem));
  }
  try {
    ConfigParser(&config).parseDocument(root);
  } catch (const YAML::Exception& e) {
    // Reading an already parsed tree should not throw; keep the promise of ConfigError anyway.
    throw ConfigError(formatConfigError(config, "", "invalid YAML: " + e.msg));
  }
  return config;
}

AdapterConfig loadConfigFile(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw ConfigError(path + ": cannot read config file: is a directory");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw ConfigError(path + ": cannot read config file: " + std::strerror(errno));
  }
  std::string text;
  char buffer[64 * 1024];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(file.gcount()));
    if (text.size() > kMaxConfigBytes) {
      throw ConfigError(path + ": config file larger than " +
                        std::to_string(kMaxConfigBytes >> 20) + " MiB");
    }
  }
  if (file.bad()) {
    throw ConfigError(path + ": cannot read config file: " + std::strerror(errno));
  }
  return parseConfig(text, path);
}

}  // namespace metrics_adapter::config
