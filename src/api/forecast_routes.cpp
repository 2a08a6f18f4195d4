#include "metrics_adapter/api/forecast_routes.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "metrics_adapter/api/custom_metrics_handler.h"
#include "metrics_adapter/api/discovery_documents.h"
#include "metrics_adapter/forecast/observer_page.h"
#include "metrics_adapter/forecast/replay.h"
#include "metrics_adapter/promql/label_selector.h"
#include "metrics_adapter/promql/quantity.h"
#include "metrics_adapter/text/number.h"

namespace metrics_adapter::api {
namespace {

bool servedIn(const config::ForecastRule& rule, const std::string& namespace_name) {
  return rule.namespaces.empty() || std::find(rule.namespaces.begin(), rule.namespaces.end(),
                                              namespace_name) != rule.namespaces.end();
}

ApiError notServedIn(const std::string& name, const std::string& namespace_name) {
  return ApiError::notFound("the forecast " + name + " is not served in namespace " +
                            namespace_name + " (see its forecastRule's namespaces)");
}

// 503 unless the rule has a forecast to serve.
void requireFetched(const std::string& name, const forecast::RuleStatus& status) {
  if (status.fetched) return;
  std::string message = "the forecast " + name + " is not ready: its history has not been fetched";
  if (!status.last_error.empty()) message += " (" + status.last_error + ")";
  throw ApiError::unavailable(message);
}

Json seriesLabels(const std::map<std::string, std::string>& labels) {
  Json object = Json::object();
  for (const auto& [name, value] : labels) {
    if (name != "__name__") object[name] = value;
  }
  return object;
}

// A positive number of a query parameter, or nullopt when absent. Throws 400.
std::optional<double> positiveNumber(const server::RequestInfo& info, const char* name) {
  if (!info.has(name)) return std::nullopt;
  const std::optional<double> value = text::parseFiniteNumber(info.get(name));
  if (!value || *value <= 0) {
    throw ApiError::badRequest(std::string("parameter ") + name + " must be a positive number");
  }
  return value;
}

}  // namespace

std::optional<Json> forecastMetricValueList(const forecast::ForecastService& forecasts,
                                            const ExternalMetricRequest& request,
                                            forecast::Clock::time_point now) {
  const forecast::RuleStatus status = forecasts.status(request.metric);
  if (!status.known) return std::nullopt;
  auto current = forecasts.forecasts(request.metric);
  // A rule without forecasts yet has only its status to go by; its namespaces come from there.
  if (current && !servedIn(current->rule, request.namespace_name)) {
    throw notServedIn(request.metric, request.namespace_name);
  }
  promql::LabelSelector selector;
  try {
    selector = promql::parseLabelSelector(request.label_selector);
  } catch (const promql::SelectorError& e) {
    throw ApiError::badRequest("invalid labelSelector \"" + request.label_selector +
                               "\": " + e.what());
  }
  requireFetched(request.metric, status);
  if (!current) requireFetched(request.metric, forecast::RuleStatus{});
  if (!status.last_error.empty() &&
      now - status.last_success > forecast::kStaleAfterIntervals * current->rule.refresh_interval) {
    throw ApiError::unavailable(
        "the forecast " + request.metric + " is stale: refreshes have failed since " +
        formatTimestamp(
            std::chrono::duration<double>(status.last_success.time_since_epoch()).count()) +
        " (" + status.last_error + ")");
  }

  // The value covers [now, now + horizon] (from the grid step at or before now), and its
  // timestamp is the time of this answer, as for other metrics. Each series' value now comes from
  // the rule's last fresh read: the latest value a normal rule would answer, which the forecast
  // is raised to.
  const forecast::ServedWindow window = forecast::servedWindow(*current, now);
  const std::shared_ptr<const forecast::FreshValues> fresh = forecasts.fresh(request.metric);
  const std::string timestamp =
      formatTimestamp(std::chrono::duration<double>(now.time_since_epoch()).count());
  Json items = Json::array();
  const auto add = [&](const std::map<std::string, std::string>& labels, double value) {
    if (!promql::matches(selector, labels)) return;
    auto quantity = promql::sampleToQuantity(value);
    if (!quantity) return;
    items.push_back({{"metricName", request.metric},
                     {"metricLabels", seriesLabels(labels)},
                     {"timestamp", timestamp},
                     {"value", *quantity}});
  };
  for (const forecast::SeriesForecast& series : current->series) {
    add(series.labels, forecast::servedValue(
                           series, window, forecast::freshValue(fresh.get(), series.labels, now)));
  }
  // A series that appeared since the last refresh has no history yet: its latest value, as a
  // normal rule serves it, until the next refresh forecasts it.
  if (fresh && fresh->usableAt(now)) {
    for (const auto& [labels, value] : fresh->values) {
      if (forecast::findSeries(current->series, labels) == nullptr) add(labels, value);
    }
  }
  return Json{{"kind", "ExternalMetricValueList"},
              {"apiVersion", std::string(kExternalMetricsGroup) + "/" + kExternalMetricsVersion},
              {"metadata", Json::object()},
              {"items", std::move(items)}};
}

server::HttpResponse observerPage(const forecast::ForecastService& forecasts,
                                  const server::RequestInfo& info) {
  const std::string& name = info.name;
  const forecast::RuleStatus status = forecasts.status(name);
  if (!status.known) {
    throw ApiError::notFound("no forecastRule is named \"" + name + "\"");
  }
  std::optional<forecast::RuleHistory> history = forecasts.history(name);
  if (history && !servedIn(history->rule, info.namespace_name)) {
    throw notServedIn(name, info.namespace_name);
  }
  const std::optional<double> days = positiveNumber(info, "days");
  const std::optional<double> target = positiveNumber(info, "target");
  const std::optional<double> threshold = positiveNumber(info, "threshold");
  if (days && (*days != std::floor(*days) || *days > 35)) {
    throw ApiError::badRequest("parameter days must be a whole number of days from 1 to 35");
  }
  requireFetched(name, status);
  if (!history) requireFetched(name, forecast::RuleStatus{});

  const auto replay_steps = static_cast<std::size_t>(
      std::chrono::hours(24) * static_cast<int>(days.value_or(1)) / history->rule.step);
  forecast::ObserverPageData data = forecast::replayHistory(
      history->rule, history->history, replay_steps, threshold ? threshold : target, target);
  // What a read now serves as each series' latest value, and how old it is.
  const auto current = forecasts.forecasts(name);
  const auto fresh = forecasts.fresh(name);
  const auto now = forecast::Clock::now();
  for (forecast::ObservedSeries& observed : data.series) {
    const forecast::SeriesForecast* found =
        current ? forecast::findSeries(current->series, observed.labels) : nullptr;
    if (found) observed.freshness = forecast::latestValueText(*current, *found, fresh.get(), now);
  }
  server::HttpResponse response;
  response.content_type = "text/html; charset=utf-8";
  response.body = forecast::renderObserverPage(data);
  return response;
}

}  // namespace metrics_adapter::api
