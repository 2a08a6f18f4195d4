#include "cli/check_config/check_config.h"

#include <re2/re2.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "cli/check_config/forecast_sampling_check.h"
#include "metrics_adapter/app/backend_pool.h"
#include "metrics_adapter/app/flags.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"

namespace metrics_adapter::cli {
namespace {

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

// Forwards to the Prometheus the relist calls, keeping what each series call returned.
class RecordingPrometheus : public prometheus::PrometheusApi {
 public:
  explicit RecordingPrometheus(std::shared_ptr<prometheus::PrometheusApi> inner)
      : inner_(std::move(inner)) {}

  prometheus::QueryResult query(const std::string& promql, prometheus::Clock::time_point at,
                                std::chrono::milliseconds timeout) override {
    return inner_->query(promql, at, timeout);
  }

  std::shared_ptr<const prometheus::QueryResult> sharedQuery(
      const std::string& promql, prometheus::Clock::time_point at,
      std::chrono::milliseconds timeout) override {
    return inner_->sharedQuery(promql, at, timeout);
  }

  prometheus::RangeResult queryRange(const std::string& promql, prometheus::Clock::time_point start,
                                     prometheus::Clock::time_point end,
                                     std::chrono::milliseconds step,
                                     std::chrono::milliseconds timeout) override {
    return inner_->queryRange(promql, start, end, step, timeout);
  }

  void series(const std::string& selector, prometheus::Clock::time_point start,
              std::chrono::milliseconds timeout,
              const prometheus::SeriesVisitor& visitor) override {
    SeriesCatalog catalog;
    inner_->series(selector, start, timeout,
                   [&](std::string_view name, const std::vector<std::string_view>& labels) {
                     addToCatalog(catalog, name, labels);
                     visitor(name, labels);
                   });
    std::lock_guard lock(mutex_);
    recorded_[selector] = std::move(catalog);  // only answers that completed
  }

  std::map<std::string, SeriesCatalog> recorded() {
    std::lock_guard lock(mutex_);
    return recorded_;
  }

 private:
  std::shared_ptr<prometheus::PrometheusApi> inner_;
  std::mutex mutex_;
  std::map<std::string, SeriesCatalog> recorded_;
};

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

// check-config's own flags, writing into `options` (nullptr: only for the usage text).
std::map<std::string, app::ToolFlag> checkConfigFlags(CheckConfigOptions* options) {
  return {{"series-file",
           {.help = "a series file (series lines or /api/v1/series JSON) to discover from "
                    "instead of Prometheus",
            .apply = app::storeText(options, &CheckConfigOptions::series_file)}}};
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

SeriesFilePrometheus::SeriesFilePrometheus(std::vector<SeriesLine> lines)
    : lines_(std::move(lines)) {}

prometheus::QueryResult SeriesFilePrometheus::query(const std::string&,
                                                    prometheus::Clock::time_point,
                                                    std::chrono::milliseconds) {
  throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0,
                                    "a series file has no samples");
}

prometheus::RangeResult SeriesFilePrometheus::queryRange(const std::string&,
                                                         prometheus::Clock::time_point,
                                                         prometheus::Clock::time_point,
                                                         std::chrono::milliseconds,
                                                         std::chrono::milliseconds) {
  throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0,
                                    "a series file has no samples");
}

void SeriesFilePrometheus::series(const std::string& selector_text, prometheus::Clock::time_point,
                                  std::chrono::milliseconds,
                                  const prometheus::SeriesVisitor& visitor) {
  std::optional<SeriesSelector> selector;
  try {
    selector = parseSeriesSelector(selector_text);
  } catch (const std::invalid_argument& e) {
    std::lock_guard lock(mutex_);
    unselectable_[selector_text] = e.what();
  }
  std::vector<std::string_view> labels;
  for (const auto& line : lines_) {
    if (selector && !selectorMatches(*selector, line)) continue;
    labels.clear();
    for (const auto& [label, value] : line.labels) labels.push_back(label);
    visitor(line.name, labels);
  }
}

std::map<std::string, std::string> SeriesFilePrometheus::unselectable() const {
  std::lock_guard lock(mutex_);
  return unselectable_;
}

std::shared_ptr<const discovery::RuleSet> withBackends(
    const std::shared_ptr<const discovery::RuleSet>& rule_set,
    std::shared_ptr<const prometheus::BackendSet> backends) {
  auto copy = std::make_shared<discovery::RuleSet>(*rule_set);
  copy->backends = std::move(backends);
  return copy;
}

DiscoveryRun relistOnce(std::shared_ptr<const discovery::RuleSet> rule_set,
                        const discovery::RelistOptions& options) {
  // Each backend's series calls are recorded on the way.
  std::vector<std::shared_ptr<RecordingPrometheus>> recorders;
  std::vector<std::shared_ptr<const prometheus::Backend>> recorded_backends;
  for (const auto& backend : rule_set->backends->all()) {
    recorders.push_back(std::make_shared<RecordingPrometheus>(backend->api));
    auto copy = std::make_shared<prometheus::Backend>(*backend);
    copy->api = recorders.back();
    recorded_backends.push_back(std::move(copy));
  }
  discovery::Relister relister(
      withBackends(rule_set,
                   std::make_shared<const prometheus::BackendSet>(std::move(recorded_backends))),
      options);
  relister.relistOnce();
  DiscoveryRun run;
  run.rule_set = std::move(rule_set);
  for (const auto& recorder : recorders) run.series.merge(recorder->recorded());
  for (auto& [key, error] : relister.lastErrors()) {
    if (!error.empty()) run.errors.emplace(key, std::move(error));
  }
  run.findings = relister.findings();
  run.snapshot = relister.snapshot();
  return run;
}

std::shared_ptr<const discovery::RuleSet> compileOffline(const config::AdapterConfig& config,
                                                         std::vector<std::string>* warnings) {
  auto rule_set = std::make_shared<discovery::RuleSet>();
  rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
  rule_set->rules =
      discovery::compileRules(config, *rule_set->mapper, warnings, &rule_set->resource_rules);
  return rule_set;
}

std::optional<OfflineRules> loadOffline(const std::string& config_file, std::ostream& err) {
  try {
    OfflineRules loaded;
    loaded.config = config::loadConfigFile(config_file);
    loaded.rule_set = compileOffline(loaded.config, &loaded.warnings);
    return loaded;
  } catch (const config::ConfigError& e) {
    err << "invalid configuration: " << e.what() << "\n";
    return std::nullopt;
  }
}

CheckConfigOptions parseCheckConfigFlags(std::span<const std::string> args) {
  CheckConfigOptions options;
  std::vector<std::string> positional;
  const std::vector<std::string> read =
      app::parseToolFlags(args, checkConfigFlags(&options), options.shared, &positional);
  // Only --prometheus-url says where Prometheus is: the other client flags alone call nothing.
  options.use_prometheus = std::find(read.begin(), read.end(), "prometheus-url") != read.end();
  if (positional.empty()) throw app::FlagError("missing the config FILE");
  if (positional.size() > 1) throw app::FlagError("unexpected argument \"" + positional[1] + "\"");
  options.config_file = positional[0];
  if (options.use_prometheus && !options.series_file.empty()) {
    throw app::FlagError("give --series-file or --prometheus-url, not both");
  }
  return options;
}

std::string checkConfigUsage() {
  return "usage: metrics-adapter check-config FILE [--series-file F | --prometheus-url URL]\n" +
         app::toolFlagsUsage(checkConfigFlags(nullptr));
}

int runCheckConfig(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  CheckConfigOptions options;
  try {
    options = parseCheckConfigFlags(args);
  } catch (const app::FlagError& e) {
    err << "check-config: " << e.what() << "\n" << checkConfigUsage();
    return 1;
  }

  std::optional<OfflineRules> loaded = loadOffline(options.config_file, err);
  if (!loaded) return 1;
  const config::AdapterConfig& config = loaded->config;
  const std::shared_ptr<const discovery::RuleSet>& rule_set = loaded->rule_set;
  std::vector<std::string>& warnings = loaded->warnings;
  out << options.config_file << ": valid: " << config.rules.size() << " rules, "
      << config.external_rules.size() << " externalRules, " << config.forecast_rules.size()
      << " forecastRules\n";

  std::shared_ptr<SeriesFilePrometheus> series_file;
  std::shared_ptr<prometheus::PrometheusApi> prometheus;
  if (!options.series_file.empty()) {
    std::ifstream in(options.series_file);
    if (!in) {
      err << "check-config: cannot read the series file " << options.series_file << "\n";
      return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    try {
      series_file = std::make_shared<SeriesFilePrometheus>(parseSeriesFile(text.str()));
      prometheus = series_file;
    } catch (const std::invalid_argument& e) {
      err << "check-config: " << options.series_file << ": " << e.what() << "\n";
      return 1;
    }
  }
  std::optional<DiscoveryRun> relisted;
  if (prometheus || options.use_prometheus) {
    try {
      auto backends = app::toolBackends(config, options.shared.prometheus, prometheus);
      if (!config.backends.empty()) out << "backends: " << app::describeBackends(*backends) << "\n";
      relisted = relistOnce(withBackends(rule_set, backends), options.shared.relist);
      if (options.use_prometheus && !config.forecast_rules.empty()) {
        const std::vector<std::string> sampling =
            forecastSamplingWarnings(config, *backends, options.shared.query_timeout);
        warnings.insert(warnings.end(), sampling.begin(), sampling.end());
      }
    } catch (const std::invalid_argument& e) {
      err << "check-config: " << e.what() << "\n";
      return 1;
    } catch (const config::ConfigError& e) {
      err << "invalid configuration: " << e.what() << "\n";
      return 1;
    }
  }
  if (series_file) {
    const auto unselectable = series_file->unselectable();
    for (const auto& rule : rule_set->rules) {
      const std::string& query = rule->source.series_query;
      if (auto why = unselectable.find(query); why != unselectable.end()) {
        warnings.push_back(rule->id + ".seriesQuery \"" + query + "\" is not a single selector (" +
                           why->second + "): every series of the file is used for it");
      }
    }
  }
  for (const auto& warning : warnings) out << "warning: " << warning << "\n";
  if (!relisted) return 0;

  const DiscoveryRun& run = *relisted;
  for (std::size_t i = 0; i < run.rule_set->rules.size(); ++i) {
    const auto& rule = *run.rule_set->rules[i];
    const auto& query = rule.source.series_query;
    out << rule.id << " (";
    if (rule.source.backend != config::kDefaultBackend)
      out << "backend " << rule.source.backend << ", ";
    out << "seriesQuery " << query << "):";
    if (auto error = run.errors.find({rule.source.backend, query}); error != run.errors.end()) {
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

}  // namespace metrics_adapter::cli
