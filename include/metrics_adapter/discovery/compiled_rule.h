#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/naming.h"
#include "metrics_adapter/discovery/resource_converter.h"
#include "metrics_adapter/kube/rest_mapper.h"
#include "metrics_adapter/promql/template.h"

namespace metrics_adapter::discovery {

enum class RuleKind { kCustom, kExternal };

// A rule ready to serve: regexes compiled, templates parsed, resources resolved.
struct CompiledRule {
  RuleKind kind = RuleKind::kCustom;
  std::size_t index = 0;  // position in `rules` / `externalRules`
  std::string id;         // "rules[0]" / "externalRules[2]", used in logs and errors
  config::DiscoveryRule source;
  SeriesNamer namer;
  ResourceConverter resources;
  promql::Template metrics_query;  // fields: Series LabelMatchers LabelValuesByName GroupBy
                                   // GroupBySlice
};

// One resourceRules entry (cpu or memory) ready to serve metrics.k8s.io. The templates see the
// same fields as metricsQuery; .Series is always "" (docs/api-contract.md "prometheus-adapter:
// resource-rule rendering").
struct CompiledResourceRule {
  std::string id;  // "resourceRules.cpu" / "resourceRules.memory", used in logs and errors
  config::ResourceRule source;
  ResourceConverter resources;
  promql::Template container_query;
  promql::Template node_query;
  // The labels `resources` maps to namespaces, pods and nodes (overrides first, then the
  // template); compilation fails when one is missing, since no query could be built without it.
  std::string namespace_label;
  std::string pod_label;
  std::string node_label;
};

struct CompiledResourceRules {
  CompiledResourceRule cpu;
  CompiledResourceRule memory;
  std::string window;  // resourceRules.window verbatim (a Prometheus duration); "" = 0s
  std::chrono::milliseconds window_length{0};    // the same, parsed (validated at load)
  std::string backend{config::kDefaultBackend};  // resourceRules.backend
};

// Compiles every rule of `config`. Throws ConfigError naming file, rule and field
// ("gpu.yaml: rules[1].metricsQuery: unknown field .LabelMatcher at column 12").
// An empty metricsQuery is an error here (upstream fails on every request instead).
// Non-fatal findings are appended to `warnings`; rules whose overrides name resources `mapper`
// does not know are left out of the result (disabled, with a warning naming them).
// resourceRules are compiled (and so validated) too: an empty containerQuery or nodeQuery, or
// resources that map no label to namespaces, pods or nodes, is a ConfigError naming the field.
// When `resource_rules` is not null it receives them (null when the config has none); they
// point into `mapper`, which must outlive them.
std::vector<std::shared_ptr<const CompiledRule>> compileRules(
    const config::AdapterConfig& config, const kube::RestMapper& mapper,
    std::vector<std::string>* warnings,
    std::shared_ptr<const CompiledResourceRules>* resource_rules = nullptr);

}  // namespace metrics_adapter::discovery
