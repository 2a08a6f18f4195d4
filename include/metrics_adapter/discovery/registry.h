#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/kube/rest_mapper.h"
#include "metrics_adapter/prometheus/backend_set.h"

namespace metrics_adapter::discovery {

// The rules in force, the REST mapping they were compiled against (their resource converters
// point into it) and the backends they name, replaced together when the config or the cluster's
// resources change.
struct RuleSet {
  std::shared_ptr<const kube::RestMapper> mapper;
  std::shared_ptr<const prometheus::BackendSet> backends;  // every name a rule uses is in it
  std::vector<std::shared_ptr<const CompiledRule>> rules;
  std::shared_ptr<const CompiledResourceRules> resource_rules;  // null without resourceRules
};

// What one rule found in one relist: API metric name -> the series behind it and the
// resources its labels name. Only names are kept, never label values.
struct RuleFindings {
  struct Metric {
    std::string series_name;
    std::vector<kube::ResourceInfo> resources;  // custom rules only
    // A metric an earlier relist found and the last one did not: its series are gone (their
    // pods scaled to zero), yet it stays the rule's metric (keepGoneMetrics).
    bool gone = false;
    // For a gone metric: when the last relist that found a series of it ran.
    std::optional<std::chrono::system_clock::time_point> last_found;
  };
  std::map<std::string, Metric, std::less<>> metrics;
  std::size_t series_seen = 0;
  // Series whose name or label names were past FindingsBuilder's bounds and so went unread.
  std::size_t series_dropped = 0;
  // When the relist that read these series ran.
  std::chrono::system_clock::time_point found_at{};
};

// The metrics of a rule that serve with no series: the config names them, or an earlier relist
// found them. How the server answers them: docs/api-contract.md, "Decisions: better on
// purpose", 11.
enum class MetricPresence {
  kSeries,    // the last relist found series of it
  kGone,      // an earlier relist did, the last one did not (last_found says when)
  kDeclared,  // no relist since the start found any; the rule's seriesQuery names its series
};

// A custom metric the adapter serves: (resource, scope, metric name) -> rule and series.
struct CustomMetric {
  kube::ResourceInfo resource;
  std::string metric;
  std::string series_name;
  std::shared_ptr<const CompiledRule> rule;
  MetricPresence presence = MetricPresence::kSeries;
  std::optional<std::chrono::system_clock::time_point> last_found;  // kGone only
};

struct ExternalMetric {
  std::string metric;
  std::string series_name;
  std::shared_ptr<const CompiledRule> rule;
  MetricPresence presence = MetricPresence::kSeries;
  std::optional<std::chrono::system_clock::time_point> last_found;  // kGone only
};

// Levenshtein distance, for "did you mean" hints.
std::size_t editDistance(std::string_view a, std::string_view b);

// An immutable view of everything discovered; the request path reads it without locks.
class RegistrySnapshot {
 public:
  // Merges per-rule findings in rule order; on a name collision the later rule wins
  // (prometheus-adapter does the same), and a metric with series wins over a gone one, which
  // wins over one only declared (external rules whose seriesQuery names its series:
  // declaredSeriesNames).
  RegistrySnapshot(std::shared_ptr<const RuleSet> rule_set,
                   const std::vector<std::shared_ptr<const RuleFindings>>& findings);
  explicit RegistrySnapshot(std::shared_ptr<const RuleSet> rule_set);  // nothing discovered yet

  const kube::RestMapper& mapper() const { return *rule_set_->mapper; }
  // The compiled resourceRules, or null when the config has none (metrics.k8s.io is not served).
  const std::shared_ptr<const CompiledResourceRules>& resourceRules() const {
    return rule_set_->resource_rules;
  }

  // The backend called `name` (a rule's source.backend), or null when it is not configured.
  const prometheus::Backend* backend(std::string_view name) const {
    return rule_set_->backends ? rule_set_->backends->find(name) : nullptr;
  }

  // `group_resource` as in URLs ("pods", "deployments.apps"); nullptr when not served.
  const CustomMetric* findCustom(std::string_view group_resource, std::string_view metric) const;
  const ExternalMetric* findExternal(std::string_view metric) const;

  // Served custom metric names closest to `metric` (for "did you mean" hints), best first.
  std::vector<std::string> similarCustomNames(std::string_view metric, std::size_t limit) const;
  std::vector<std::string> similarExternalNames(std::string_view metric, std::size_t limit) const;

  // Sorted by (group_resource, metric).
  const std::vector<CustomMetric>& customMetrics() const { return custom_; }
  const std::vector<ExternalMetric>& externalMetrics() const { return external_; }

 private:
  std::shared_ptr<const RuleSet> rule_set_;
  std::vector<CustomMetric> custom_;
  std::vector<ExternalMetric> external_;
  std::map<std::pair<std::string, std::string>, std::size_t, std::less<>> custom_index_;
  std::map<std::string, std::size_t, std::less<>> external_index_;
};

}  // namespace metrics_adapter::discovery
