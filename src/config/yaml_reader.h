#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/config/config.h"

namespace metrics_adapter::config {

// Strict, path-aware access to a parsed YAML tree. Every failure throws ConfigError formatted
// by formatConfigError, and every value read records its line in `config->lines`.
class YamlReader {
 public:
  explicit YamlReader(AdapterConfig* config) : config_(config) {}

  // A mapping's entries in document order. Null counts as an empty mapping. Keys must be
  // strings, unique, and (when `allowed` is non-empty) among `allowed`.
  std::vector<std::pair<std::string, YAML::Node>> mapEntries(
      const YAML::Node& node, const std::string& path,
      std::initializer_list<std::string_view> allowed) const;

  // A sequence's items. Null counts as an empty sequence.
  std::vector<YAML::Node> listItems(const YAML::Node& node, const std::string& path) const;

  // A scalar as text (numbers and booleans too, as Go's YAML decoder does). Null is "".
  std::string scalar(const YAML::Node& node, const std::string& path) const;

  // true/false (and the YAML 1.1 spellings yes/no/on/off).
  bool boolean(const YAML::Node& node, const std::string& path) const;

  [[noreturn]] void fail(const YAML::Node& node, const std::string& path,
                         std::string_view problem) const;

  void recordLine(const YAML::Node& node, const std::string& path) const;

 private:
  AdapterConfig* config_;
};

// "a.b" (or "b" when `parent` is empty).
std::string childPath(const std::string& parent, std::string_view key);
// "a[3]".
std::string indexPath(const std::string& parent, std::size_t index);

}  // namespace metrics_adapter::config
