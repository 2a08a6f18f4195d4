#include "discovery/findings_builder.h"

#include <algorithm>

namespace metrics_adapter::discovery {
namespace {

// Resources remembered per series name to skip comparing them again; a series name normally
// leads to a handful, this only bounds the memory when it does not.
constexpr std::size_t kMaxMergedPerName = 64;

}  // namespace

FindingsBuilder::FindingsBuilder(const CompiledRule& rule) : rule_(rule) {}

FindingsBuilder::NameEntry* FindingsBuilder::entryFor(std::string_view series_name) {
  auto it = names_.find(series_name);
  if (it == names_.end()) {
    if (names_.size() >= kMaxSeriesNames) return nullptr;
    it = names_
             .emplace(std::string(series_name),
                      NameEntry{rule_.namer.metricName(series_name), nullptr, {}})
             .first;
  }
  return &it->second;
}

const FindingsBuilder::Resource* FindingsBuilder::resourceFor(std::string_view label) {
  auto it = label_resources_.find(label);
  if (it == label_resources_.end()) {
    if (label_resources_.size() >= kMaxLabelNames) return nullptr;
    it =
        label_resources_.emplace(std::string(label), rule_.resources.resourceForLabel(label)).first;
  }
  return &it->second;
}

const std::vector<const FindingsBuilder::Resource*>& FindingsBuilder::resourcesFor(
    const std::vector<std::string_view>& label_names) {
  // The maps only grow, so a label's answer (found, or past the bound) never changes.
  if (have_last_labels_ && std::equal(label_names.begin(), label_names.end(),
                                      last_label_names_.begin(), last_label_names_.end())) {
    return last_resources_;
  }
  last_label_names_.resize(label_names.size());
  last_resources_.clear();
  for (std::size_t i = 0; i < label_names.size(); ++i) {
    last_label_names_[i].assign(label_names[i]);
    last_resources_.push_back(resourceFor(label_names[i]));
  }
  have_last_labels_ = true;
  return last_resources_;
}

void FindingsBuilder::add(std::string_view series_name,
                          const std::vector<std::string_view>& label_names) {
  ++findings_->series_seen;
  NameEntry* name = entryFor(series_name);
  if (name == nullptr) {
    ++findings_->series_dropped;
    return;
  }
  if (!name->metric_name || name->metric_name->empty()) return;

  if (name->metric == nullptr) {
    name->metric = &findings_->metrics.try_emplace(*name->metric_name).first->second;
  }
  RuleFindings::Metric& metric = *name->metric;
  // Within a rule the last series with a given API name wins, as upstream.
  metric.series_name.assign(series_name);
  if (rule_.kind != RuleKind::kCustom) return;
  bool dropped = false;
  for (const Resource* resource : resourcesFor(label_names)) {
    if (resource == nullptr) dropped = true;
    if (resource == nullptr || !*resource) continue;
    if (std::find(name->merged.begin(), name->merged.end(), resource) != name->merged.end()) {
      continue;
    }
    if (name->merged.size() < kMaxMergedPerName) name->merged.push_back(resource);
    bool known = std::any_of(metric.resources.begin(), metric.resources.end(), [&](const auto& r) {
      return r.plural == (*resource)->plural && r.group == (*resource)->group;
    });
    if (!known) metric.resources.push_back(**resource);
  }
  if (dropped) ++findings_->series_dropped;
}

std::shared_ptr<const RuleFindings> FindingsBuilder::finish() { return std::move(findings_); }

}  // namespace metrics_adapter::discovery
