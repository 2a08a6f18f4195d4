#include "metrics_adapter/discovery/known_metrics.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

namespace metrics_adapter::discovery {
namespace {

bool nameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool nameChar(char c) { return nameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

bool plainName(std::string_view text) {
  return !text.empty() && nameStart(text.front()) &&
         std::all_of(text.begin(), text.end(), nameChar);
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// The names a `__name__=~` regex matches when it is an alternation of plain names; Prometheus
// anchors it, so ^ $ and one group around it change nothing.
std::vector<std::string> alternation(std::string_view regex) {
  if (regex.starts_with('^')) regex.remove_prefix(1);
  if (regex.ends_with('$')) regex.remove_suffix(1);
  if (regex.starts_with('(') && regex.ends_with(')')) regex = regex.substr(1, regex.size() - 2);
  std::vector<std::string> names;
  while (true) {
    const auto bar = regex.find('|');
    const std::string_view part = regex.substr(0, bar);
    if (!plainName(part)) return {};
    names.emplace_back(part);
    if (bar == std::string_view::npos) return names;
    regex.remove_prefix(bar + 1);
  }
}

// The value of the `__name__` matcher inside `braces` ("{...}"), with its operator; nullopt when
// there is none or it is quoted in a way read here as not plain (escapes).
struct NameMatcher {
  bool regex = false;
  std::string_view value;
};
std::optional<NameMatcher> nameMatcher(std::string_view braces) {
  const auto at = braces.find("__name__");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = trimmed(braces.substr(at + 8));
  NameMatcher matcher;
  if (rest.starts_with("=~")) {
    matcher.regex = true;
    rest.remove_prefix(2);
  } else if (rest.starts_with('=')) {
    rest.remove_prefix(1);
  } else {
    return std::nullopt;  // != and !~ select by exclusion
  }
  rest = trimmed(rest);
  if (rest.empty() || (rest.front() != '"' && rest.front() != '\'' && rest.front() != '`')) {
    return std::nullopt;
  }
  const char quote = rest.front();
  const auto end = rest.find(quote, 1);
  if (end == std::string_view::npos) return std::nullopt;
  matcher.value = rest.substr(1, end - 1);
  if (matcher.value.find('\\') != std::string_view::npos) return std::nullopt;
  return matcher;
}

}  // namespace

std::vector<std::string> declaredSeriesNames(std::string_view series_query) {
  const std::string_view query = trimmed(series_query);
  const auto brace = query.find('{');
  const std::string_view name = trimmed(query.substr(0, brace));
  const std::string_view braces = brace == std::string_view::npos ? "" : query.substr(brace);
  if (!name.empty()) {
    if (!plainName(name) || (!braces.empty() && !braces.ends_with('}'))) return {};
    return {std::string(name)};
  }
  const auto matcher = nameMatcher(braces);
  if (!matcher) return {};
  if (matcher->regex) return alternation(matcher->value);
  if (!plainName(matcher->value)) return {};
  return {std::string(matcher->value)};
}

std::shared_ptr<const RuleFindings> keepGoneMetrics(
    const CompiledRule& rule, const std::shared_ptr<const RuleFindings>& previous,
    std::shared_ptr<const RuleFindings> fresh) {
  if (!previous || !fresh) return fresh;
  std::vector<std::pair<std::string, RuleFindings::Metric>> gone;
  for (const auto& [name, metric] : previous->metrics) {
    if (fresh->metrics.contains(name) || rule.namer.metricName(metric.series_name) != name) {
      continue;
    }
    RuleFindings::Metric kept = metric;
    std::erase_if(kept.resources, [&rule](const kube::ResourceInfo& resource) {
      return !rule.resources.labelForResource(resource);
    });
    if (rule.kind == RuleKind::kCustom && kept.resources.empty()) continue;
    if (!kept.gone) kept.last_found = previous->found_at;
    kept.gone = true;
    gone.emplace_back(name, std::move(kept));
  }
  if (gone.empty()) return fresh;
  if (gone.size() > kMaxGoneMetrics) {
    std::nth_element(
        gone.begin(), gone.begin() + kMaxGoneMetrics, gone.end(),
        [](const auto& a, const auto& b) { return a.second.last_found > b.second.last_found; });
    gone.resize(kMaxGoneMetrics);
  }
  auto merged = std::make_shared<RuleFindings>(*fresh);
  for (auto& [name, metric] : gone) merged->metrics.emplace(std::move(name), std::move(metric));
  return merged;
}

}  // namespace metrics_adapter::discovery
