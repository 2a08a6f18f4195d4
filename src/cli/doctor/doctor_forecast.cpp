#include "cli/doctor/doctor_forecast.h"

#include <limits>
#include <memory>
#include <vector>

#include "metrics_adapter/api/forecast_routes.h"
#include "metrics_adapter/forecast/forecast_service.h"

namespace metrics_adapter::cli {

const config::ForecastRule* forecastRuleNamed(const DoctorContext& context,
                                              const std::string& metric) {
  if (!context.forecast_rules) return nullptr;
  for (const auto& rule : *context.forecast_rules) {
    if (rule.name == metric) return &rule;
  }
  return nullptr;
}

api::Json answerForecast(const config::ForecastRule& rule,
                         const api::ExternalMetricRequest& request, const DoctorContext& context) {
  const prometheus::Backend* backend = context.run->snapshot->backend(rule.backend);
  if (!backend) throw api::ApiError::internal("backend \"" + rule.backend + "\" is not configured");
  auto backends = std::make_shared<const prometheus::BackendSet>(
      std::vector<std::shared_ptr<const prometheus::Backend>>{
          std::make_shared<const prometheus::Backend>(*backend)});
  forecast::ForecastService service(
      [backends] { return backends; },
      // The doctor runs once: every series' method is selected now, none left pending.
      forecast::ForecastServiceOptions{
          .query_timeout = context.query_timeout,
          .first_selections_per_refresh = std::numeric_limits<std::size_t>::max()});
  const forecast::Clock::time_point now = forecast::Clock::now();
  service.refresh({rule}, now);
  const forecast::RuleStatus status = service.status(rule.name);
  if (!status.last_error.empty()) {
    throw api::ApiError::unavailable(
        "the forecast of " + rule.name +
        " is not ready: its history could not be read: " + status.last_error);
  }
  auto answer = api::forecastMetricValueList(service, request, now);
  if (!answer) throw api::ApiError::notFound("no forecastRule named " + rule.name);
  return *answer;
}

}  // namespace metrics_adapter::cli
