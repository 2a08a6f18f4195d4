#pragma once

#include <memory>
#include <string>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/kube/rest_mapper.h"

namespace metrics_adapter::resource::test {

// prometheus-adapter's default resourceRules (cmd/config-gen/utils/default.go with a 1m rate
// interval and no label prefix), the rules its provider tests run against.
inline constexpr const char* kUpstreamDefaultRules = R"(resourceRules:
  cpu:
    containerQuery: sum(rate(container_cpu_usage_seconds_total{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)
    nodeQuery: sum(rate(container_cpu_usage_seconds_total{<<.LabelMatchers>>, id='/'}[1m])) by (<<.GroupBy>>)
    resources:
      overrides:
        namespace: {resource: namespace}
        pod: {resource: pod}
        instance: {resource: node}
    containerLabel: container
  memory:
    containerQuery: sum(container_memory_working_set_bytes{<<.LabelMatchers>>}) by (<<.GroupBy>>)
    nodeQuery: sum(container_memory_working_set_bytes{<<.LabelMatchers>>,id='/'}) by (<<.GroupBy>>)
    resources:
      overrides:
        namespace: {resource: namespace}
        pod: {resource: pod}
        instance: {resource: node}
    containerLabel: container
  window: 1m
)";

inline const kube::RestMapper& builtinMapper() {
  static const kube::RestMapper kMapper = kube::RestMapper::builtin();
  return kMapper;
}

// Compiles the resourceRules of `yaml` as the adapter does at load.
inline std::shared_ptr<const discovery::CompiledResourceRules> compileResourceRules(
    const std::string& yaml = kUpstreamDefaultRules) {
  std::shared_ptr<const discovery::CompiledResourceRules> rules;
  discovery::compileRules(config::parseConfig(yaml, "rules.yaml"), builtinMapper(), nullptr,
                          &rules);
  return rules;
}

}  // namespace metrics_adapter::resource::test
