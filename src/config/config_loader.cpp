#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "config/backends_parser.h"
#include "config/value_checks.h"
#include "config/yaml_reader.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/text/number.h"

namespace metrics_adapter::config {
namespace {

// A forecast keeps history / step values per series; 14 days at 15 s is 80,640.
constexpr std::int64_t kMaxForecastPoints = 100'000;

// Why `name` cannot be a forecast rule's metric name: it is one path segment of
// /apis/external.metrics.k8s.io/v1beta1/namespaces/<ns>/<name>.
std::optional<std::string> forecastNameProblem(const std::string& name) {
  static const RE2 kName("[a-zA-Z_:][a-zA-Z0-9_:.-]*");
  if (name.empty() || RE2::FullMatch(name, kName)) return std::nullopt;
  return "\"" + name + "\" is not a metric name ([a-zA-Z_:][a-zA-Z0-9_:.-]*)";
}

// Why `name` is not a Kubernetes namespace name (a DNS-1123 label).
std::optional<std::string> namespaceProblem(const std::string& name) {
  static const RE2 kLabel("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  if (RE2::FullMatch(name, kLabel)) return std::nullopt;
  return "\"" + name + "\" is not a namespace name (a DNS-1123 label)";
}

// Configs are a few kilobytes; anything near this is a wrong path, not a config.
constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;

class ConfigParser {
 public:
  explicit ConfigParser(AdapterConfig* config) : config_(config), reader_(config) {}

  void parseDocument(const YAML::Node& root) {
    for (const auto& [key, value] : reader_.mapEntries(
             root, "", {"rules", "externalRules", "resourceRules", "forecastRules", "backends"})) {
      if (key == "rules") {
        config_->rules = discoveryRules(value, key);
      } else if (key == "externalRules") {
        config_->external_rules = discoveryRules(value, key);
      } else if (key == "resourceRules") {
        config_->resource_rules = resourceRules(value, key);
      } else if (key == "backends") {
        config_->backends = parseBackends(reader_, value, key);
      } else {
        config_->forecast_rules = forecastRules(value, key);
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
             node, path,
             {"seriesQuery", "seriesFilters", "resources", "name", "metricsQuery", "backend"})) {
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
      } else if (key == "backend") {
        rule.backend = backendName(value, field);
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
    for (const auto& [key, value] :
         reader_.mapEntries(node, path, {"cpu", "memory", "window", "backend"})) {
      const std::string field = childPath(path, key);
      if (key == "cpu") {
        rules.cpu = resourceRule(value, field);
      } else if (key == "memory") {
        rules.memory = resourceRule(value, field);
      } else if (key == "backend") {
        rules.backend = backendName(value, field);
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

  std::vector<ForecastRule> forecastRules(const YAML::Node& node, const std::string& path) {
    std::vector<ForecastRule> rules;
    const std::vector<YAML::Node> items = reader_.listItems(node, path);
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string rule_path = indexPath(path, i);
      rules.push_back(forecastRule(items[i], rule_path));
      for (std::size_t j = 0; j + 1 < rules.size(); ++j) {
        if (rules[j].name == rules.back().name) {
          reader_.fail(
              items[i], childPath(rule_path, "name"),
              "\"" + rules.back().name + "\" is already the name of " + indexPath(path, j));
        }
      }
    }
    return rules;
  }

  ForecastRule forecastRule(const YAML::Node& node, const std::string& path) {
    ForecastRule rule;
    for (const auto& [key, value] :
         reader_.mapEntries(node, path,
                            {"name", "query", "namespaces", "history", "step", "horizon",
                             "refreshInterval", "quantile", "backend"})) {
      const std::string field = childPath(path, key);
      if (key == "name") {
        rule.name = reader_.scalar(value, field);
        if (auto problem = forecastNameProblem(rule.name)) reader_.fail(value, field, *problem);
      } else if (key == "query") {
        rule.query = reader_.scalar(value, field);
      } else if (key == "namespaces") {
        const std::vector<YAML::Node> items = reader_.listItems(value, field);
        for (std::size_t i = 0; i < items.size(); ++i) {
          const std::string item_path = indexPath(field, i);
          rule.namespaces.push_back(reader_.scalar(items[i], item_path));
          if (auto problem = namespaceProblem(rule.namespaces.back())) {
            reader_.fail(items[i], item_path, *problem);
          }
        }
      } else if (key == "history") {
        rule.history = wholeSeconds(value, field);
      } else if (key == "step") {
        rule.step = wholeSeconds(value, field);
      } else if (key == "horizon") {
        rule.horizon = wholeSeconds(value, field);
      } else if (key == "refreshInterval") {
        rule.refresh_interval = wholeSeconds(value, field);
      } else if (key == "backend") {
        rule.backend = backendName(value, field);
      } else {
        rule.quantile = quantile(value, field);
      }
    }
    if (rule.name.empty()) reader_.fail(node, childPath(path, "name"), "required");
    if (rule.query.empty()) reader_.fail(node, childPath(path, "query"), "required");
    checkForecastDurations(node, path, rule);
    return rule;
  }

  // The limits that keep a forecast meaningful and its memory bounded (docs/forecasting.md
  // "Configuration").
  void checkForecastDurations(const YAML::Node& node, const std::string& path,
                              const ForecastRule& rule) {
    using std::chrono::hours;
    using std::chrono::seconds;
    if (rule.step < seconds(1) || rule.step > hours(1)) {
      reader_.fail(node, childPath(path, "step"), "must be between 1s and 1h");
    }
    if (rule.horizon < rule.step || rule.horizon > hours(24)) {
      reader_.fail(node, childPath(path, "horizon"), "must be at least one step and at most 24h");
    }
    // Two daily cycles are the least history that shows a daily rhythm (forecast::kMinimumHistory).
    if (rule.history < hours(48)) {
      reader_.fail(node, childPath(path, "history"),
                   "must be at least 48h: the model needs two days to find a daily rhythm");
    }
    if (rule.history / rule.step > kMaxForecastPoints) {
      reader_.fail(node, childPath(path, "history"),
                   "holds more than " + std::to_string(kMaxForecastPoints) +
                       " steps per series; use a longer step or a shorter history");
    }
    if (rule.refresh_interval < seconds(1)) {
      reader_.fail(node, childPath(path, "refreshInterval"), "must be at least 1s");
    }
  }

  // A duration in whole seconds (Prometheus syntax, e.g. "7d", "90s").
  std::chrono::seconds wholeSeconds(const YAML::Node& node, const std::string& path) {
    std::string problem;
    auto duration = parseDuration(reader_.scalar(node, path), &problem);
    if (!duration) reader_.fail(node, path, problem);
    if (duration->count() % 1000 != 0) reader_.fail(node, path, "must be whole seconds");
    return std::chrono::duration_cast<std::chrono::seconds>(*duration);
  }

  double quantile(const YAML::Node& node, const std::string& path) {
    const std::optional<double> value = text::parseFiniteNumber(reader_.scalar(node, path));
    if (!value || *value < 0.5 || *value > 0.99) {
      reader_.fail(node, path, "must be a number from 0.5 (no margin) to 0.99");
    }
    return *value;
  }

  // Which backend serves a rule; checkBackendReferences checks that it exists.
  std::string backendName(const YAML::Node& node, const std::string& path) {
    std::string name = reader_.scalar(node, path);
    if (name.empty()) reader_.fail(node, path, "must name a backend (or be left out: default)");
    return name;
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
    checkBackendReferences(config);
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
