#include "prometheus/response_parsing.h"

#include <clocale>
#include <cstdlib>
#include <string>

namespace metrics_adapter::prometheus {
namespace {

constexpr int kMaxJsonDepth = 64;
constexpr std::size_t kMaxErrorTextBytes = 2048;
constexpr std::size_t kMaxSnippetBytes = 200;

struct TooDeep {};

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes there are invalid.
std::size_t utf8SequenceLength(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned char min_second = 0x80;
  unsigned char max_second = 0xBF;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) min_second = 0xA0;  // overlong
    if (lead == 0xED) max_second = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) min_second = 0x90;  // overlong
    if (lead == 0xF4) max_second = 0x8F;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < min_second || byte(i + 1) > max_second) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

nlohmann::json parseJsonAnswer(std::string_view body) {
  const nlohmann::json::parser_callback_t limit_depth = [](int depth, nlohmann::json::parse_event_t,
                                                           nlohmann::json&) {
    if (depth > kMaxJsonDepth) throw TooDeep{};
    return true;
  };
  try {
    return nlohmann::json::parse(body.begin(), body.end(), limit_depth);
  } catch (const TooDeep&) {
    throw PrometheusError(PrometheusError::Kind::kBadResponse, 0,
                          "cannot decode Prometheus answer: JSON nested deeper than " +
                              std::to_string(kMaxJsonDepth) + " levels");
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
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  const std::string copy(text);  // strtod needs a terminated string
  char* end = nullptr;
  const double value = strtod_l(copy.c_str(), &end, c_locale);
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

std::string sanitizeLine(std::string_view text, std::size_t max_bytes) {
  std::string out;
  bool cut = false;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = utf8SequenceLength(text, i);
    std::string_view piece;
    bool control = false;
    if (length == 0) {
      piece = "?";
      length = 1;
    } else if (c < 0x20 || c == 0x7F) {
      piece = " ";
      control = true;
    } else {
      piece = text.substr(i, length);
    }
    i += length;
    if (control && (out.empty() || out.back() == ' ')) continue;
    if (out.size() + piece.size() > max_bytes) {
      cut = true;
      break;
    }
    out += piece;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (cut) out += "...";
  return out;
}

}  // namespace metrics_adapter::prometheus
