#include "discovery/findings_builder.h"

#include <algorithm>

namespace metrics_adapter::discovery {

FindingsBuilder::FindingsBuilder(const CompiledRule& rule) : rule_(rule) {}

const std::optional<std::string>* FindingsBuilder::metricNameFor(std::string_view series_name) {
  auto it = metric_names_.find(std::string(series_name));
  if (it == metric_names_.end()) {
    if (metric_names_.size() >= kMaxSeriesNames) return nullptr;
    it = metric_names_.emplace(std::string(series_name), rule_.namer.metricName(series_name)).first;
  }
  return &it->second;
}

const std::optional<kube::ResourceInfo>* FindingsBuilder::resourceFor(std::string_view label) {
  auto it = label_resources_.find(std::string(label));
  if (it == label_resources_.end()) {
    if (label_resources_.size() >= kMaxLabelNames) return nullptr;
    it =
        label_resources_.emplace(std::string(label), rule_.resources.resourceForLabel(label)).first;
  }
  return &it->second;
}

void FindingsBuilder::add(std::string_view series_name,
                          const std::vector<std::string_view>& label_names) {
  ++findings_->series_seen;
  const auto* metric_name = metricNameFor(series_name);
  if (metric_name == nullptr) {
    ++findings_->series_dropped;
    return;
  }
  if (!*metric_name || (*metric_name)->empty()) return;

  auto [entry, inserted] = findings_->metrics.try_emplace(**metric_name);
  // Within a rule the last series with a given API name wins, as upstream.
  entry->second.series_name.assign(series_name);
  if (rule_.kind != RuleKind::kCustom) return;
  auto& resources = entry->second.resources;
  bool dropped = false;
  for (std::string_view label : label_names) {
    const auto* resource = resourceFor(label);
    if (resource == nullptr) dropped = true;
    if (resource == nullptr || !*resource) continue;
    bool known = std::any_of(resources.begin(), resources.end(), [&](const auto& r) {
      return r.plural == (*resource)->plural && r.group == (*resource)->group;
    });
    if (!known) resources.push_back(**resource);
  }
  if (dropped) ++findings_->series_dropped;
}

std::shared_ptr<const RuleFindings> FindingsBuilder::finish() { return std::move(findings_); }

}  // namespace metrics_adapter::discovery
