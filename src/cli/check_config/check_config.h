#pragma once

#include <chrono>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/app/flags.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/registry.h"
#include "metrics_adapter/discovery/relister.h"
#include "metrics_adapter/prometheus/prometheus_api.h"
#include "metrics_adapter/prometheus/prometheus_client.h"
#include "metrics_adapter/promql/label_matchers.h"

namespace metrics_adapter::cli {

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

// Stands in for Prometheus with the series of a series file, so the server's relist runs on
// them: series() answers the lines a seriesQuery selects (selectorMatches). A seriesQuery that
// is not a single selector selects every line and is listed in unselectable(). query() and
// queryRange() fail (kUnreachable): a file has no samples. Thread-safe.
class SeriesFilePrometheus : public prometheus::PrometheusApi {
 public:
  explicit SeriesFilePrometheus(std::vector<SeriesLine> lines);

  prometheus::QueryResult query(const std::string& promql, prometheus::Clock::time_point at,
                                std::chrono::milliseconds timeout) override;
  prometheus::RangeResult queryRange(const std::string& promql, prometheus::Clock::time_point start,
                                     prometheus::Clock::time_point end,
                                     std::chrono::milliseconds step,
                                     std::chrono::milliseconds timeout) override;
  void series(const std::string& selector, prometheus::Clock::time_point start,
              std::chrono::milliseconds timeout, const prometheus::SeriesVisitor& visitor) override;

  // seriesQuery -> why it is not a single selector, for those series() was asked.
  std::map<std::string, std::string> unselectable() const;

 private:
  const std::vector<SeriesLine> lines_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> unselectable_;
};

// What one relist of the server's discovery::Relister found for a rule set, with the series
// each seriesQuery returned kept for diagnosis.
struct DiscoveryRun {
  std::shared_ptr<const discovery::RuleSet> rule_set;
  std::map<std::string, SeriesCatalog> series;  // per seriesQuery that succeeded
  // Per (backend, seriesQuery) that failed.
  std::map<std::pair<std::string, std::string>, std::string> errors;
  std::vector<std::shared_ptr<const discovery::RuleFindings>> findings;  // per rule
  std::shared_ptr<const discovery::RegistrySnapshot> snapshot;
};

// Runs one relist of `rule_set` against its backends with the server's discovery::Relister
// (one /api/v1/series call per distinct seriesQuery and backend, looking back options.max_age,
// within options.series_timeout). A failing call is recorded in `errors` and its rules find
// nothing.
DiscoveryRun relistOnce(std::shared_ptr<const discovery::RuleSet> rule_set,
                        const discovery::RelistOptions& options);

// `rule_set` served by `backends` (the tools compile first, then connect).
std::shared_ptr<const discovery::RuleSet> withBackends(
    const std::shared_ptr<const discovery::RuleSet>& rule_set,
    std::shared_ptr<const prometheus::BackendSet> backends);

// Compiles the config's rules against the built-in REST mapping. Throws config::ConfigError.
std::shared_ptr<const discovery::RuleSet> compileOffline(const config::AdapterConfig& config,
                                                         std::vector<std::string>* warnings);

// A config file loaded and compiled as compileOffline does.
struct OfflineRules {
  config::AdapterConfig config;
  std::shared_ptr<const discovery::RuleSet> rule_set;
  std::vector<std::string> warnings;
};

// Loads and compiles `config_file`; nullopt after printing "invalid configuration: ..." to
// `err`.
std::optional<OfflineRules> loadOffline(const std::string& config_file, std::ostream& err);

// The words of `check-config` as the command reads them (the config FILE, --series-file, and
// the server's Prometheus client flags and --metrics-max-age). Throws app::FlagError.
struct CheckConfigOptions {
  std::string config_file;
  std::string series_file;
  bool use_prometheus = false;  // --prometheus-url given
  app::AdapterOptions shared;   // what parseToolFlags reads: prometheus, query_timeout, relist
};
CheckConfigOptions parseCheckConfigFlags(std::span<const std::string> args);

// `metrics-adapter check-config FILE [--series-file F | --prometheus-url URL]`; `args` are
// the words after "check-config". Returns the exit code: 0 valid, 1 invalid config or flags.
int runCheckConfig(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// check-config's usage and flags, for --help and for an error.
std::string checkConfigUsage();

}  // namespace metrics_adapter::cli
