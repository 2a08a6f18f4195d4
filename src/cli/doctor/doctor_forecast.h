#pragma once

#include <string>

#include "cli/doctor/doctor_diagnosis.h"
#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/external_metrics_handler.h"
#include "metrics_adapter/config/config.h"

namespace metrics_adapter::cli {

// The forecastRule named `metric` in the context's config, or null: a forecastRule's name wins
// over an externalRules metric of that name, as in the server.
const config::ForecastRule* forecastRuleNamed(const DoctorContext& context,
                                              const std::string& metric);

// The ExternalMetricValueList the server answers `request` with from `rule`'s forecasts
// (api::forecastMetricValueList after one refresh of the server's forecast::ForecastService on
// `rule`'s backend, every series' method selected now). Throws api::ApiError as the server does:
// 404 outside the rule's namespaces, 400 for a bad selector, 503 when the history cannot be read.
api::Json answerForecast(const config::ForecastRule& rule,
                         const api::ExternalMetricRequest& request, const DoctorContext& context);

}  // namespace metrics_adapter::cli
