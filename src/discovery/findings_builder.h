#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/registry.h"

namespace metrics_adapter::discovery {

// Folds the series of one /api/v1/series answer into one rule's findings as they stream by.
// Memory grows with distinct series names and label names, not with the number of series, and
// both are bounded: a series with a name or label name past the bound is counted as dropped.
class FindingsBuilder {
 public:
  static constexpr std::size_t kMaxSeriesNames = 100'000;
  static constexpr std::size_t kMaxLabelNames = 10'000;

  explicit FindingsBuilder(const CompiledRule& rule);

  void add(std::string_view series_name, const std::vector<std::string_view>& label_names);
  std::shared_ptr<const RuleFindings> finish();

 private:
  // nullptr when `series_name` is new and the bound is reached.
  const std::optional<std::string>* metricNameFor(std::string_view series_name);
  const std::optional<kube::ResourceInfo>* resourceFor(std::string_view label);

  const CompiledRule& rule_;
  std::shared_ptr<RuleFindings> findings_ = std::make_shared<RuleFindings>();
  std::unordered_map<std::string, std::optional<std::string>> metric_names_;
  std::unordered_map<std::string, std::optional<kube::ResourceInfo>> label_resources_;
};

}  // namespace metrics_adapter::discovery
