#include "prometheus/answer_envelope.h"

#include <nlohmann/json.hpp>
#include <string>

#include "prometheus/response_parsing.h"

namespace metrics_adapter::prometheus {

PrometheusError badAnswer(const std::string& message) {
  return PrometheusError(PrometheusError::Kind::kBadResponse, 0, message);
}

void throwUnexpectedAnswer(const std::string& why) { throw badAnswer(unexpectedAnswerText(why)); }

void AnswerEnvelope::check() const {
  if (!top_is_object) throwUnexpectedAnswer("not a JSON object");
  if (!status) throwUnexpectedAnswer("no status");
  if (*status == "error") {
    // apiErrorText reads a document: the error answer's own members, rebuilt.
    nlohmann::json error_document = nlohmann::json::object();
    if (error_type) error_document["errorType"] = *error_type;
    if (error) error_document["error"] = *error;
    throw PrometheusError(PrometheusError::Kind::kApiError, 0, apiErrorText(error_document));
  }
  if (*status != "success") throwUnexpectedAnswer("status \"" + sanitizeLine(*status, 64) + "\"");
  if (!data_is_object) throwUnexpectedAnswer("no data object");
  if (!result_type) throwUnexpectedAnswer("no resultType");
  if (!has_result) throwUnexpectedAnswer("no result");
}

}  // namespace metrics_adapter::prometheus
