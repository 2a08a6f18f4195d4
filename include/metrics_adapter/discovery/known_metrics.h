#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/discovery/registry.h"

namespace metrics_adapter::discovery {

// A metric stays known while it has no series: the rule that found it, or whose seriesQuery names
// its series, still defines it. An HPA that scaled its Deployment to zero asks for it exactly
// then, and "unknown metric" would read as a wrong rule (docs/api-contract.md, "Decisions: better
// on purpose", 11).

// Gone metrics kept per rule at most; past it the ones found longest ago are forgotten.
inline constexpr std::size_t kMaxGoneMetrics = 1000;

// The series names `series_query` selects by name alone: `name`, `name{...}`, or a
// `{__name__="name"}` / `{__name__=~"a|b"}` matcher whose regex is an alternation of plain
// names (optionally in ^( )$). Empty for any other query (a regex the names cannot be read
// from, no name matcher, escapes).
std::vector<std::string> declaredSeriesNames(std::string_view series_query);

// `fresh`, one rule's findings of a relist, with the metrics `previous` (the same rule's last
// findings) had and `fresh` lacks added as gone: a metric gone now keeps previous->found_at as
// its last_found, one gone before keeps its own. Only what `rule` (the rule in force) still
// defines is kept: the name its naming gives the metric's series, and for a custom metric the
// resources its `resources` still map (a reload that renames a metric drops the old name).
// Returns `fresh` itself when nothing is gone or `previous` is null. At most kMaxGoneMetrics
// gone ones are kept, the most recently found.
std::shared_ptr<const RuleFindings> keepGoneMetrics(
    const CompiledRule& rule, const std::shared_ptr<const RuleFindings>& previous,
    std::shared_ptr<const RuleFindings> fresh);

}  // namespace metrics_adapter::discovery
