// Label selectors arrive in every wildcard request (labelSelector, metricLabelSelector) and are
// rendered into PromQL: parse, canonical form, matchers, JSON echo.
#include <re2/re2.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "metrics_adapter/promql/label_matchers.h"
#include "metrics_adapter/promql/label_selector.h"

namespace {

using metrics_adapter::fuzz::check;
using metrics_adapter::fuzz::goUnquote;
using metrics_adapter::fuzz::isPromqlMatcher;
namespace promql = metrics_adapter::promql;

bool sameSelector(const promql::LabelSelector& a, const promql::LabelSelector& b) {
  if (a.requirements.size() != b.requirements.size()) return false;
  for (std::size_t i = 0; i < a.requirements.size(); ++i) {
    const auto& x = a.requirements[i];
    const auto& y = b.requirements[i];
    if (x.key != y.key || x.op != y.op || x.values != y.values) return false;
  }
  return true;
}

void checkMatchers(const promql::LabelSelector& selector) {
  std::vector<promql::LabelMatcher> matchers;
  try {
    matchers = promql::selectorToMatchers(selector);
  } catch (const promql::SelectorError&) {
    return;  // > and < have no PromQL form
  }
  check(matchers.size() == selector.requirements.size(), "one matcher per requirement");
  for (const auto& matcher : matchers) {
    const std::string rendered = matcher.render();
    check(isPromqlMatcher(rendered, matcher.value), "matcher renders as label OP \"value\"",
          rendered);
    if (matcher.op == promql::MatchOperator::kRegexMatch ||
        matcher.op == promql::MatchOperator::kRegexNoMatch) {
      RE2 regex(matcher.value, RE2::Quiet);
      check(regex.ok(), "set-based matcher is a valid regex", matcher.value);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  promql::LabelSelector selector;
  try {
    selector = promql::parseLabelSelector(text);
  } catch (const promql::SelectorError&) {
    return 0;
  }
  const std::string canonical = promql::toString(selector);
  promql::LabelSelector reparsed;
  try {
    reparsed = promql::parseLabelSelector(canonical);
  } catch (const promql::SelectorError& error) {
    check(false, "the canonical form of a valid selector parses", canonical + ": " + error.what());
  }
  check(sameSelector(selector, reparsed), "the canonical form parses to the same selector",
        canonical);
  check(promql::toString(reparsed) == canonical, "the canonical form is a fixed point", canonical);
  checkMatchers(selector);
  (void)promql::toLabelSelectorJson(selector).dump();

  // Every value Kubernetes accepts round-trips through Go quoting and literal regex escaping.
  for (const auto& requirement : selector.requirements) {
    for (const auto& value : requirement.values) {
      const auto unquoted = goUnquote(promql::quoteGoString(value));
      check(unquoted && *unquoted == value, "quoteGoString round-trips", value);
      RE2 literal(promql::escapeRegex(value), RE2::Quiet);
      check(literal.ok() && RE2::FullMatch(value, literal), "escapeRegex matches literally", value);
    }
  }
  return 0;
}
