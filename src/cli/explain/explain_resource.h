#pragma once

#include <iosfwd>
#include <memory>

#include "cli/explain/explain.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/prometheus/backend_set.h"

namespace metrics_adapter::cli {

// Explains a metrics.k8s.io GET of one pod (--namespace, --name) or node (--resource nodes,
// --name) as the server would answer it: the resourceRules' CPU and memory queries for it,
// `backend`'s answers, and the usage served or why the object would be left out (no sample, a
// bad value). `rules` null: the config has no resourceRules, the group is not served. Returns
// 0 when the request would succeed, 2 when it would fail.
int explainResourceMetrics(std::ostream& out, const ExplainOptions& options,
                           const discovery::CompiledResourceRules* rules,
                           const prometheus::Backend& backend);

}  // namespace metrics_adapter::cli
