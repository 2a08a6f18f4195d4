#include "prometheus/response_parsing.h"

#include <clocale>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace metrics_adapter::prometheus {
namespace {

constexpr std::size_t kMaxErrorTextBytes = 2048;
constexpr std::size_t kMaxSnippetBytes = 200;

struct TooDeep {};

}  // namespace

std::string tooDeepAnswerText() {
  return "cannot decode Prometheus answer: JSON nested deeper than " +
         std::to_string(kMaxJsonDepth) + " levels";
}

nlohmann::json parseJsonAnswer(std::string_view body) {
  const nlohmann::json::parser_callback_t limit_depth = [](int depth, nlohmann::json::parse_event_t,
                                                           nlohmann::json&) {
    if (depth > static_cast<int>(kMaxJsonDepth)) throw TooDeep{};
    return true;
  };
  try {
    return nlohmann::json::parse(body.begin(), body.end(), limit_depth);
  } catch (const TooDeep&) {
    throw PrometheusError(PrometheusError::Kind::kBadResponse, 0, tooDeepAnswerText());
  } catch (const nlohmann::json::exception& e) {
    throw PrometheusError(PrometheusError::Kind::kBadResponse, 0,
                          std::string("cannot decode Prometheus answer: ") + e.what());
  }
}

std::optional<double> parseSampleValue(std::string_view text) {
  // strtod skips leading blanks and stops early; Prometheus never writes either.
  if (text.empty() || text.front() == ' ' || text.front() == '\t' || text.front() == '\n' ||
      text.front() == '\r' || text.front() == '\f' || text.front() == '\v') {
    return std::nullopt;
  }
  static const locale_t kCLocale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  const std::string copy(text);  // strtod needs a terminated string
  char* end = nullptr;
  const double value = strtod_l(copy.c_str(), &end, kCLocale);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return value;
}

std::string apiErrorText(const nlohmann::json& document) {
  std::string error_type;
  std::string error;
  if (const auto it = document.find("errorType"); it != document.end() && it->is_string()) {
    error_type = it->get<std::string>();
  }
  if (const auto it = document.find("error"); it != document.end() && it->is_string()) {
    error = it->get<std::string>();
  }
  std::string text;
  if (!error_type.empty() && !error.empty()) {
    text = error_type + ": " + error;
  } else if (!error.empty()) {
    text = error;
  } else if (!error_type.empty()) {
    text = error_type;
  } else {
    text = "Prometheus reported an error without a message";
  }
  return sanitizeLine(text, kMaxErrorTextBytes);
}

PrometheusError errorForHttpStatus(int status, std::string_view body) {
  try {
    const nlohmann::json document = parseJsonAnswer(body);
    if (document.is_object()) {
      const auto it = document.find("status");
      if (it != document.end() && it->is_string() && it->get<std::string>() == "error") {
        return PrometheusError(PrometheusError::Kind::kApiError, status, apiErrorText(document));
      }
    }
  } catch (const PrometheusError&) {
    // Not JSON (an HTML page from a proxy, say): reported by status and body below.
  }
  std::string message = "unexpected HTTP status " + std::to_string(status) + " from Prometheus";
  const std::string snippet = sanitizeLine(body, kMaxSnippetBytes);
  if (!snippet.empty()) message += ": " + snippet;
  return PrometheusError(PrometheusError::Kind::kHttpStatus, status, message);
}

}  // namespace metrics_adapter::prometheus
