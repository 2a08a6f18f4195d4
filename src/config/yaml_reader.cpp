#include "config/yaml_reader.h"

#include <algorithm>
#include <map>

namespace metrics_adapter::config {
namespace {

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "nothing";
  }
}

std::string joinAllowed(std::initializer_list<std::string_view> allowed) {
  std::string joined;
  for (std::string_view key : allowed) {
    if (!joined.empty()) joined += ", ";
    joined += key;
  }
  return joined;
}

}  // namespace

std::string childPath(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return parent + "." + std::string(key);
}

std::string indexPath(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

void YamlReader::recordLine(const YAML::Node& node, const std::string& path) const {
  const YAML::Mark mark = node.Mark();
  if (mark.line >= 0 && !path.empty()) config_->lines[path] = mark.line + 1;
}

void YamlReader::fail(const YAML::Node& node, const std::string& path,
                      std::string_view problem) const {
  // Keep a line already recorded for `path`: it is the value's own, `node` may be its parent.
  const YAML::Mark mark = node.Mark();
  if (mark.line >= 0 && !path.empty()) config_->lines.try_emplace(path, mark.line + 1);
  throw ConfigError(formatConfigError(*config_, path, problem));
}

std::vector<std::pair<std::string, YAML::Node>> YamlReader::mapEntries(
    const YAML::Node& node, const std::string& path,
    std::initializer_list<std::string_view> allowed) const {
  recordLine(node, path);
  std::vector<std::pair<std::string, YAML::Node>> entries;
  if (node.IsNull()) return entries;
  if (!node.IsMap()) fail(node, path, "expected a map, got " + describe(node));
  std::map<std::string, int> first_line;
  for (const auto& entry : node) {
    // Copies: yaml-cpp's iterator hands out temporaries.
    const YAML::Node key = entry.first;
    const YAML::Node value = entry.second;
    if (!key.IsScalar()) fail(key, path, "keys must be strings, got " + describe(key));
    const std::string name = key.Scalar();
    const std::string entry_path = childPath(path, name);
    if (allowed.size() != 0 && std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      fail(key, entry_path, "unknown field (allowed: " + joinAllowed(allowed) + ")");
    }
    // yaml-cpp keeps every duplicate and lookups return the first one; Go's strict decoder
    // rejects them, so do we.
    auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1);
    if (!inserted) {
      recordLine(key, entry_path);
      fail(key, entry_path, "duplicate key (first at line " + std::to_string(seen->second) + ")");
    }
    // A null value (`key:`) has no position of its own; point at its key instead.
    recordLine(value.IsNull() ? key : value, entry_path);
    entries.emplace_back(name, value);
  }
  return entries;
}

std::vector<YAML::Node> YamlReader::listItems(const YAML::Node& node,
                                              const std::string& path) const {
  recordLine(node, path);
  std::vector<YAML::Node> items;
  if (node.IsNull()) return items;
  if (!node.IsSequence()) fail(node, path, "expected a list, got " + describe(node));
  for (std::size_t i = 0; i < node.size(); ++i) {
    recordLine(node[i], indexPath(path, i));
    items.push_back(node[i]);
  }
  return items;
}

std::string YamlReader::scalar(const YAML::Node& node, const std::string& path) const {
  if (node.IsNull()) return "";
  if (!node.IsScalar()) fail(node, path, "expected a string, got " + describe(node));
  return node.Scalar();
}

bool YamlReader::boolean(const YAML::Node& node, const std::string& path) const {
  if (node.IsScalar()) {
    bool value = false;
    if (YAML::convert<bool>::decode(node, value)) return value;
    fail(node, path, "expected true or false, got \"" + node.Scalar() + "\"");
  }
  fail(node, path, "expected true or false, got " + describe(node));
}

}  // namespace metrics_adapter::config
