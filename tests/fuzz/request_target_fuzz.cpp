// Request targets come from any client that can reach the port: split and decode them, then
// route them as the router does (custom metrics under /apis/custom.metrics.k8s.io/<version>,
// external metrics under /apis/external.metrics.k8s.io/v1beta1).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/custom_metric_request.h"
#include "metrics_adapter/api/external_metrics_handler.h"
#include "metrics_adapter/api/request_target.h"

namespace {

namespace api = metrics_adapter::api;
using metrics_adapter::fuzz::check;

void checkSegments(const api::RequestTarget& target) {
  std::vector<std::string> expected;
  std::string current;
  for (const char c : target.path) {
    if (c != '/') {
      current += c;
    } else if (!current.empty()) {
      expected.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) expected.push_back(std::move(current));
  check(expected == target.segments, "segments are the path split on '/'", target.path);
}

std::string percentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

// Encoding what was decoded and parsing again gives the same path and query.
void checkReencoding(const api::RequestTarget& target) {
  std::string encoded = "/";
  for (const auto& segment : target.segments) encoded += percentEncode(segment) + "/";
  encoded += '?';
  for (const auto& [key, value] : target.query) {
    encoded += percentEncode(key) + "=" + percentEncode(value) + "&";
  }
  const api::RequestTarget again = api::parseRequestTarget(encoded);
  check(again.segments == target.segments, "re-encoded segments decode the same", encoded);
  check(again.query == target.query, "a re-encoded query decodes the same", encoded);
}

void route(const api::RequestTarget& target) {
  const auto& parts = target.segments;
  if (parts.size() < 4 || parts[0] != "apis") return;
  const auto rest = std::span<const std::string>(parts).subspan(3);
  if (parts[1] == "custom.metrics.k8s.io") {
    const auto request = api::parseCustomMetricRequest(parts[2], rest, target);
    if (!request) return;
    check(!request->resource.empty() && !request->name.empty() && !request->metric.empty(),
          "a custom metric route names resource, object and metric", target.path);
    check(request->label_selector == target.get("labelSelector"),
          "the route keeps the labelSelector");
  } else if (parts[1] == "external.metrics.k8s.io") {
    const auto request = api::parseExternalMetricRequest(rest, target);
    (void)request;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const api::RequestTarget target = api::parseRequestTarget(text);
    checkSegments(target);
    checkReencoding(target);
    route(target);
  } catch (const api::ApiError& error) {
    check(error.code() == 400, "a malformed target is a 400", error.what());
  }
  return 0;
}
