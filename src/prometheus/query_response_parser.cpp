#include <string>

#include "metrics_adapter/prometheus/prometheus_client.h"
#include "prometheus/response_parsing.h"

namespace metrics_adapter::prometheus {
namespace {

using Json = nlohmann::json;

[[noreturn]] void unexpected(const std::string& why) {
  throw PrometheusError(PrometheusError::Kind::kBadResponse, 0,
                        "unexpected Prometheus answer: " + why);
}

const Json* member(const Json& object, const char* name) {
  const auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

// [<unix seconds>, "<value>"], the shape of vector and scalar samples.
void parseSamplePair(const Json& pair, Sample& sample) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_string()) {
    unexpected("a sample is not [<time>, \"<value>\"]");
  }
  sample.timestamp = pair[0].get<double>();
  const auto& text = pair[1].get_ref<const std::string&>();
  const auto value = parseSampleValue(text);
  if (!value) unexpected("sample value \"" + sanitizeLine(text, 64) + "\" is not a number");
  sample.value = *value;
}

void parseVector(const Json& result, QueryResult& out) {
  if (!result.is_array()) unexpected("vector result is not a list");
  out.samples.reserve(result.size());
  for (const Json& element : result) {
    if (!element.is_object()) unexpected("vector element is not an object");
    const Json* value = member(element, "value");
    if (value == nullptr) {
      // Native-histogram samples carry "histogram" instead of "value"; they have no single
      // number to offer, so they are left out rather than failing the whole answer.
      if (member(element, "histogram") != nullptr) continue;
      unexpected("vector element has no value");
    }
    Sample sample;
    if (const Json* metric = member(element, "metric"); metric != nullptr && !metric->is_null()) {
      if (!metric->is_object()) unexpected("sample labels are not an object");
      for (const auto& [name, label_value] : metric->items()) {
        if (!label_value.is_string())
          unexpected("label \"" + sanitizeLine(name, 64) + "\" is not a string");
        sample.labels.emplace(name, label_value.get<std::string>());
      }
    }
    parseSamplePair(*value, sample);
    out.samples.push_back(std::move(sample));
  }
}

}  // namespace

QueryResult parseQueryResponse(std::string_view body) {
  const Json document = parseJsonAnswer(body);
  if (!document.is_object()) unexpected("not a JSON object");
  const Json* status = member(document, "status");
  if (status == nullptr || !status->is_string()) unexpected("no status");
  if (status->get_ref<const std::string&>() == "error") {
    throw PrometheusError(PrometheusError::Kind::kApiError, 0, apiErrorText(document));
  }
  if (status->get_ref<const std::string&>() != "success") {
    unexpected("status \"" + sanitizeLine(status->get_ref<const std::string&>(), 64) + "\"");
  }

  QueryResult out;
  if (const Json* warnings = member(document, "warnings"); warnings != nullptr) {
    if (warnings->is_array()) {
      for (const Json& warning : *warnings) {
        if (warning.is_string()) out.warnings.push_back(warning.get<std::string>());
      }
    }
  }

  const Json* data = member(document, "data");
  if (data == nullptr || !data->is_object()) unexpected("no data object");
  const Json* type = member(*data, "resultType");
  if (type == nullptr || !type->is_string()) unexpected("no resultType");
  const Json* result = member(*data, "result");
  if (result == nullptr) unexpected("no result");

  const auto& type_name = type->get_ref<const std::string&>();
  if (type_name == "vector") {
    out.type = QueryResult::Type::kVector;
    if (!result->is_null()) parseVector(*result, out);
  } else if (type_name == "scalar") {
    out.type = QueryResult::Type::kScalar;
    Sample sample;
    parseSamplePair(*result, sample);
    out.samples.push_back(std::move(sample));
  } else if (type_name == "matrix") {
    out.type = QueryResult::Type::kMatrix;
  } else if (type_name == "string") {
    out.type = QueryResult::Type::kString;
  } else {
    unexpected("resultType \"" + sanitizeLine(type_name, 64) + "\"");
  }
  return out;
}

}  // namespace metrics_adapter::prometheus
