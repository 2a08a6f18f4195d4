#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "metrics_adapter/net/text.h"
#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::prometheus {

// Deeper than any Prometheus answer nests: deeper input is rejected, so hostile input cannot
// exhaust the stack.
inline constexpr std::size_t kMaxJsonDepth = 64;

// The kBadResponse reason for an answer nested deeper than kMaxJsonDepth.
std::string tooDeepAnswerText();

// Parses a bounded JSON text; nesting deeper than any Prometheus answer is rejected so hostile
// input cannot exhaust the stack. Throws PrometheusError(kBadResponse).
nlohmann::json parseJsonAnswer(std::string_view body);

// A sample value as Prometheus writes it ("1.5", "NaN", "+Inf", "-Inf", "1e308"): strtod
// semantics in the C locale, the whole text must be consumed. nullopt when it is not a number.
std::optional<double> parseSampleValue(std::string_view text);

// "<errorType>: <error>" of a {"status":"error"} document, as one sanitised line.
std::string apiErrorText(const nlohmann::json& document);

// The error for a non-2xx answer: kApiError with Prometheus's error text when the body is a
// Prometheus error document, otherwise kHttpStatus naming the status and the start of the body.
PrometheusError errorForHttpStatus(int status, std::string_view body);

// One printable, bounded line of remote text (shared with the Kubernetes client).
using net::sanitizeLine;

}  // namespace metrics_adapter::prometheus
