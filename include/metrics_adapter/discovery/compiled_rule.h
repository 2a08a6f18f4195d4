#pragma once

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

// Compiles every rule of `config`. Throws ConfigError naming file, rule and field
// ("gpu.yaml: rules[1].metricsQuery: unknown field .LabelMatcher at column 12").
// An empty metricsQuery is an error here (upstream fails on every request instead).
// Non-fatal findings are appended to `warnings`; rules whose overrides name resources `mapper`
// does not know are left out of the result (disabled, with a warning naming them).
std::vector<std::shared_ptr<const CompiledRule>> compileRules(const config::AdapterConfig& config,
                                                              const kube::RestMapper& mapper,
                                                              std::vector<std::string>* warnings);

}  // namespace metrics_adapter::discovery
