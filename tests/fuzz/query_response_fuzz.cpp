// /api/v1/query answers: Prometheus, or whatever answers in its place (a proxy, a broken
// gateway), decides these bytes. Only PrometheusError may come out, and every sample value
// must turn into a quantity or be skipped.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "metrics_adapter/prometheus/prometheus_client.h"
#include "metrics_adapter/promql/quantity.h"
#include "prometheus/response_parsing.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace prometheus = metrics_adapter::prometheus;
  using metrics_adapter::fuzz::check;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    const prometheus::QueryResult result = prometheus::parseQueryResponse(body);
    if (result.type == prometheus::QueryResult::Type::kScalar) {
      check(result.samples.size() == 1 && result.samples[0].labels.empty(),
            "a scalar is one sample without labels");
    }
    for (const auto& sample : result.samples) {
      (void)metrics_adapter::promql::sampleToQuantity(sample.value);
    }
  } catch (const prometheus::PrometheusError& error) {
    check(error.kind() == prometheus::PrometheusError::Kind::kApiError ||
              error.kind() == prometheus::PrometheusError::Kind::kBadResponse,
          "a bad answer is an API error or a bad response", error.what());
  }
  const prometheus::PrometheusError from_status = prometheus::errorForHttpStatus(503, body);
  check(std::string_view(from_status.what()).find('\n') == std::string_view::npos,
        "HTTP status errors are one line", from_status.what());
  return 0;
}
