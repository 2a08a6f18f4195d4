#pragma once

#include <chrono>
#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/discovery/registry.h"
#include "metrics_adapter/prometheus/prometheus_api.h"
#include "metrics_adapter/prometheus/prometheus_client.h"
#include "metrics_adapter/promql/label_matchers.h"

namespace metrics_adapter::app {

// One series of a series file, with its label values (__name__ excluded).
struct SeriesLine {
  std::string name;
  std::map<std::string, std::string> labels;
};

// The series names one seriesQuery returned, each with the union of the label names seen.
using SeriesCatalog = std::map<std::string, std::set<std::string>, std::less<>>;

// Parses a series file: either the JSON of /api/v1/series ({"status":"success","data":[...]}
// or the bare array of label objects), or one series per line, `name{label="value",...}`, with
// blank lines and lines starting with '#' skipped. Throws std::invalid_argument naming the line.
std::vector<SeriesLine> parseSeriesFile(std::string_view text);

// A single PromQL vector selector, `name{label op "value",...}` or `{...}`.
struct SeriesSelector {
  std::string name;  // "" = any
  std::vector<promql::LabelMatcher> matchers;
};

// Parses a seriesQuery that is a single vector selector; throws std::invalid_argument for
// anything else (functions, `or`, several selectors).
SeriesSelector parseSeriesSelector(std::string_view text);

// True when `series` is selected by `selector`, with Prometheus semantics: a missing label
// is "", regexes are fully anchored.
bool selectorMatches(const SeriesSelector& selector, const SeriesLine& series);

// What discovery found for a rule set, with the raw series kept for diagnosis.
struct DiscoveryRun {
  std::shared_ptr<const discovery::RuleSet> rule_set;
  std::map<std::string, SeriesCatalog> series;  // per seriesQuery
  std::map<std::string, std::string> errors;    // per seriesQuery that failed
  std::vector<std::shared_ptr<const discovery::RuleFindings>> findings;  // per rule
  std::shared_ptr<const discovery::RegistrySnapshot> snapshot;
};

// One /api/v1/series call per distinct seriesQuery (as the relister does), looking back
// `max_age`; a failing call is recorded in `errors` and its rules find nothing.
std::map<std::string, SeriesCatalog> fetchSeries(prometheus::PrometheusApi& prometheus,
                                                 const discovery::RuleSet& rule_set,
                                                 std::chrono::milliseconds max_age,
                                                 std::map<std::string, std::string>* errors);

// Per seriesQuery, the series of `lines` it selects. A seriesQuery that is not a single
// selector selects every line, with a note in `warnings`.
std::map<std::string, SeriesCatalog> selectSeries(const discovery::RuleSet& rule_set,
                                                  const std::vector<SeriesLine>& lines,
                                                  std::vector<std::string>* warnings);

// Folds the series into per-rule findings and a registry snapshot, as a relist does.
DiscoveryRun discover(std::shared_ptr<const discovery::RuleSet> rule_set,
                      std::map<std::string, SeriesCatalog> series,
                      std::map<std::string, std::string> errors);

// Compiles the config's rules against the built-in REST mapping. Throws config::ConfigError.
std::shared_ptr<const discovery::RuleSet> compileOffline(const config::AdapterConfig& config,
                                                         std::vector<std::string>* warnings);

// The words of a subcommand as (flag name, value) pairs: `--name=value`, `--name value`,
// `-name=value`; names in `switches` take no value ("true"). Positional words come back with an
// empty name. Throws app::FlagError.
std::vector<std::pair<std::string, std::string>> splitFlags(std::span<const std::string> args,
                                                            const std::set<std::string>& switches);

// Applies --prometheus-url, --prometheus-token-file, --prometheus-header, --prometheus-ca-file;
// false when `name` is none of them. Throws app::FlagError for a malformed header.
bool applyPrometheusFlag(const std::string& name, const std::string& value,
                         prometheus::PrometheusClientOptions& options);

// `metrics-adapter check-config FILE [--series-file F | --prometheus-url URL]`; `args` are
// the words after "check-config". Returns the exit code: 0 valid, 1 invalid config or flags.
int runCheckConfig(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace metrics_adapter::app
