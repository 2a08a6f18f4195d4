#include "metrics_adapter/promql/label_matchers.h"

#include <algorithm>
#include <utility>

namespace metrics_adapter::promql {
namespace {

std::string_view operatorText(MatchOperator op) {
  switch (op) {
    case MatchOperator::kEqual:
      return "=";
    case MatchOperator::kNotEqual:
      return "!=";
    case MatchOperator::kRegexMatch:
      return "=~";
    case MatchOperator::kRegexNoMatch:
      return "!~";
  }
  return "=";
}

std::string escapedAlternation(const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += '|';
    out += escapeRegex(values[i]);
  }
  return out;
}

// One value: the exact operator with the raw value. Several: the regex operator with an
// escaped alternation. None: the caller's selector is malformed.
LabelMatcher valueMatcher(const Requirement& requirement, MatchOperator exact,
                          MatchOperator regex) {
  if (requirement.values.empty()) throw SelectorError("operator requires values");
  if (requirement.values.size() == 1) return {requirement.key, exact, requirement.values.front()};
  return {requirement.key, regex, escapedAlternation(requirement.values)};
}

LabelMatcher requirementToMatcher(const Requirement& requirement) {
  if (requirement.key.empty()) throw SelectorError("label not specified");
  switch (requirement.op) {
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
      return valueMatcher(requirement, MatchOperator::kEqual, MatchOperator::kRegexMatch);
    case SelectorOperator::kNotEquals:
      return valueMatcher(requirement, MatchOperator::kNotEqual, MatchOperator::kRegexNoMatch);
    case SelectorOperator::kIn:
      if (requirement.values.empty()) throw SelectorError("operator requires values");
      return {requirement.key, MatchOperator::kRegexMatch, escapedAlternation(requirement.values)};
    case SelectorOperator::kNotIn:
      if (requirement.values.empty()) throw SelectorError("operator requires values");
      return {requirement.key, MatchOperator::kRegexNoMatch,
              escapedAlternation(requirement.values)};
    case SelectorOperator::kExists:
      if (!requirement.values.empty()) throw SelectorError("operator does not support values");
      return {requirement.key, MatchOperator::kNotEqual, ""};
    case SelectorOperator::kDoesNotExist:
      if (!requirement.values.empty()) throw SelectorError("operator does not support values");
      return {requirement.key, MatchOperator::kEqual, ""};
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan:
      break;
  }
  throw SelectorError("operator not supported by prometheus");
}

}  // namespace

std::string LabelMatcher::render() const {
  std::string out = label;
  out += operatorText(op);
  out += quoteGoString(value);
  return out;
}

std::string escapeRegex(std::string_view text) {
  static constexpr std::string_view kMetacharacters = "\\.+*?()|[]{}^$";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    if (kMetacharacters.find(ch) != std::string_view::npos) out += '\\';
    out += ch;
  }
  return out;
}

std::vector<LabelMatcher> selectorToMatchers(const LabelSelector& selector) {
  std::vector<LabelMatcher> matchers;
  matchers.reserve(selector.requirements.size());
  for (const Requirement& requirement : selector.requirements) {
    matchers.push_back(requirementToMatcher(requirement));
  }
  return matchers;
}

LabelMatcher objectNamesMatcher(std::string_view label, std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (names.empty()) return {std::string(label), MatchOperator::kEqual, ""};
  if (names.size() == 1) return {std::string(label), MatchOperator::kEqual, std::move(names[0])};
  return {std::string(label), MatchOperator::kRegexMatch, escapedAlternation(names)};
}

std::string joinMatchers(const std::vector<LabelMatcher>& matchers) {
  std::string out;
  for (const LabelMatcher& matcher : matchers) {
    if (!out.empty()) out += ',';
    out += matcher.render();
  }
  return out;
}

}  // namespace metrics_adapter::promql
