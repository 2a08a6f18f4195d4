#include "app/check_config.h"

#include <re2/re2.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "discovery/findings_builder.h"
#include "metrics_adapter/app/flags.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"

namespace metrics_adapter::app {
namespace {

constexpr std::chrono::milliseconds kSeriesTimeout{std::chrono::seconds(30)};

bool isNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

bool isNameChar(char c) { return isNameStart(c) || (c >= '0' && c <= '9'); }

// A cursor over one selector's text; every failure names the column.
class SelectorScanner {
 public:
  explicit SelectorScanner(std::string_view text) : text_(text) {}

  SeriesSelector parse() {
    SeriesSelector selector;
    skipSpace();
    selector.name = identifier();
    skipSpace();
    if (peek() == '{') {
      ++pos_;
      skipSpace();
      while (peek() != '}') {
        selector.matchers.push_back(matcher());
        skipSpace();
        if (peek() == ',') {
          ++pos_;
          skipSpace();
        } else if (peek() != '}') {
          fail("expected ',' or '}'");
        }
      }
      ++pos_;
    } else if (selector.name.empty()) {
      fail("expected a metric name or '{'");
    }
    skipSpace();
    if (pos_ != text_.size()) fail("unexpected text after the selector");
    return selector;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw std::invalid_argument(problem + " at column " + std::to_string(pos_ + 1));
  }

  std::string identifier() {
    std::size_t start = pos_;
    if (pos_ < text_.size() && isNameStart(text_[pos_])) {
      while (pos_ < text_.size() && isNameChar(text_[pos_])) ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  promql::LabelMatcher matcher() {
    promql::LabelMatcher result;
    result.label = identifier();
    if (result.label.empty()) fail("expected a label name");
    skipSpace();
    std::string_view rest = text_.substr(pos_);
    if (rest.starts_with("=~")) {
      result.op = promql::MatchOperator::kRegexMatch;
      pos_ += 2;
    } else if (rest.starts_with("!~")) {
      result.op = promql::MatchOperator::kRegexNoMatch;
      pos_ += 2;
    } else if (rest.starts_with("!=")) {
      result.op = promql::MatchOperator::kNotEqual;
      pos_ += 2;
    } else if (rest.starts_with("=")) {
      result.op = promql::MatchOperator::kEqual;
      pos_ += 1;
    } else {
      fail("expected =, !=, =~ or !~");
    }
    skipSpace();
    result.value = quoted();
    return result;
  }

  // A "..." or '...' string with backslash escapes (\n, \t, \\, \", \').
  std::string quoted() {
    const char quote = peek();
    if (quote != '"' && quote != '\'') fail("expected a quoted value");
    ++pos_;
    std::string value;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) break;
        char escaped = text_[pos_++];
        c = escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped;
      }
      value.push_back(c);
    }
    if (pos_ >= text_.size()) fail("unterminated string");
    ++pos_;
    return value;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

std::vector<SeriesLine> parseSeriesJson(const nlohmann::json& document) {
  const nlohmann::json* data = &document;
  if (document.is_object()) {
    auto it = document.find("data");
    if (it == document.end()) throw std::invalid_argument("JSON series file: no \"data\" field");
    data = &*it;
  }
  if (!data->is_array()) throw std::invalid_argument("JSON series file: \"data\" is not a list");
  std::vector<SeriesLine> lines;
  for (std::size_t i = 0; i < data->size(); ++i) {
    const auto& entry = (*data)[i];
    const std::string where = "JSON series file: data[" + std::to_string(i) + "]";
    if (!entry.is_object()) throw std::invalid_argument(where + ": not an object");
    SeriesLine line;
    for (const auto& [key, value] : entry.items()) {
      // NOLINTNEXTLINE(performance-inefficient-string-concatenation): an error path
      if (!value.is_string()) throw std::invalid_argument(where + "." + key + ": not a string");
      if (key == "__name__") {
        line.name = value.get<std::string>();
      } else {
        line.labels[key] = value.get<std::string>();
      }
    }
    if (line.name.empty()) throw std::invalid_argument(where + ": no __name__");
    lines.push_back(std::move(line));
  }
  return lines;
}

SeriesLine seriesFromSelector(const SeriesSelector& selector) {
  SeriesLine line{.name = selector.name, .labels = {}};
  for (const auto& matcher : selector.matchers) {
    if (matcher.op != promql::MatchOperator::kEqual) {
      throw std::invalid_argument("label " + matcher.label + ": a series has only label=\"value\"");
    }
    if (matcher.label == "__name__") {
      line.name = matcher.value;
    } else {
      line.labels[matcher.label] = matcher.value;
    }
  }
  if (line.name.empty()) throw std::invalid_argument("a series needs a name");
  return line;
}

bool matcherMatches(const promql::LabelMatcher& matcher, const std::string& value) {
  switch (matcher.op) {
    case promql::MatchOperator::kEqual:
      return value == matcher.value;
    case promql::MatchOperator::kNotEqual:
      return value != matcher.value;
    case promql::MatchOperator::kRegexMatch:
    case promql::MatchOperator::kRegexNoMatch: {
      re2::RE2::Options options;
      options.set_log_errors(false);
      re2::RE2 regex(matcher.value, options);
      bool matched = regex.ok() && re2::RE2::FullMatch(value, regex);
      return matcher.op == promql::MatchOperator::kRegexMatch ? matched : !matched;
    }
  }
  return false;
}

void addToCatalog(SeriesCatalog& catalog, std::string_view name,
                  const std::vector<std::string_view>& labels) {
  auto [entry, inserted] = catalog.try_emplace(std::string(name));
  for (std::string_view label : labels) entry->second.emplace(label);
}

// "pods/duty_cycle_current" per resource for custom rules, the name for external ones.
std::vector<std::string> exposedNames(const discovery::CompiledRule& rule,
                                      const discovery::RuleFindings& findings) {
  std::vector<std::string> names;
  for (const auto& [metric, found] : findings.metrics) {
    if (rule.kind == discovery::RuleKind::kExternal) {
      names.push_back(metric);
      continue;
    }
    for (const auto& resource : found.resources) {
      names.push_back(resource.groupResource() + "/" + metric);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

SeriesSelector parseSeriesSelector(std::string_view text) { return SelectorScanner(text).parse(); }

std::vector<SeriesLine> parseSeriesFile(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  if (text[first] == '[' || text[first] == '{') {
    auto document = nlohmann::json::parse(text, nullptr, false);
    if (!document.is_discarded()) return parseSeriesJson(document);
    if (text[first] == '[') throw std::invalid_argument("series file: invalid JSON");
  }
  std::vector<SeriesLine> lines;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos || line[start] == '#') continue;
    try {
      lines.push_back(seriesFromSelector(parseSeriesSelector(line)));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("series file line " + std::to_string(number) + ": " + e.what());
    }
  }
  return lines;
}

bool selectorMatches(const SeriesSelector& selector, const SeriesLine& series) {
  if (!selector.name.empty() && selector.name != series.name) return false;
  static const std::string kEmpty;
  for (const auto& matcher : selector.matchers) {
    const std::string* value = &series.name;
    if (matcher.label != "__name__") {
      auto it = series.labels.find(matcher.label);
      value = it == series.labels.end() ? &kEmpty : &it->second;
    }
    if (!matcherMatches(matcher, *value)) return false;
  }
  return true;
}

std::map<std::string, SeriesCatalog> fetchSeries(prometheus::PrometheusApi& prometheus,
                                                 const discovery::RuleSet& rule_set,
                                                 std::chrono::milliseconds max_age,
                                                 std::map<std::string, std::string>* errors) {
  std::map<std::string, SeriesCatalog> result;
  const auto start = prometheus::Clock::now() - max_age;
  for (const auto& rule : rule_set.rules) {
    const std::string& query = rule->source.series_query;
    if (result.count(query) || errors->count(query)) continue;
    SeriesCatalog catalog;
    try {
      prometheus.series(query, start, kSeriesTimeout,
                        [&](std::string_view name, const std::vector<std::string_view>& labels) {
                          addToCatalog(catalog, name, labels);
                        });
      result.emplace(query, std::move(catalog));
    } catch (const std::exception& e) {
      (*errors)[query] = e.what();
    }
  }
  return result;
}

std::map<std::string, SeriesCatalog> selectSeries(const discovery::RuleSet& rule_set,
                                                  const std::vector<SeriesLine>& lines,
                                                  std::vector<std::string>* warnings) {
  std::map<std::string, SeriesCatalog> result;
  for (const auto& rule : rule_set.rules) {
    const std::string& query = rule->source.series_query;
    if (result.count(query)) continue;
    std::optional<SeriesSelector> selector;
    try {
      selector = parseSeriesSelector(query);
    } catch (const std::invalid_argument& e) {
      warnings->push_back(rule->id + ".seriesQuery \"" + query + "\" is not a single selector (" +
                          e.what() + "): every series of the file is used for it");
    }
    SeriesCatalog& catalog = result[query];
    for (const auto& line : lines) {
      if (selector && !selectorMatches(*selector, line)) continue;
      std::vector<std::string_view> labels;
      for (const auto& [label, value] : line.labels) labels.push_back(label);
      addToCatalog(catalog, line.name, labels);
    }
  }
  return result;
}

DiscoveryRun discover(std::shared_ptr<const discovery::RuleSet> rule_set,
                      std::map<std::string, SeriesCatalog> series,
                      std::map<std::string, std::string> errors) {
  DiscoveryRun run;
  run.rule_set = std::move(rule_set);
  run.series = std::move(series);
  run.errors = std::move(errors);
  for (const auto& rule : run.rule_set->rules) {
    auto catalog = run.series.find(rule->source.series_query);
    if (catalog == run.series.end()) {
      run.findings.push_back(nullptr);
      continue;
    }
    discovery::FindingsBuilder builder(*rule);
    std::vector<std::string_view> labels;
    for (const auto& [name, label_names] : catalog->second) {
      labels.assign(label_names.begin(), label_names.end());
      builder.add(name, labels);
    }
    run.findings.push_back(builder.finish());
  }
  run.snapshot = std::make_shared<const discovery::RegistrySnapshot>(run.rule_set, run.findings);
  return run;
}

std::shared_ptr<const discovery::RuleSet> compileOffline(const config::AdapterConfig& config,
                                                         std::vector<std::string>* warnings) {
  auto rule_set = std::make_shared<discovery::RuleSet>();
  rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
  rule_set->rules = discovery::compileRules(config, *rule_set->mapper, warnings);
  return rule_set;
}

std::vector<std::pair<std::string, std::string>> splitFlags(std::span<const std::string> args,
                                                            const std::set<std::string>& switches) {
  std::vector<std::pair<std::string, std::string>> result;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word.size() < 2 || word[0] != '-') {
      result.emplace_back("", word);
      continue;
    }
    std::string name = word.substr(word[1] == '-' ? 2 : 1);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (switches.count(name)) {
      if (value && *value != "true" && *value != "false") {
        throw FlagError("--" + name + ": expected true or false, got \"" + *value + "\"");
      }
      result.emplace_back(name, value.value_or("true"));
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) throw FlagError("--" + name + ": missing value");
      value = args[++i];
    }
    result.emplace_back(name, *value);
  }
  return result;
}

bool applyPrometheusFlag(const std::string& name, const std::string& value,
                         prometheus::PrometheusClientOptions& options) {
  if (name == "prometheus-url") {
    options.url = value;
  } else if (name == "prometheus-token-file") {
    options.token_file = value;
  } else if (name == "prometheus-ca-file") {
    options.ca_file = value;
  } else if (name == "prometheus-header") {
    const auto eq = value.find('=');
    if (eq == 0 || eq == std::string::npos) {
      throw FlagError("--prometheus-header: expected name=value, got \"" + value + "\"");
    }
    options.headers.emplace_back(value.substr(0, eq), value.substr(eq + 1));
  } else {
    return false;
  }
  return true;
}

int runCheckConfig(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  std::string config_file;
  std::string series_file;
  prometheus::PrometheusClientOptions prometheus_options;
  bool use_prometheus = false;
  std::chrono::milliseconds max_age{std::chrono::minutes(2)};
  try {
    for (const auto& [name, value] : splitFlags(args, {})) {
      if (name.empty() && config_file.empty()) {
        config_file = value;
      } else if (name == "series-file") {
        series_file = value;
      } else if (name == "metrics-max-age") {
        max_age = parseGoDuration(value);
      } else if (!name.empty() && applyPrometheusFlag(name, value, prometheus_options)) {
        use_prometheus = use_prometheus || name == "prometheus-url";
      } else {
        throw FlagError(name.empty() ? "unexpected argument \"" + value + "\""
                                     : "unknown flag --" + name);
      }
    }
    if (config_file.empty()) throw FlagError("missing the config FILE");
    if (use_prometheus && !series_file.empty()) {
      throw FlagError("give --series-file or --prometheus-url, not both");
    }
  } catch (const FlagError& e) {
    err << "check-config: " << e.what()
        << "\nusage: metrics-adapter check-config FILE [--series-file F | --prometheus-url URL]\n";
    return 1;
  }

  config::AdapterConfig config;
  std::shared_ptr<const discovery::RuleSet> rule_set;
  std::vector<std::string> warnings;
  try {
    config = config::loadConfigFile(config_file);
    rule_set = compileOffline(config, &warnings);
  } catch (const config::ConfigError& e) {
    err << "invalid configuration: " << e.what() << "\n";
    return 1;
  }
  out << config_file << ": valid: " << config.rules.size() << " rules, "
      << config.external_rules.size() << " externalRules\n";

  std::map<std::string, SeriesCatalog> series;
  std::map<std::string, std::string> errors;
  if (!series_file.empty()) {
    std::ifstream in(series_file);
    if (!in) {
      err << "check-config: cannot read the series file " << series_file << "\n";
      return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    try {
      series = selectSeries(*rule_set, parseSeriesFile(text.str()), &warnings);
    } catch (const std::invalid_argument& e) {
      err << "check-config: " << series_file << ": " << e.what() << "\n";
      return 1;
    }
  } else if (use_prometheus) {
    try {
      prometheus::PrometheusClient client(prometheus_options);
      series = fetchSeries(client, *rule_set, max_age, &errors);
    } catch (const std::invalid_argument& e) {
      err << "check-config: " << e.what() << "\n";
      return 1;
    }
  }
  for (const auto& warning : warnings) out << "warning: " << warning << "\n";
  if (series_file.empty() && !use_prometheus) return 0;

  const DiscoveryRun run = discover(rule_set, std::move(series), std::move(errors));
  for (std::size_t i = 0; i < run.rule_set->rules.size(); ++i) {
    const auto& rule = *run.rule_set->rules[i];
    const auto& query = rule.source.series_query;
    out << rule.id << " (seriesQuery " << query << "):";
    if (auto error = run.errors.find(query); error != run.errors.end()) {
      out << " the series query failed: " << error->second << "\n";
      continue;
    }
    const auto& findings = run.findings[i];
    const std::vector<std::string> names =
        findings ? exposedNames(rule, *findings) : std::vector<std::string>{};
    out << " " << (findings ? findings->series_seen : 0) << " series, exposes " << names.size()
        << "\n";
    for (const auto& name : names) out << "  " << name << "\n";
    if (!findings || findings->series_seen == 0) {
      out << "warning: " << rule.id << ": its seriesQuery selects no series\n";
    } else if (findings->metrics.empty()) {
      out << "warning: " << rule.id << ": seriesFilters/name.matches reject all "
          << findings->series_seen << " series\n";
    } else if (names.empty()) {
      out << "warning: " << rule.id
          << ": no label of its series maps to a resource (check resources)\n";
    }
  }
  return 0;
}

}  // namespace metrics_adapter::app
