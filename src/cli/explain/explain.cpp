#include "cli/explain/explain.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <tuple>

#include "cli/check_config/check_config.h"
#include "cli/explain/explain_forecast.h"
#include "cli/explain/explain_resource.h"
#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/custom_metric_request.h"
#include "metrics_adapter/api/custom_metrics_handler.h"
#include "metrics_adapter/api/external_metrics_handler.h"
#include "metrics_adapter/app/backend_pool.h"
#include "metrics_adapter/app/flags.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/prometheus/prometheus_client.h"
#include "metrics_adapter/server/request_info.h"
#include "metrics_adapter/text/percent_encoding.h"

namespace metrics_adapter::cli {
namespace {

constexpr std::size_t kClosestNames = 5;
constexpr std::size_t kListedSeries = 5;
// What the router answers for a path no route matches.
const api::ApiError kNoRoute =
    api::ApiError::notFound("the server could not find the requested resource");

constexpr const char* kUsage =
    "usage: metrics-adapter explain --config FILE --prometheus-url URL --metric NAME\n"
    "         [--resource pods] [--namespace NS] [--name N | --selector S]\n"
    "         [--metric-selector S] [--external] [--version v1beta1|v1beta2]\n"
    "       metrics-adapter explain --config FILE --prometheus-url URL --resource-metrics\n"
    "         [--resource pods --namespace NS | --resource nodes] --name N\n"
    "         [--metrics-max-age 2m] [the server's --prometheus-* flags]\n";

// explain's own flags, writing into `options` (nullptr: only for the usage text).
std::map<std::string, app::ToolFlag> explainFlags(ExplainOptions* options) {
  return {
      {"config",
       {.help = "the rules file", .apply = app::storeText(options, &ExplainOptions::config_file)}},
      {"metric",
       {.help = "the metric name the HPA asks for",
        .apply = app::storeText(options, &ExplainOptions::metric)}},
      {"resource",
       {.help = "the objects' resource (default pods)",
        .apply = app::storeText(options, &ExplainOptions::resource)}},
      {"namespace",
       {.help = "the objects' namespace",
        .apply = app::storeText(options, &ExplainOptions::namespace_name)}},
      {"name",
       {.help = "one object's name (default: every object)",
        .apply = app::storeText(options, &ExplainOptions::name)}},
      {"selector",
       {.help = "labelSelector of the objects",
        .apply = app::storeText(options, &ExplainOptions::selector)}},
      {"metric-selector",
       {.help = "metricLabelSelector (external: labelSelector)",
        .apply = app::storeText(options, &ExplainOptions::metric_selector)}},
      {"version",
       {.help = "v1beta1 or v1beta2 (default)",
        .apply = app::storeText(options, &ExplainOptions::version)}},
      {"resource-metrics",
       {.boolean = true,
        .help = "a metrics.k8s.io request (kubectl top, HPA type Resource) of --name",
        .apply =
            [options](const std::string& value) {
              options->resource_metrics = app::parseBoolFlag("resource-metrics", value);
            }}},
      {"external",
       {.boolean = true,
        .help = "an external.metrics.k8s.io request",
        .apply =
            [options](const std::string& value) {
              options->external = app::parseBoolFlag("external", value);
            }}},
  };
}

std::string quote(const std::string& text) { return promql::quoteGoString(text); }

// The backend the rule's queries go to, as "backend: gpu (http://thanos:10902)".
void printBackend(std::ostream& out, const discovery::RegistrySnapshot& snapshot,
                  const std::string& name) {
  const prometheus::Backend* backend = snapshot.backend(name);
  out << "  backend: " << name << " (" << (backend ? backend->url : "not configured") << ")\n";
}

void printRule(std::ostream& out, const discovery::RegistrySnapshot& snapshot,
               const discovery::CompiledRule& rule) {
  const config::DiscoveryRule& source = rule.source;
  printBackend(out, snapshot, source.backend);
  out << "  seriesQuery: " << source.series_query << "\n";
  for (const auto& filter : source.series_filters) {
    out << "  seriesFilters: " << (filter.is ? "is " : "isNot ") << quote(filter.pattern) << "\n";
  }
  out << "  name: matches " << quote(source.name.matches.empty() ? ".*" : source.name.matches);
  if (!source.name.as.empty()) out << " as " << quote(source.name.as);
  out << "\n";
  if (!source.resources.overrides.empty()) {
    out << "  resources.overrides:";
    for (const auto& [label, ref] : source.resources.overrides) {
      out << " " << label << "->" << (ref.group.empty() ? "" : ref.group + "/") << ref.resource;
    }
    out << "\n";
  }
  if (!source.resources.template_text.empty()) {
    out << "  resources.template: " << source.resources.template_text << "\n";
  }
  out << "  metricsQuery: " << source.metrics_query << "\n";
}

// The shortest text that reads back as `value` ("37", "0.1", "NaN").
std::string formatValue(double value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return error == std::errc() ? std::string(buffer, end) : "?";
}

void printSamples(std::ostream& out, const api::QueryTrace& trace) {
  if (!trace.queried) {
    out << "Prometheus: not queried\n";
    return;
  }
  out << "Prometheus answered " << trace.result.samples.size() << " sample(s):\n";
  for (const auto& sample : trace.result.samples) {
    out << "  {";
    bool first = true;
    for (const auto& [label, value] : sample.labels) {
      out << (first ? "" : ", ") << label << "=" << quote(value);
      first = false;
    }
    out << "} " << formatValue(sample.value) << " @ " << api::formatTimestamp(sample.timestamp)
        << "\n";
  }
  for (const auto& warning : trace.result.warnings) out << "  warning: " << warning << "\n";
}

// Runs one handler call and prints its PromQL, the samples and the API answer; the exit code
// is 0 when the request would succeed, 2 when it would fail.
template <typename Handle>
int printOutcome(std::ostream& out, bool known_metric, Handle handle) {
  api::QueryTrace trace;
  try {
    api::Json answer = handle(&trace);
    if (!trace.promql.empty()) out << "PromQL: " << trace.promql << "\n";
    printSamples(out, trace);
    out << "API answer (200):\n" << answer.dump(2) << "\n";
    return 0;
  } catch (const api::ApiError& e) {
    if (!trace.promql.empty()) out << "PromQL: " << trace.promql << "\n";
    if (known_metric) printSamples(out, trace);
    out << "API answer (" << e.code() << " " << e.reason() << "):\n"
        << api::Json::parse(e.toStatusJson()).dump(2) << "\n";
    return 2;
  }
}

}  // namespace

HpaRequest hpaRequest(const std::string& prefix, const std::vector<std::string>& segments,
                      const std::vector<std::pair<std::string, std::string>>& query) {
  HpaRequest request{prefix, prefix};
  for (const auto& segment : segments) {
    request.target += "/" + text::percentEncode(segment);
    request.line += "/" + segment;
  }
  char separator = '?';
  for (const auto& [key, value] : query) {
    if (value.empty()) continue;
    for (std::string* out : {&request.target, &request.line}) {
      out->append(1, separator).append(key).append("=");
    }
    request.target += text::percentEncode(value);
    request.line += value;
    separator = '&';
  }
  return request;
}

namespace {

HpaRequest customRequest(const ExplainOptions& options, const kube::RestMapper& mapper) {
  std::vector<std::string> segments;
  const std::string name = options.name.empty() ? "*" : options.name;
  auto resource = mapper.parseGroupResource(options.resource);
  if (resource && resource->groupResource() == "namespaces") {
    // The namespace's own metric: /namespaces/<ns>/metrics/<metric> names the namespace.
    segments = {"namespaces", options.name.empty() ? options.namespace_name : options.name,
                "metrics", options.metric};
  } else if (!options.namespace_name.empty() && !(resource && !resource->namespaced)) {
    segments = {"namespaces", options.namespace_name, options.resource, name, options.metric};
  } else {
    segments = {options.resource, name, options.metric};
  }
  return hpaRequest(
      "/apis/custom.metrics.k8s.io/" + options.version, segments,
      {{"labelSelector", options.selector}, {"metricLabelSelector", options.metric_selector}});
}

}  // namespace

void explainMiss(std::ostream& out, const ExplainOptions& options, const DiscoveryRun& run,
                 const std::string& group_resource) {
  const auto kind =
      options.external ? discovery::RuleKind::kExternal : discovery::RuleKind::kCustom;
  MissFacts facts;
  std::vector<std::string> served_names;
  std::set<std::string> other_resources;
  if (options.external) {
    for (const auto& metric : run.snapshot->externalMetrics())
      served_names.push_back(metric.metric);
  } else {
    for (const auto& metric : run.snapshot->customMetrics()) {
      served_names.push_back(metric.metric);
      if (metric.metric == options.metric) other_resources.insert(metric.resource.groupResource());
    }
  }
  facts.other_resources.assign(other_resources.begin(), other_resources.end());

  std::set<std::string> queries_seen;
  std::map<std::string, bool> related;  // series named like the metric -> some rule took it
  for (const auto& rule : run.rule_set->rules) {
    if (rule->kind != kind) continue;
    auto catalog = run.series.find(rule->source.series_query);
    if (catalog == run.series.end()) continue;
    if (queries_seen.insert(rule->source.series_query).second) {
      facts.series_seen += catalog->second.size();
    }
    for (const auto& [series, labels] : catalog->second) {
      if (!seriesNamedLike(series, options.metric)) continue;
      auto name = rule->namer.metricName(series);
      related[series] = related[series] || (name && !name->empty());
    }
  }
  std::vector<std::string> rejected;
  for (const auto& [series, accepted] : related) {
    if (accepted) {
      ++facts.related_series_accepted;
    } else {
      ++facts.related_series_rejected;
      rejected.push_back(series);
    }
  }

  const std::string target = options.external ? "external metrics" : group_resource;
  out << "no rule serves " << options.metric << " for " << target << "\n";
  out << "reason: ";
  switch (classifyMiss(facts)) {
    case MissReason::kOtherResource: {
      out << "the metric exists, but not for " << group_resource << "; it exists for:";
      for (const auto& resource : facts.other_resources) out << " " << resource;
      out << "\n";
      for (const auto& metric : run.snapshot->customMetrics()) {
        if (metric.metric != options.metric) continue;
        out << "  " << metric.rule->id << " (series " << metric.series_name << ") maps "
            << metric.resource.groupResource() << " from label "
            << metric.rule->resources.labelForResource(metric.resource).value_or("?") << "\n";
      }
      out << "  the rule's resources must map a label of the series to " << group_resource
          << ", and the series must carry that label\n";
      break;
    }
    case MissReason::kNoSeries:
      out << "no series at all: no rule's seriesQuery returned a series seen in the last "
          << options.shared.relist.max_age.count() / 1000 << "s (metrics-max-age)\n";
      break;
    case MissReason::kFilteredOut:
      out << "series named like " << options.metric
          << " exist, but every rule's seriesFilters/name.matches reject them:";
      for (std::size_t i = 0; i < rejected.size() && i < kListedSeries; ++i) {
        out << " " << rejected[i];
      }
      out << "\n";
      break;
    case MissReason::kNoRuleNamesIt:
      out << "no rule turns any series into the name " << options.metric << " (naming mismatch)\n";
      break;
  }
  std::sort(served_names.begin(), served_names.end());
  served_names.erase(std::unique(served_names.begin(), served_names.end()), served_names.end());
  auto closest = closestNames(options.metric, served_names, kClosestNames);
  out << "closest metric names:";
  for (const auto& name : closest) out << " " << name;
  out << (closest.empty() ? " (none)\n" : "\n");

  out << "rules (" << (options.external ? "externalRules" : "rules") << "):\n";
  for (std::size_t i = 0; i < run.rule_set->rules.size(); ++i) {
    const auto& rule = *run.rule_set->rules[i];
    if (rule.kind != kind) continue;
    out << "  " << rule.id << ": seriesQuery " << rule.source.series_query << ", name.matches "
        << quote(rule.source.name.matches.empty() ? ".*" : rule.source.name.matches);
    if (!rule.source.name.as.empty()) out << " as " << quote(rule.source.name.as);
    if (auto error = run.errors.find({rule.source.backend, rule.source.series_query});
        error != run.errors.end()) {
      out << ": the series query failed: " << error->second << "\n";
      continue;
    }
    const auto& findings = run.findings[i];
    const std::size_t seen = findings ? findings->series_seen : 0;
    out << ": " << seen << " series, " << (findings ? findings->metrics.size() : 0)
        << " metric names";
    if (seen == 0) out << " (no series within metrics-max-age)";
    out << "\n";
  }
}

namespace {

int explainCustom(std::ostream& out, const ExplainOptions& options, const DiscoveryRun& run) {
  const HpaRequest target = customRequest(options, run.snapshot->mapper());
  if (!options.selector.empty()) {
    out << "note: --selector needs the Kubernetes API to list the selected objects; explain has "
           "none, so it evaluates the request for every object in scope\n";
  }
  out << "request: GET " << target.line << "\n";
  // Routed as the server routes it, so explain answers for the request the server would see.
  std::optional<api::CustomMetricRequest> routed;
  try {
    routed = api::parseCustomMetricRequest(server::parseRequestInfo("GET", target.target));
    if (!routed) throw kNoRoute;
  } catch (const server::InvalidRequestTarget& e) {
    return printOutcome(out, false, [&](api::QueryTrace*) -> api::Json {
      throw api::ApiError::badRequest(e.what());
    });
  } catch (const api::ApiError& e) {
    return printOutcome(out, false, [&](api::QueryTrace*) -> api::Json { throw e; });
  }
  api::CustomMetricRequest request = std::move(*routed);
  request.label_selector.clear();  // no object lister here (see the note above)
  auto resource = run.snapshot->mapper().parseGroupResource(request.resource);
  const std::string group_resource = resource ? resource->groupResource() : request.resource;
  const discovery::CustomMetric* metric =
      resource ? run.snapshot->findCustom(group_resource, options.metric) : nullptr;
  if (metric) {
    out << "rule: " << metric->rule->id << " serves " << group_resource << "/" << options.metric
        << " from series " << metric->series_name << "\n";
    printRule(out, *run.snapshot, *metric->rule);
    if (resource) {
      out << "  label for " << group_resource << ": "
          << metric->rule->resources.labelForResource(*resource).value_or("(none)") << "\n";
    }
  } else if (resource) {
    explainMiss(out, options, run, group_resource);
  }

  auto snapshot = run.snapshot;
  api::CustomMetricsHandler handler(
      [snapshot] { return snapshot; }, nullptr,
      api::CustomMetricsOptions{.query_timeout = options.shared.query_timeout});
  return printOutcome(out, metric != nullptr,
                      [&](api::QueryTrace* trace) { return handler.handle(request, trace); });
}

int explainExternal(std::ostream& out, const ExplainOptions& options, const DiscoveryRun& run) {
  const std::string& selector =
      options.metric_selector.empty() ? options.selector : options.metric_selector;
  const HpaRequest target = hpaRequest("/apis/external.metrics.k8s.io/v1beta1",
                                       {"namespaces", options.namespace_name, options.metric},
                                       {{"labelSelector", selector}});
  out << "request: GET " << target.line << "\n";
  // Routed as the server routes it, so explain answers for the request the server would see.
  std::optional<api::ExternalMetricRequest> routed;
  try {
    routed = api::parseExternalMetricRequest(server::parseRequestInfo("GET", target.target));
  } catch (const server::InvalidRequestTarget& e) {
    return printOutcome(out, false, [&](api::QueryTrace*) -> api::Json {
      throw api::ApiError::badRequest(e.what());
    });
  }
  if (!routed)
    return printOutcome(out, false, [](api::QueryTrace*) -> api::Json { throw kNoRoute; });
  const api::ExternalMetricRequest& request = *routed;
  const discovery::ExternalMetric* metric = run.snapshot->findExternal(options.metric);
  if (metric) {
    out << "rule: " << metric->rule->id << " serves " << options.metric << " from series "
        << metric->series_name << "\n";
    printRule(out, *run.snapshot, *metric->rule);
  } else {
    explainMiss(out, options, run, "");
  }
  auto snapshot = run.snapshot;
  api::ExternalMetricsHandler handler(
      [snapshot] { return snapshot; },
      api::ExternalMetricsOptions{.query_timeout = options.shared.query_timeout});
  return printOutcome(out, metric != nullptr,
                      [&](api::QueryTrace* trace) { return handler.handle(request, trace); });
}

}  // namespace

ExplainOptions parseExplainFlags(std::span<const std::string> args) {
  ExplainOptions options;
  const std::vector<std::string> read =
      app::parseToolFlags(args, explainFlags(&options), options.shared, nullptr);
  if (options.config_file.empty()) throw app::FlagError("--config is required");
  if (std::find(read.begin(), read.end(), "prometheus-url") == read.end()) {
    throw app::FlagError("--prometheus-url is required");
  }
  if (options.resource_metrics) {
    if (options.name.empty())
      throw app::FlagError("--resource-metrics explains one object: give --name");
    if (options.resource != "nodes" && options.namespace_name.empty()) {
      throw app::FlagError("--resource-metrics for a pod needs --namespace");
    }
    return options;
  }
  if (options.metric.empty()) throw app::FlagError("--metric is required");
  if (options.version != "v1beta1" && options.version != "v1beta2") {
    throw app::FlagError("--version: must be v1beta1 or v1beta2");
  }
  if (!options.name.empty() && !options.selector.empty()) {
    throw app::FlagError("give --name or --selector, not both");
  }
  return options;
}

MissReason classifyMiss(const MissFacts& facts) {
  if (!facts.other_resources.empty()) return MissReason::kOtherResource;
  if (facts.series_seen == 0) return MissReason::kNoSeries;
  if (facts.related_series_rejected > 0 && facts.related_series_accepted == 0) {
    return MissReason::kFilteredOut;
  }
  return MissReason::kNoRuleNamesIt;
}

bool seriesNamedLike(std::string_view series_name, std::string_view metric) {
  return !metric.empty() && series_name.find(metric) != std::string_view::npos;
}

std::vector<std::string> closestNames(std::string_view metric,
                                      const std::vector<std::string>& names, std::size_t limit) {
  std::vector<std::tuple<bool, std::size_t, std::string>> scored;
  for (const auto& name : names) {
    const bool contains = !metric.empty() && (name.find(metric) != std::string::npos ||
                                              metric.find(name) != std::string_view::npos);
    scored.emplace_back(!contains, discovery::editDistance(metric, name), name);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> result;
  for (std::size_t i = 0; i < scored.size() && i < limit; ++i) {
    result.push_back(std::get<2>(scored[i]));
  }
  return result;
}

std::string explainUsage() { return kUsage + app::toolFlagsUsage(explainFlags(nullptr)); }

int runExplain(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  ExplainOptions options;
  try {
    options = parseExplainFlags(args);
  } catch (const app::FlagError& e) {
    err << "explain: " << e.what() << "\n" << explainUsage();
    return 1;
  }
  const std::optional<OfflineRules> loaded = loadOffline(options.config_file, err);
  if (!loaded) return 1;
  std::shared_ptr<const prometheus::BackendSet> backends;
  try {
    backends = app::toolBackends(loaded->config, options.shared.prometheus);
  } catch (const std::invalid_argument& e) {
    err << "explain: " << e.what() << "\n";
    return 1;
  } catch (const config::ConfigError& e) {
    err << "invalid configuration: " << e.what() << "\n";
    return 1;
  }
  // Every rule names a backend the config defines (the loader checks), so find() succeeds.
  auto backend_named = [&backends](const std::string& name) -> const prometheus::Backend& {
    return *backends->find(name);
  };
  out << "config: " << options.config_file << " (" << loaded->config.rules.size() << " rules, "
      << loaded->config.external_rules.size() << " externalRules, "
      << loaded->config.forecast_rules.size() << " forecastRules)\n";
  for (const auto& warning : loaded->warnings) out << "warning: " << warning << "\n";
  if (options.resource_metrics) {
    const auto* rules = loaded->rule_set->resource_rules.get();
    const int code = explainResourceMetrics(
        out, options, rules,
        backend_named(rules ? rules->backend : std::string(config::kDefaultBackend)));
    out << (code == 0 ? "result: the request would succeed\n" : "result: the request would fail\n");
    return code;
  }
  // A forecastRule's name wins over an external metric of that name, as in the server.
  for (const auto& rule : loaded->config.forecast_rules) {
    if (options.external && rule.name == options.metric) {
      const int code = explainForecast(out, options, rule, backend_named(rule.backend));
      out << (code == 0 ? "result: the request would succeed\n"
                        : "result: the request would fail\n");
      return code;
    }
  }

  const DiscoveryRun run =
      relistOnce(withBackends(loaded->rule_set, backends), options.shared.relist);
  out << "relist: " << run.series.size() + run.errors.size() << " series queries";
  if (!run.errors.empty()) out << ", " << run.errors.size() << " failed";
  out << "; serving " << run.snapshot->customMetrics().size() << " custom and "
      << run.snapshot->externalMetrics().size() << " external metrics\n";
  for (const auto& [key, error] : run.errors) {
    const auto& [backend, query] = key;
    out << "  seriesQuery " << query;
    if (backend != config::kDefaultBackend) out << " (backend " << backend << ")";
    out << " failed: " << error << "\n";
  }
  const int code =
      options.external ? explainExternal(out, options, run) : explainCustom(out, options, run);
  out << (code == 0 ? "result: the request would succeed\n" : "result: the request would fail\n");
  return code;
}

}  // namespace metrics_adapter::cli
