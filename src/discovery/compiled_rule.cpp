#include "metrics_adapter/discovery/compiled_rule.h"

#include <optional>
#include <set>
#include <string_view>
#include <type_traits>
#include <utility>

namespace metrics_adapter::discovery {
namespace {

const std::set<std::string> kQueryFields = {"Series", "LabelMatchers", "LabelValuesByName",
                                            "GroupBy", "GroupBySlice"};

// Rewrites "<source>: <path>: <problem>" (as the namer and the converter report) in the
// formatConfigError form, which adds the YAML line of <path>.
std::string withLine(const config::AdapterConfig& config, const std::string& message) {
  const std::string prefix = config.source + ": ";
  if (message.rfind(prefix, 0) != 0) return message;
  const std::string_view rest = std::string_view(message).substr(prefix.size());
  const std::size_t colon = rest.find(": ");
  if (colon == std::string_view::npos) return message;
  return config::formatConfigError(config, rest.substr(0, colon), rest.substr(colon + 2));
}

bool isBlank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

class RuleCompiler {
 public:
  RuleCompiler(const config::AdapterConfig& config, const kube::RestMapper& mapper,
               std::vector<std::string>* warnings)
      : config_(config), mapper_(mapper), warnings_(warnings) {}

  std::shared_ptr<const CompiledRule> compile(RuleKind kind, std::size_t index,
                                              const config::DiscoveryRule& rule) {
    std::string id =
        (kind == RuleKind::kCustom ? "rules[" : "externalRules[") + std::to_string(index) + "]";
    const std::string prefix = config_.source + ": " + id;
    SeriesNamer namer = guarded([&] { return SeriesNamer(rule, prefix); });
    ResourceConverter resources = converter(rule.resources, prefix);
    if (kind == RuleKind::kExternal) checkNamespaceLabel(id, resources);
    const std::string query_path = id + ".metricsQuery";
    if (isBlank(rule.metrics_query)) fail(query_path, "must not be empty");
    promql::Template metrics_query = parseQuery(rule.metrics_query, query_path);
    return std::make_shared<const CompiledRule>(
        CompiledRule{.kind = kind,
                     .index = index,
                     .id = std::move(id),
                     .source = rule,
                     .namer = std::move(namer),
                     .resources = std::move(resources),
                     .metrics_query = std::move(metrics_query)});
  }

  // One resourceRules entry: upstream's start-up checks (templates parse, resources valid)
  // plus ours: both queries present, and labels for namespaces, pods and nodes, without which
  // every metrics.k8s.io request would fail.
  CompiledResourceRule compileResource(const config::ResourceRule& rule, const std::string& id) {
    const std::string container_path = id + ".containerQuery";
    const std::string node_path = id + ".nodeQuery";
    if (isBlank(rule.container_query)) fail(container_path, "must not be empty");
    promql::Template container_query = parseQuery(rule.container_query, container_path);
    if (isBlank(rule.node_query)) fail(node_path, "must not be empty");
    promql::Template node_query = parseQuery(rule.node_query, node_path);
    ResourceConverter resources = converter(rule.resources, config_.source + ": " + id);
    std::string namespace_label = requiredLabel(resources, "namespaces", id);
    std::string pod_label = requiredLabel(resources, "pods", id);
    std::string node_label = requiredLabel(resources, "nodes", id);
    if (warnings_ != nullptr && rule.container_label.empty()) {
      warnings_->push_back(config::formatConfigError(
          config_, id + ".containerLabel",
          "empty: the containers of a pod are not told apart (one container named \"\")"));
    }
    return CompiledResourceRule{.id = id,
                                .source = rule,
                                .resources = std::move(resources),
                                .container_query = std::move(container_query),
                                .node_query = std::move(node_query),
                                .namespace_label = std::move(namespace_label),
                                .pod_label = std::move(pod_label),
                                .node_label = std::move(node_label)};
  }

 private:
  template <typename Build>
  std::invoke_result_t<Build> guarded(Build build) {
    try {
      return build();
    } catch (const config::ConfigError& e) {
      throw config::ConfigError(withLine(config_, e.what()));
    }
  }

  ResourceConverter converter(const config::ResourceMapping& mapping, const std::string& prefix) {
    std::vector<std::string> found;
    ResourceConverter converter =
        guarded([&] { return ResourceConverter(mapping, mapper_, prefix, &found); });
    if (warnings_ != nullptr) {
      for (const std::string& warning : found) warnings_->push_back(withLine(config_, warning));
    }
    return converter;
  }

  // A namespaced external rule needs the label of namespaces for every request (upstream
  // fails them all with a bare 500, and its sample config has such a rule): say so at load.
  void checkNamespaceLabel(const std::string& id, const ResourceConverter& resources) {
    if (warnings_ == nullptr || !resources.namespaced()) return;
    const auto namespaces = mapper_.resourceFor("", "namespaces");
    if (namespaces && resources.labelForResource(*namespaces)) return;
    warnings_->push_back(config::formatConfigError(
        config_, id + ".resources",
        "namespaced external rule maps no label to namespaces, so every request for its "
        "metrics fails; add an override such as `namespace: {resource: namespace}`, or set "
        "`namespaced: false`"));
  }

  promql::Template parseQuery(const std::string& text, const std::string& path) {
    try {
      return promql::Template::parse(text, kQueryFields);
    } catch (const promql::TemplateError& e) {
      fail(path, e.what());
    }
  }

  std::string requiredLabel(const ResourceConverter& resources, std::string_view plural,
                            const std::string& id) {
    const auto resource = mapper_.resourceFor("", plural);
    std::optional<std::string> label;
    if (resource) label = resources.labelForResource(*resource);
    if (!label || label->empty()) {
      const std::string singular = resource ? resource->singular : std::string(plural);
      fail(id + ".resources", "maps no label to " + std::string(plural) +
                                  "; add an override such as `" + singular +
                                  ": {resource: " + singular + "}`");
    }
    return *label;
  }

  [[noreturn]] void fail(const std::string& path, std::string_view problem) {
    throw config::ConfigError(config::formatConfigError(config_, path, problem));
  }

  const config::AdapterConfig& config_;
  const kube::RestMapper& mapper_;
  std::vector<std::string>* warnings_;
};

}  // namespace

std::vector<std::shared_ptr<const CompiledRule>> compileRules(
    const config::AdapterConfig& config, const kube::RestMapper& mapper,
    std::vector<std::string>* warnings,
    std::shared_ptr<const CompiledResourceRules>* resource_rules) {
  RuleCompiler compiler(config, mapper, warnings);
  std::vector<std::shared_ptr<const CompiledRule>> rules;
  rules.reserve(config.rules.size() + config.external_rules.size());
  // A rule whose overrides name resources the cluster does not have (yet) is left out; it
  // comes back when the REST mapping learns them and the rules are compiled again.
  const auto add = [&rules](std::shared_ptr<const CompiledRule> rule) {
    if (!rule->resources.hasUnknownOverrides()) rules.push_back(std::move(rule));
  };
  for (std::size_t i = 0; i < config.rules.size(); ++i) {
    add(compiler.compile(RuleKind::kCustom, i, config.rules[i]));
  }
  for (std::size_t i = 0; i < config.external_rules.size(); ++i) {
    add(compiler.compile(RuleKind::kExternal, i, config.external_rules[i]));
  }
  std::shared_ptr<const CompiledResourceRules> compiled_resource_rules;
  if (config.resource_rules) {
    compiled_resource_rules = std::make_shared<const CompiledResourceRules>(CompiledResourceRules{
        .cpu = compiler.compileResource(config.resource_rules->cpu, "resourceRules.cpu"),
        .memory = compiler.compileResource(config.resource_rules->memory, "resourceRules.memory"),
        .window = config.resource_rules->window,
        .window_length = config::prometheusDuration(config.resource_rules->window)
                             .value_or(std::chrono::milliseconds(0)),
        .backend = config.resource_rules->backend});
  }
  if (resource_rules != nullptr) *resource_rules = std::move(compiled_resource_rules);
  return rules;
}

}  // namespace metrics_adapter::discovery
