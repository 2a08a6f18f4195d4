#pragma once

#include <cstddef>
#include <functional>
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
  using Resource = std::optional<kube::ResourceInfo>;

  // What a series name leads to; nodes of the maps below never move, so pointers stay valid.
  struct NameEntry {
    std::optional<std::string> metric_name;
    RuleFindings::Metric* metric = nullptr;  // set once a series with this name was folded
    std::vector<const Resource*> merged;     // resources already in metric->resources
  };

  // Hashes std::string and std::string_view alike, so lookups by view build no string.
  struct TextHash {
    using is_transparent = void;  // NOLINT(readability-identifier-naming): std names it
    std::size_t operator()(std::string_view text) const noexcept {
      return std::hash<std::string_view>{}(text);
    }
  };
  template <typename Value>
  using TextMap = std::unordered_map<std::string, Value, TextHash, std::equal_to<>>;

  // nullptr when `series_name` is new and the bound is reached.
  NameEntry* entryFor(std::string_view series_name);
  // nullptr when `label` is new and the bound is reached.
  const Resource* resourceFor(std::string_view label);
  // The resources of `label_names`, in order; reuses the previous answer when the names are the
  // previous series' names, as they mostly are.
  const std::vector<const Resource*>& resourcesFor(
      const std::vector<std::string_view>& label_names);
  bool sameAsLastLabels(const std::vector<std::string_view>& label_names) const;

  const CompiledRule& rule_;
  std::shared_ptr<RuleFindings> findings_ = std::make_shared<RuleFindings>();
  TextMap<NameEntry> names_;
  TextMap<Resource> label_resources_;
  // The last name looked up, as the key in names_ (nodes never move): Prometheus sorts series
  // by name, so consecutive series mostly share it and skip hashing.
  const std::string* last_name_ = nullptr;
  NameEntry* last_entry_ = nullptr;
  // The previous series' label names, back to back, and their sizes.
  std::string last_label_text_;
  std::vector<std::size_t> last_label_sizes_;
  std::vector<const Resource*> last_resources_;
  bool have_last_labels_ = false;
};

}  // namespace metrics_adapter::discovery
