#pragma once

#include <span>
#include <string>
#include <vector>

#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/kube/rest_mapper.h"
#include "metrics_adapter/promql/label_selector.h"

namespace metrics_adapter::api {

// What a custom-metric request asks Prometheus for.
struct CustomQuerySpec {
  const discovery::CompiledRule* rule = nullptr;
  std::string series;                  // .Series
  kube::ResourceInfo resource;         // the objects' resource
  std::string namespace_name;          // adds the namespace matcher when non-empty
  std::span<const std::string> names;  // object names; empty with any_name = every object
  bool any_name = false;
  promql::LabelSelector metric_selector;
};

struct BuiltQuery {
  std::string promql;
  std::string resource_label;  // the label that carries object names in the answer
};

// Renders the rule's metricsQuery with .LabelMatchers in upstream order (selector matchers by
// key, then namespace, then object names). Throws ApiError: 404 when the rule maps no label
// to the resource or to namespaces, 400 for selector operators PromQL cannot express, 500 for
// template failures.
BuiltQuery buildCustomQuery(const CustomQuerySpec& spec, const kube::RestMapper& mapper);

// What an external-metric request asks Prometheus for.
struct ExternalQuerySpec {
  const discovery::CompiledRule* rule = nullptr;
  std::string series;          // .Series
  std::string namespace_name;  // the request's namespace; matched only when the rule is namespaced
  promql::LabelSelector selector;
};

// Renders the rule's metricsQuery as prometheus-adapter does for external metrics:
// .LabelMatchers = selector matchers by key, then `<namespace label>="<ns>"` when the rule is
// namespaced (resources.namespaced, default true); .GroupBy "" and .GroupBySlice [] always.
// Throws ApiError: 400 for selector operators or keys PromQL cannot express, 500 when a
// namespaced rule maps no label to namespaces (the message names the fix) or the template fails.
std::string buildExternalQuery(const ExternalQuerySpec& spec, const kube::RestMapper& mapper);

}  // namespace metrics_adapter::api
