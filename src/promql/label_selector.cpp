#include "metrics_adapter/promql/label_selector.h"

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "promql/label_validation.h"
#include "promql/selector_parser.h"

namespace metrics_adapter::promql {
namespace {

// Selectors arrive in request URLs; anything longer than this is not a real selector.
constexpr std::size_t kMaxSelectorBytes = std::size_t{64} * 1024;

bool containsValue(const Requirement& requirement, const std::string& value) {
  return std::find(requirement.values.begin(), requirement.values.end(), value) !=
         requirement.values.end();
}

bool compareIntegers(const Requirement& requirement, const std::string& label_value) {
  if (requirement.values.size() != 1) return false;
  const auto actual = selector::parseGoInt64(label_value);
  const auto bound = selector::parseGoInt64(requirement.values.front());
  if (!actual || !bound) return false;
  return requirement.op == SelectorOperator::kGreaterThan ? *actual > *bound : *actual < *bound;
}

bool requirementMatches(const Requirement& requirement,
                        const std::map<std::string, std::string>& labels) {
  const auto found = labels.find(requirement.key);
  const bool present = found != labels.end();
  switch (requirement.op) {
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
    case SelectorOperator::kIn:
      return present && containsValue(requirement, found->second);
    case SelectorOperator::kNotEquals:
    case SelectorOperator::kNotIn:
      return !present || !containsValue(requirement, found->second);
    case SelectorOperator::kExists:
      return present;
    case SelectorOperator::kDoesNotExist:
      return !present;
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan:
      return present && compareIntegers(requirement, found->second);
  }
  return false;
}

std::string requirementToString(const Requirement& requirement) {
  std::string out;
  if (requirement.op == SelectorOperator::kDoesNotExist) out += '!';
  out += requirement.key;
  bool parenthesised = false;
  switch (requirement.op) {
    case SelectorOperator::kEquals:
      out += '=';
      break;
    case SelectorOperator::kDoubleEquals:
      out += "==";
      break;
    case SelectorOperator::kNotEquals:
      out += "!=";
      break;
    case SelectorOperator::kIn:
      out += " in (";
      parenthesised = true;
      break;
    case SelectorOperator::kNotIn:
      out += " notin (";
      parenthesised = true;
      break;
    case SelectorOperator::kGreaterThan:
      out += '>';
      break;
    case SelectorOperator::kLessThan:
      out += '<';
      break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      return out;
  }
  std::vector<std::string> values = requirement.values;
  std::sort(values.begin(), values.end());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += values[i];
  }
  if (parenthesised) out += ')';
  return out;
}

nlohmann::json expression(const std::string& key, const char* op,
                          const std::vector<std::string>& values) {
  nlohmann::json entry = {{"key", key}, {"operator", op}};
  if (!values.empty()) entry["values"] = values;
  return entry;
}

}  // namespace

LabelSelector parseLabelSelector(std::string_view text) {
  if (text.size() > kMaxSelectorBytes) {
    throw SelectorError("label selector is too long: " + std::to_string(text.size()) +
                        " bytes, the limit is " + std::to_string(kMaxSelectorBytes));
  }
  LabelSelector result;
  result.requirements = selector::parseRequirements(text);
  std::stable_sort(result.requirements.begin(), result.requirements.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return result;
}

std::string toString(const LabelSelector& selector) {
  std::string out;
  for (std::size_t i = 0; i < selector.requirements.size(); ++i) {
    if (i > 0) out += ',';
    out += requirementToString(selector.requirements[i]);
  }
  return out;
}

bool matches(const LabelSelector& selector, const std::map<std::string, std::string>& labels) {
  return std::all_of(selector.requirements.begin(), selector.requirements.end(),
                     [&labels](const Requirement& r) { return requirementMatches(r, labels); });
}

nlohmann::json toLabelSelectorJson(const LabelSelector& selector) {
  if (selector.empty()) return nullptr;
  nlohmann::json match_labels = nlohmann::json::object();
  nlohmann::json match_expressions = nlohmann::json::array();
  for (const Requirement& requirement : selector.requirements) {
    switch (requirement.op) {
      case SelectorOperator::kEquals:
      case SelectorOperator::kDoubleEquals: {
        // A second `=` on the same key would overwrite the first in matchLabels (upstream
        // does that); as an In expression the echo keeps the selector's meaning.
        const bool single = requirement.values.size() == 1;
        const auto existing = match_labels.find(requirement.key);
        if (single && existing == match_labels.end()) {
          match_labels[requirement.key] = requirement.values.front();
        } else if (!single || *existing != requirement.values.front()) {
          match_expressions.push_back(expression(requirement.key, "In", requirement.values));
        }
        break;
      }
      case SelectorOperator::kIn:
        match_expressions.push_back(expression(requirement.key, "In", requirement.values));
        break;
      case SelectorOperator::kNotEquals:
      case SelectorOperator::kNotIn:
        match_expressions.push_back(expression(requirement.key, "NotIn", requirement.values));
        break;
      case SelectorOperator::kExists:
        match_expressions.push_back(expression(requirement.key, "Exists", {}));
        break;
      case SelectorOperator::kDoesNotExist:
        match_expressions.push_back(expression(requirement.key, "DoesNotExist", {}));
        break;
      case SelectorOperator::kGreaterThan:
        match_expressions.push_back(expression(requirement.key, "Gt", requirement.values));
        break;
      case SelectorOperator::kLessThan:
        match_expressions.push_back(expression(requirement.key, "Lt", requirement.values));
        break;
    }
  }
  nlohmann::json out = nlohmann::json::object();
  if (!match_labels.empty()) out["matchLabels"] = std::move(match_labels);
  if (!match_expressions.empty()) out["matchExpressions"] = std::move(match_expressions);
  return out;
}

}  // namespace metrics_adapter::promql
