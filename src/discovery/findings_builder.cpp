#include "discovery/findings_builder.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace metrics_adapter::discovery {
namespace {

// Resources remembered per series name to skip comparing them again; a series name normally
// leads to a handful, this only bounds the memory when it does not.
constexpr std::size_t kMaxMergedPerName = 64;

}  // namespace

FindingsBuilder::FindingsBuilder(const CompiledRule& rule) : rule_(rule) {}

FindingsBuilder::NameEntry* FindingsBuilder::entryFor(std::string_view series_name) {
  if (last_name_ != nullptr && *last_name_ == series_name) return last_entry_;
  auto it = names_.find(series_name);
  if (it == names_.end()) {
    if (names_.size() >= kMaxSeriesNames) return nullptr;
    it = names_
             .emplace(std::string(series_name),
                      NameEntry{rule_.namer.metricName(series_name), nullptr, {}})
             .first;
  }
  last_name_ = &it->first;
  last_entry_ = &it->second;
  return last_entry_;
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
  if (have_last_labels_ && sameAsLastLabels(label_names)) return last_resources_;
  last_label_text_.clear();
  last_label_sizes_.clear();
  last_resources_.clear();
  for (const std::string_view name : label_names) {
    last_label_text_.append(name);
    last_label_sizes_.push_back(name.size());
    last_resources_.push_back(resourceFor(name));
  }
  have_last_labels_ = true;
  return last_resources_;
}

bool FindingsBuilder::sameAsLastLabels(const std::vector<std::string_view>& label_names) const {
  if (label_names.size() != last_label_sizes_.size()) return false;
  if (label_names.empty()) return true;
  // Names back to back in memory (the series scanner passes them so) compare in one memcmp.
  // Addresses as integers: views into other buffers must not be stepped through as pointers.
  bool back_to_back = true;
  auto next = reinterpret_cast<std::uintptr_t>(label_names.front().data());
  for (std::size_t i = 0; i < label_names.size(); ++i) {
    if (label_names[i].size() != last_label_sizes_[i]) return false;
    back_to_back = back_to_back && reinterpret_cast<std::uintptr_t>(label_names[i].data()) == next;
    next += label_names[i].size();
  }
  if (back_to_back) {
    return std::string_view(label_names.front().data(), last_label_text_.size()) ==
           last_label_text_;
  }
  std::size_t offset = 0;
  for (const std::string_view name : label_names) {
    if (name != std::string_view(last_label_text_).substr(offset, name.size())) return false;
    offset += name.size();
  }
  return true;
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
  if (metric.series_name != series_name) metric.series_name.assign(series_name);
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

std::shared_ptr<const RuleFindings> FindingsBuilder::finish() {
  findings_->found_at = std::chrono::system_clock::now();
  return std::move(findings_);
}

}  // namespace metrics_adapter::discovery
