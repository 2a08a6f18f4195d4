// Request targets come from any client that can reach the port: parse them once as the pipeline
// does, then route them as the router does. What a route serves must be what authorization saw
// (the same namespace, resource, name and metric), whatever the target.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/custom_metric_request.h"
#include "metrics_adapter/api/external_metrics_handler.h"
#include "metrics_adapter/server/request_info.h"
#include "metrics_adapter/text/percent_encoding.h"

namespace {

namespace api = metrics_adapter::api;
namespace server = metrics_adapter::server;
using metrics_adapter::fuzz::check;

void checkParts(const server::RequestInfo& info) {
  std::string joined;
  for (const auto& part : info.parts) {
    check(!part.empty() && part != "." && part != "..", "no empty or dot segment", info.path);
    check(part.find('/') == std::string::npos, "a segment holds no '/'", info.path);
    joined += "/" + part;
  }
  check(info.path == joined || info.path == joined + "/", "parts are the path split on '/'",
        info.path);
}

// Encoding what was decoded and parsing again gives the same request.
void checkReencoding(const server::RequestInfo& info) {
  std::string encoded;
  for (const auto& part : info.parts) encoded += "/" + metrics_adapter::text::percentEncode(part);
  if (encoded.empty()) encoded = "/";
  encoded += '?';
  for (const auto& [key, value] : info.query) {
    encoded += metrics_adapter::text::percentEncode(key) + "=" +
               metrics_adapter::text::percentEncode(value) + "&";
  }
  const server::RequestInfo again = server::parseRequestInfo("GET", encoded);
  check(again.parts == info.parts, "re-encoded parts decode the same", encoded);
  check(again.query == info.query, "a re-encoded query decodes the same", encoded);
  check(again.resource == info.resource && again.name == info.name &&
            again.subresource == info.subresource && again.namespace_name == info.namespace_name,
        "re-encoded attributes are the same", encoded);
}

void route(const server::RequestInfo& info) {
  if (info.api_group == "custom.metrics.k8s.io") {
    const auto request = api::parseCustomMetricRequest(info);
    if (!request) return;
    check(info.verb == "get", "only a get is served", info.path);
    check(!request->resource.empty() && !request->name.empty() && !request->metric.empty(),
          "a custom metric route names resource, object and metric", info.path);
    if (request->resource == "namespaces" && info.resource == "metrics") {
      check(request->name == info.namespace_name && request->metric == info.name,
            "a namespace metric is what authorization saw", info.path);
    } else {
      check(request->namespace_name == info.namespace_name && request->resource == info.resource &&
                request->name == info.name && request->metric == info.subresource,
            "an object metric is what authorization saw", info.path);
    }
    check(request->label_selector == info.get("labelSelector"), "the route keeps the selector");
  } else if (info.api_group == "external.metrics.k8s.io") {
    const auto request = api::parseExternalMetricRequest(info);
    if (!request) return;
    check(info.verb == "list" && request->namespace_name == info.namespace_name &&
              request->metric == info.resource,
          "an external metric is what authorization saw", info.path);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const server::RequestInfo info = server::parseRequestInfo("GET", text);
    checkParts(info);
    checkReencoding(info);
    route(info);
  } catch (const server::InvalidRequestTarget&) {  // answered 400
  } catch (const api::ApiError& error) {
    check(error.code() == 400, "a route refuses with a 400", error.what());
  }
  return 0;
}
