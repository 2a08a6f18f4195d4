#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::config {

// A config problem. what() always reads "<file>: <yaml path>: <problem>", e.g.
// "config.yaml: rules[3].name.matches: invalid regex \"(\": missing ): ( (line 14)"; the
// " (line N)" suffix is there when the YAML line is known.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The name of the backend the --prometheus-* flags define, which rules use unless they name
// another.
inline constexpr std::string_view kDefaultBackend = "default";

struct GroupResourceRef {
  std::string group;     // "" = core (or guessed by the REST mapper)
  std::string resource;  // singular or plural, as written
};

struct ResourceMapping {
  std::string template_text;                          // resources.template ("" = none)
  std::map<std::string, GroupResourceRef> overrides;  // label -> group-resource
  bool namespaced = true;                             // externalRules only
};

struct SeriesFilter {
  bool is = true;       // true: `is`, false: `isNot`
  std::string pattern;  // RE2 syntax, validated at load
};

struct NameMapping {
  std::string matches;  // "" = whole series name
  std::string as;       // "" = default ($0 / $1), resolved by the naming module
};

// One entry of `rules` or `externalRules` (prometheus-adapter's DiscoveryRule).
struct DiscoveryRule {
  std::string series_query;
  std::vector<SeriesFilter> series_filters;
  ResourceMapping resources;
  NameMapping name;
  std::string metrics_query;
  std::string backend{kDefaultBackend};  // a name in `backends` (docs/backends.md)
};

struct ResourceRule {
  std::string container_query;
  std::string node_query;
  ResourceMapping resources;
  std::string container_label;
};

// resourceRules: parsed and validated so upstream configs load; metrics.k8s.io is not served.
struct ResourceRules {
  ResourceRule cpu;
  ResourceRule memory;
  std::string window;  // Prometheus duration, e.g. "1m"
  std::string backend{kDefaultBackend};
};

// One entry of `forecastRules` (ours; docs/forecasting.md): the forecast of `query`, served as
// the external metric `name`.
struct ForecastRule {
  std::string name;   // the external metric name
  std::string query;  // PromQL of the demand; each series it returns is forecast separately
  std::vector<std::string> namespaces;  // where it is served; empty = every namespace
  std::chrono::seconds history{std::chrono::hours(24 * 7)};
  std::chrono::seconds step{60};
  std::chrono::seconds horizon{600};
  std::chrono::seconds refresh_interval{60};
  double quantile = 0.5;  // safety margin: the quantile of the model's recent errors added
  std::string backend{kDefaultBackend};

  bool operator==(const ForecastRule&) const = default;
};

// One entry of `backends` (ours; docs/backends.md): a Prometheus-compatible query API that rules
// name with `backend:`. Empty fields take the value of the --prometheus-* flag of the same job.
// A `default` entry replaces what the flags define.
struct Backend {
  std::string name;  // the key in `backends`
  std::string url;   // http(s)://host[:port][/path prefix], e.g. .../select/0/prometheus
  std::string verb;  // GET or POST
  // In file order; a list value sends the name once per item, as repeated header lines.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string ca_file;
  std::string client_cert_file;
  std::string client_key_file;
  std::string token_file;
  std::string basic_auth_username;
  std::string basic_auth_password_file;
  std::optional<std::chrono::milliseconds> timeout;  // deadline of one query
  // An optional backend is not waited for by readiness (docs/backends.md "Readiness").
  bool optional = false;

  bool operator==(const Backend&) const = default;
};

struct AdapterConfig {
  std::string source;  // file name used in error messages
  std::vector<DiscoveryRule> rules;
  std::vector<DiscoveryRule> external_rules;
  std::optional<ResourceRules> resource_rules;
  std::vector<ForecastRule> forecast_rules;
  std::vector<Backend> backends;  // in file order; names are unique
  // 1-based YAML line of each value, keyed by YAML path ("rules[1].metricsQuery"), so later
  // stages can point at the line too. Empty for configs built in code.
  std::map<std::string, int, std::less<>> lines;
};

// "<source>: <path>: <problem> (line N)" with the line of `path` from `config.lines` when known;
// the form every ConfigError uses. An empty `path` gives "<source>: <problem>".
std::string formatConfigError(const AdapterConfig& config, std::string_view path,
                              std::string_view problem);

// Parses YAML in strict mode (unknown keys, duplicate keys, wrong types are errors) and checks
// what can be checked without templates: regexes compile (RE2), exactly one of is/isNot,
// name.as present when matches has two or more capture groups. Throws ConfigError.
AdapterConfig parseConfig(std::string_view yaml_text, const std::string& source_name);

// The length of a Prometheus duration ("3m", "1h30m", "0"), or nullopt when it is not one.
std::optional<std::chrono::milliseconds> prometheusDuration(std::string_view text);

// Reads and parses `path`; unreadable file -> ConfigError naming it.
AdapterConfig loadConfigFile(const std::string& path);

}  // namespace metrics_adapter::config
