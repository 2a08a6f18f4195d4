#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_api.h"
#include "prometheus/sample_pair.h"

namespace metrics_adapter::prometheus {

// An answer's envelope, as far as it has been read. A repeated member replaces the earlier one,
// as it would in a document.
struct AnswerEnvelope {
  bool top_is_object = false;
  std::optional<std::string> status;
  std::optional<std::string> error_type;
  std::optional<std::string> error;
  std::vector<std::string> warnings;
  bool data_is_object = false;
  std::optional<std::string> result_type;
  bool has_result = false;
  JsonToken result = JsonToken::kNull;  // what "data"."result" is

  // Throws the PrometheusError of an answer that is not a success with a "resultType" and a
  // "result": kApiError with Prometheus's text for {"status":"error"}, else kBadResponse.
  // "status" is looked at first, so that an error answer wins over a malformed "data".
  void check() const;
};

// kBadResponse with `message`.
PrometheusError badAnswer(const std::string& message);

// Throws kBadResponse with unexpectedAnswerText(why).
[[noreturn]] void throwUnexpectedAnswer(const std::string& why);

}  // namespace metrics_adapter::prometheus
