#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/discovery/compiled_rule.h"

namespace metrics_adapter::resource {

// A resource-metrics query that could not be built or answered. what() names the rule and,
// once rendered, the PromQL; cause() is the exception behind it (a prometheus::PrometheusError
// when Prometheus failed, so the caller can tell 503 from 500), or null.
class ResourceQueryError : public std::runtime_error {
 public:
  ResourceQueryError(const std::string& message, std::string query, std::exception_ptr cause)
      : std::runtime_error(message), query_(std::move(query)), cause_(std::move(cause)) {}
  const std::string& query() const { return query_; }  // "" when rendering failed
  std::exception_ptr cause() const { return cause_; }

 private:
  std::string query_;
  std::exception_ptr cause_;
};

// Renders `rule.container_query` for `pod_names` of one namespace as prometheus-adapter does:
// .LabelMatchers = <namespace label>="<ns>",<pod label>="<pod>" for one pod or
// <pod label>=~"p1|p2|..." for several; .GroupBy = <pod label>,<containerLabel> (and
// .GroupBySlice the same as a list); .LabelValuesByName = {namespace label: ns, pod label:
// "p1|p2"}; .Series = "". Names are sorted and de-duplicated, and regex-escaped in the
// alternation (docs/api-contract.md "Decisions: better on purpose", 1); every value is
// Go-quoted, so no name can inject PromQL. Throws ResourceQueryError when the template fails to
// execute or renders an empty query.
std::string renderPodQuery(const discovery::CompiledResourceRule& rule,
                           std::string_view namespace_name, std::vector<std::string> pod_names);

// Renders `rule.node_query`: .LabelMatchers = <node label>="<node>" or <node label>=~"n1|n2",
// .GroupBy = <node label>, .LabelValuesByName = {node label: "n1|n2"}, .Series = "".
// Same naming rules and errors as renderPodQuery.
std::string renderNodeQuery(const discovery::CompiledResourceRule& rule,
                            std::vector<std::string> node_names);

}  // namespace metrics_adapter::resource
