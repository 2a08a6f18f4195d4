#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/promql/label_selector.h"

namespace metrics_adapter::promql {

enum class MatchOperator { kEqual, kNotEqual, kRegexMatch, kRegexNoMatch };

// One PromQL label matcher, e.g. pod=~"a|b".
struct LabelMatcher {
  std::string label;
  MatchOperator op = MatchOperator::kEqual;
  std::string value;  // raw value; render() quotes it

  // `label OP "value"` with the value quoted by quoteGoString.
  std::string render() const;
};

// Go strconv.Quote: surrounding double quotes, \" and \\ escaped, control and non-printable
// characters as \n \t \xNN \uNNNN, printable UTF-8 kept, invalid UTF-8 bytes as \xNN.
std::string quoteGoString(std::string_view text);

// Escapes RE2/Prometheus regex metacharacters so `text` matches literally.
std::string escapeRegex(std::string_view text);

// Maps a label selector to PromQL matchers as prometheus-adapter does (one per requirement,
// in the selector's key order): = == -> =, != -> !=, in -> =~ "a|b", notin -> !~ "a|b",
// exists -> !="", !k -> ="". Values of in/notin are regex-escaped (improvement: a `.` in a
// value cannot over-match). > and < throw SelectorError("operator not supported by prometheus").
std::vector<LabelMatcher> selectorToMatchers(const LabelSelector& selector);

// The matcher for requested object names: one name -> label="name"; several -> label=~"n1|n2"
// with each name regex-escaped, sorted and de-duplicated; none -> label="".
LabelMatcher objectNamesMatcher(std::string_view label, std::vector<std::string> names);

// Joins rendered matchers with "," (no spaces), as .LabelMatchers is built.
std::string joinMatchers(const std::vector<LabelMatcher>& matchers);

}  // namespace metrics_adapter::promql
