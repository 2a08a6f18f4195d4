#include "metrics_adapter/api/external_metrics_handler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/api/discovery_documents.h"
#include "metrics_adapter/api/forecast_routes.h"
#include "metrics_adapter/api/query_builder.h"
#include "metrics_adapter/promql/label_selector.h"
#include "metrics_adapter/promql/quantity.h"

namespace metrics_adapter::api {
namespace {

std::string notFoundMessage(const discovery::RegistrySnapshot& snapshot,
                            const std::string& metric) {
  return withSimilarNames("the server could not find the metric " + metric,
                          snapshot.similarExternalNames(metric, 3));
}

Json metricLabels(const std::map<std::string, std::string>& labels) {
  Json object = Json::object();  // never null: upstream's nil map decodes badly in some clients
  for (const auto& [name, value] : labels) object[name] = value;
  return object;
}

Json externalMetricValueList(Json items) {
  return Json{{"kind", "ExternalMetricValueList"},
              {"apiVersion", std::string(kExternalMetricsGroup) + "/" + kExternalMetricsVersion},
              {"metadata", Json::object()},
              {"items", std::move(items)}};
}

}  // namespace

std::optional<ExternalMetricRequest> parseExternalMetricRequest(const server::RequestInfo& info) {
  if (!info.resource_request || info.verb != "list" || info.namespace_name.empty() ||
      info.resource_parts.size() != 1 || info.api_version != kExternalMetricsVersion) {
    return std::nullopt;
  }
  return ExternalMetricRequest{.namespace_name = info.namespace_name,
                               .metric = info.resource,
                               .label_selector = info.get("labelSelector")};
}

ExternalMetricsHandler::ExternalMetricsHandler(
    SnapshotSource snapshots, ExternalMetricsOptions options,
    std::shared_ptr<const forecast::ForecastService> forecasts)
    : snapshots_(std::move(snapshots)), options_(options), forecasts_(std::move(forecasts)) {}

Json ExternalMetricsHandler::handle(const ExternalMetricRequest& request, QueryTrace* trace) const {
  if (forecasts_) {
    if (trace) trace->rule_id = "forecastRules[" + request.metric + "]";
    auto forecast = forecastMetricValueList(*forecasts_, request, prometheus::Clock::now());
    if (forecast) return *std::move(forecast);
    if (trace) trace->rule_id.clear();
  }
  auto snapshot = snapshots_();
  const discovery::ExternalMetric* metric = snapshot->findExternal(request.metric);
  if (!metric) throw ApiError::notFound(notFoundMessage(*snapshot, request.metric));

  const prometheus::Backend& backend = backendOf(*snapshot, metric->rule->source.backend);
  if (trace) {
    trace->rule_id = metric->rule->id;
    trace->series = metric->series_name;
    trace->backend = backend.name;
  }
  ExternalQuerySpec spec;
  spec.rule = metric->rule.get();
  spec.series = metric->series_name;
  spec.namespace_name = request.namespace_name;
  try {
    spec.selector = promql::parseLabelSelector(request.label_selector);
  } catch (const promql::SelectorError& e) {
    throw ApiError::badRequest("invalid labelSelector \"" + request.label_selector +
                               "\": " + e.what());
  }
  const std::string promql = buildExternalQuery(spec, snapshot->mapper());
  SPDLOG_DEBUG("external metric {} in {}: {}", request.metric, request.namespace_name, promql);
  if (trace) trace->promql = promql;

  std::shared_ptr<const prometheus::QueryResult> answer;
  try {
    answer = backend.api->sharedQuery(promql, prometheus::Clock::now(),
                                      backend.queryTimeout(options_.query_timeout));
  } catch (const prometheus::PrometheusError& e) {
    throw prometheusFailure(e, backend.name, "external metric " + request.metric);
  }
  const prometheus::QueryResult& result = *answer;
  if (trace) {
    trace->queried = true;
    trace->result = result;
  }
  if (result.type != prometheus::QueryResult::Type::kVector &&
      result.type != prometheus::QueryResult::Type::kScalar) {
    throw ApiError::internal("metricsQuery of " + metric->rule->id +
                             " must return an instant vector or a scalar; Prometheus returned " +
                             prometheus::describeResultType(result.type));
  }

  // Sorted by labels so answers are deterministic; the HPA sums the items, order is free.
  std::vector<const prometheus::Sample*> samples;
  samples.reserve(result.samples.size());
  for (const auto& sample : result.samples) samples.push_back(&sample);
  std::stable_sort(samples.begin(), samples.end(),
                   [](const auto* a, const auto* b) { return a->labels < b->labels; });

  Json items = Json::array();
  std::size_t skipped = 0;
  for (const prometheus::Sample* sample : samples) {
    auto quantity = promql::sampleToQuantity(sample->value);
    if (!quantity) {
      ++skipped;
      continue;
    }
    items.push_back({{"metricName", request.metric},
                     {"metricLabels", metricLabels(sample->labels)},
                     {"timestamp", formatTimestamp(sample->timestamp)},
                     {"value", *quantity}});
  }
  if (skipped > 0) {
    SPDLOG_DEBUG("external metric {}: skipped {} NaN/Inf/blank samples", request.metric, skipped);
  }
  return externalMetricValueList(std::move(items));
}

}  // namespace metrics_adapter::api
