// /api/v1/series answers, parsed as a stream during every relist.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "prometheus/series_stream_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace prometheus = metrics_adapter::prometheus;
  using metrics_adapter::fuzz::check;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::size_t visits = 0;
  std::size_t tokens = 0;
  try {
    const auto answer = prometheus::parseSeriesStream(
        in,
        [&visits](std::string_view metric_name, const std::vector<std::string_view>& labels) {
          ++visits;
          for (const auto label : labels) {
            check(label != "__name__", "label names exclude __name__", metric_name);
          }
        },
        [&tokens] { ++tokens; });
    check(answer.series == visits, "the answer counts every visited series");
    check(tokens > 0, "a parsed answer has tokens");
  } catch (const prometheus::PrometheusError& error) {
    check(error.kind() == prometheus::PrometheusError::Kind::kApiError ||
              error.kind() == prometheus::PrometheusError::Kind::kBadResponse,
          "a bad answer is an API error or a bad response", error.what());
  }
  return 0;
}
