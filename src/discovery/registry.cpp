#include "metrics_adapter/discovery/registry.h"

#include <algorithm>
#include <set>

#include "metrics_adapter/discovery/known_metrics.h"

namespace metrics_adapter::discovery {
namespace {

// Names close enough to be a typo of `metric`, or containing it (or contained in it), best first.
std::vector<std::string> closestNames(std::string_view metric, const std::set<std::string>& names,
                                      std::size_t limit) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& name : names) {
    std::size_t distance = editDistance(metric, name);
    bool contains = !metric.empty() && (name.find(metric) != std::string::npos ||
                                        metric.find(name) != std::string_view::npos);
    if (contains || distance <= std::max<std::size_t>(2, metric.size() / 3)) {
      scored.emplace_back(contains ? 0 : distance, name);
    }
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> result;
  for (std::size_t i = 0; i < scored.size() && i < limit; ++i) result.push_back(scored[i].second);
  return result;
}

}  // namespace

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

RegistrySnapshot::RegistrySnapshot(std::shared_ptr<const RuleSet> rule_set)
    : RegistrySnapshot(std::move(rule_set), {}) {}

RegistrySnapshot::RegistrySnapshot(std::shared_ptr<const RuleSet> rule_set,
                                   const std::vector<std::shared_ptr<const RuleFindings>>& findings)
    : rule_set_(std::move(rule_set)) {
  const auto& rules = rule_set_->rules;
  // Later rules overwrite earlier ones: build maps first, then flatten. Each pass overwrites the
  // one before, so series beat gone metrics and those beat declared ones.
  std::map<std::pair<std::string, std::string>, CustomMetric> custom;
  std::map<std::string, ExternalMetric> external;
  for (const auto& rule : rules) {
    if (rule->kind != RuleKind::kExternal) continue;  // a custom metric needs its series' labels
    // Within a rule the first series naming a metric wins: presets list the current name first.
    std::set<std::string> named;
    for (const auto& series : declaredSeriesNames(rule->source.series_query)) {
      auto metric = rule->namer.metricName(series);
      if (!metric || metric->empty() || !named.insert(*metric).second) continue;
      external[*metric] =
          ExternalMetric{*metric, series, rule, MetricPresence::kDeclared, std::nullopt};
    }
  }
  for (const bool gone_pass : {true, false}) {
    for (std::size_t i = 0; i < rules.size() && i < findings.size(); ++i) {
      if (!findings[i]) continue;
      const auto& rule = rules[i];
      for (const auto& [metric, found] : findings[i]->metrics) {
        if (found.gone != gone_pass) continue;
        const MetricPresence presence =
            found.gone ? MetricPresence::kGone : MetricPresence::kSeries;
        if (rule->kind == RuleKind::kExternal) {
          external[metric] =
              ExternalMetric{metric, found.series_name, rule, presence, found.last_found};
          continue;
        }
        for (const auto& resource : found.resources) {
          custom[{resource.groupResource(), metric}] =
              CustomMetric{resource, metric, found.series_name, rule, presence, found.last_found};
        }
      }
    }
  }
  for (auto& [key, value] : custom) {
    custom_index_.emplace(key, custom_.size());
    custom_.push_back(std::move(value));
  }
  for (auto& [key, value] : external) {
    external_index_.emplace(key, external_.size());
    external_.push_back(std::move(value));
  }
}

const CustomMetric* RegistrySnapshot::findCustom(std::string_view group_resource,
                                                 std::string_view metric) const {
  auto it = custom_index_.find(std::make_pair(std::string(group_resource), std::string(metric)));
  return it == custom_index_.end() ? nullptr : &custom_[it->second];
}

const ExternalMetric* RegistrySnapshot::findExternal(std::string_view metric) const {
  auto it = external_index_.find(metric);
  return it == external_index_.end() ? nullptr : &external_[it->second];
}

std::vector<std::string> RegistrySnapshot::similarCustomNames(std::string_view metric,
                                                              std::size_t limit) const {
  std::set<std::string> names;
  for (const auto& entry : custom_) names.insert(entry.metric);
  return closestNames(metric, names, limit);
}

std::vector<std::string> RegistrySnapshot::similarExternalNames(std::string_view metric,
                                                                std::size_t limit) const {
  std::set<std::string> names;
  for (const auto& entry : external_) names.insert(entry.metric);
  return closestNames(metric, names, limit);
}

}  // namespace metrics_adapter::discovery
