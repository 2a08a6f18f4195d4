#include "metrics_adapter/api/router.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <span>
#include <string_view>
#include <utility>

#include "metrics_adapter/api/discovery_documents.h"
#include "metrics_adapter/api/request_target.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::api {
namespace {

constexpr const char* kNotFoundMessage = "the server could not find the requested resource";

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// JSON is served when the client accepts it at all (api.md §2.3): the HPA lists protobuf
// first but also */*, and decodes by our Content-Type.
bool acceptsJson(const std::string& accept) {
  if (accept.empty()) return true;
  std::size_t begin = 0;
  while (begin <= accept.size()) {
    std::size_t end = accept.find(',', begin);
    if (end == std::string::npos) end = accept.size();
    std::string_view range(accept.data() + begin, end - begin);
    range = range.substr(0, range.find(';'));
    while (!range.empty() && range.front() == ' ') range.remove_prefix(1);
    while (!range.empty() && range.back() == ' ') range.remove_suffix(1);
    if (range == "*/*" || range == "application/*" || range == "application/json") return true;
    begin = end + 1;
  }
  return false;
}

bool wantsPretty(const server::HttpRequest& request, const RequestTarget& target) {
  std::string pretty = target.get("pretty");
  if (pretty == "true" || pretty == "1") return true;
  std::string agent = request.header("User-Agent");
  return startsWith(agent, "curl") || startsWith(agent, "Wget") || startsWith(agent, "Mozilla/5.0");
}

std::string dumpJson(const Json& body, bool pretty) {
  // Names and paths in messages come from the client and may be invalid UTF-8: replace, never
  // throw.
  std::string text =
      body.dump(pretty ? 2 : -1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  return text;
}

std::string compactJson(const Json& body) { return dumpJson(body, false); }

server::HttpResponse jsonResponse(int status, const Json& body, bool pretty) {
  server::HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = dumpJson(body, pretty);
  return response;
}

server::HttpResponse errorResponse(const ApiError& error, bool pretty) {
  return jsonResponse(error.code(),
                      statusObject(error.code(), error.reason(), error.what(), error.details()),
                      pretty);
}

// The route label of the self-metrics: a fixed name per kind of path, so that client-chosen
// paths cannot create new series.
std::string_view routeTemplate(std::string_view raw_target) {
  std::vector<std::string> parts;
  try {
    parts = parseRequestTarget(raw_target).segments;
  } catch (const ApiError&) {
    return "other";
  }
  if (parts.size() == 1) {
    if (parts[0] == "healthz" || parts[0] == "livez" || parts[0] == "readyz") return "health";
    if (parts[0] == "metrics") return "metrics";
    if (parts[0] == "version") return "discovery";
  }
  if (parts.empty() || parts[0] != "apis") return "other";
  if (parts.size() <= 3) return "discovery";
  if (parts[1] == kCustomMetricsGroup) return "custom_metric";
  if (parts[1] == kExternalMetricsGroup) return "external_metric";
  return "other";
}

// JSON bodies of the discovery documents, rendered once per registry snapshot: they are what
// clients ask for most (the aggregator and every kubectl), and they change only when a relist or
// a config reload swaps the snapshot. Shared by every Router: a body depends only on the snapshot
// and the document, so one cache is right whichever router asks.
class RenderedDocuments {
 public:
  using Snapshot = std::shared_ptr<const discovery::RegistrySnapshot>;

  // The body of `document` for `snapshot`, rendered by `render` unless already cached for it.
  // Keeps only the newest snapshot's bodies (and so that snapshot, which the relister holds
  // anyway).
  std::string get(const Snapshot& snapshot, std::string_view document,
                  const std::function<Json()>& render) {
    {
      std::lock_guard lock(mutex_);
      if (const std::string* body = find(snapshot, document)) return *body;
    }
    std::string body = compactJson(render());  // outside the lock: other documents go on
    std::lock_guard lock(mutex_);
    if (snapshot != snapshot_) {
      snapshot_ = snapshot;
      bodies_.clear();
    }
    if (!find(snapshot, document)) bodies_.emplace_back(std::string(document), body);
    return body;
  }

 private:
  const std::string* find(const Snapshot& snapshot, std::string_view document) const {
    if (snapshot != snapshot_) return nullptr;
    for (const auto& [name, body] : bodies_) {
      if (name == document) return &body;
    }
    return nullptr;
  }

  std::mutex mutex_;
  Snapshot snapshot_;
  std::vector<std::pair<std::string, std::string>> bodies_;  // a handful: one per version
};

RenderedDocuments& renderedDocuments() {
  static RenderedDocuments documents;
  return documents;
}

// A 200 answer whose compact JSON body (ending in a newline) is already written.
server::HttpResponse renderedResponse(std::string body) {
  server::HttpResponse response;
  response.body = std::move(body);
  return response;
}

// A discovery document for `snapshot`, from the cache unless pretty-printed.
server::HttpResponse discoveryResponse(const RenderedDocuments::Snapshot& snapshot,
                                       std::string_view document,
                                       const std::function<Json()>& render, bool pretty) {
  if (pretty) return jsonResponse(200, render(), true);
  return renderedResponse(renderedDocuments().get(snapshot, document, render));
}

// A document that never changes (the API groups), rendered once per process.
template <Json (*kDocument)()>
server::HttpResponse fixedResponse(bool pretty) {
  if (pretty) return jsonResponse(200, kDocument(), true);
  static const std::string kBody = compactJson(kDocument());
  return renderedResponse(kBody);
}

server::HttpResponse metricsResponse() {
  server::HttpResponse response;
  response.status = 200;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = telemetry::SelfMetrics::instance().exposition();
  return response;
}

}  // namespace

Router::Router(std::shared_ptr<const CustomMetricsHandler> custom_metrics,
               std::shared_ptr<const ExternalMetricsHandler> external_metrics,
               SnapshotSource snapshots, HealthChecks health, std::string version)
    : custom_metrics_(std::move(custom_metrics)),
      external_metrics_(std::move(external_metrics)),
      snapshots_(std::move(snapshots)),
      health_(std::move(health)),
      version_(std::move(version)) {}

Router::Router(std::shared_ptr<const CustomMetricsHandler> custom_metrics, SnapshotSource snapshots,
               HealthChecks health, std::string version)
    : Router(std::move(custom_metrics), nullptr, std::move(snapshots), std::move(health),
             std::move(version)) {}

// The access-log line is written by the app's request handler, which also knows the auth outcome.
server::HttpResponse Router::handle(const server::HttpRequest& request) const {
  auto& self_metrics = telemetry::SelfMetrics::instance();
  self_metrics.requestStarted();
  const auto began = std::chrono::steady_clock::now();
  server::HttpResponse response = route(request);
  self_metrics.requestFinished();
  self_metrics.observeRequest(routeTemplate(request.target), response.status,
                              std::chrono::steady_clock::now() - began);
  return response;
}

server::HttpResponse Router::route(const server::HttpRequest& request) const {
  bool pretty = false;
  try {
    RequestTarget target = parseRequestTarget(request.target);
    pretty = wantsPretty(request, target);
    const auto& parts = target.segments;

    if (parts.size() == 1 &&
        (parts[0] == "healthz" || parts[0] == "livez" || parts[0] == "readyz")) {
      bool verbose = target.has("verbose");
      if (parts[0] == "readyz") {
        std::vector<HealthCheck> checks = health_.live;
        checks.insert(checks.end(), health_.ready.begin(), health_.ready.end());
        return health(parts[0], checks, verbose);
      }
      return health(parts[0], health_.live, verbose);
    }
    if (request.method != "GET" && request.method != "HEAD") {
      throw ApiError(405, "MethodNotAllowed",
                     "the server does not allow this method on the requested resource",
                     Json::object());
    }
    // Before the Accept check: scrapers ask for text formats.
    if (parts.size() == 1 && parts[0] == "metrics") return metricsResponse();
    if (!acceptsJson(request.header("Accept"))) {
      throw ApiError(406, "NotAcceptable",
                     "only the following media types are accepted: application/json");
    }
    if (parts.size() == 1 && parts[0] == "version") {
      return jsonResponse(200, Json{{"gitVersion", "v" + version_}, {"platform", "linux/amd64"}},
                          pretty);
    }
    if (parts.empty() || parts[0] != "apis") {
      throw ApiError(404, "NotFound", kNotFoundMessage, Json::object());
    }
    if (parts.size() == 1) return fixedResponse<apiGroupList>(pretty);
    if (parts[1] == kExternalMetricsGroup) {
      if (parts.size() == 2) return fixedResponse<externalMetricsGroup>(pretty);
      if (parts.size() == 3 && parts[2] == kExternalMetricsVersion) {
        auto snapshot = snapshots_();
        return discoveryResponse(
            snapshot, kExternalMetricsGroup, [&] { return externalMetricsResourceList(*snapshot); },
            pretty);
      }
      return jsonResponse(200, external(parts, target), pretty);
    }
    if (parts[1] != kCustomMetricsGroup) {
      throw ApiError(404, "NotFound", kNotFoundMessage, Json::object());
    }
    if (parts.size() == 2) return fixedResponse<customMetricsGroup>(pretty);
    const std::string& version = parts[2];
    if (!isCustomMetricsVersion(version)) {
      throw ApiError(404, "NotFound", kNotFoundMessage, Json::object());
    }
    if (parts.size() == 3) {
      auto snapshot = snapshots_();
      return discoveryResponse(
          snapshot, kCustomMetricsGroup + ("/" + version),
          [&] { return customMetricsResourceList(version, *snapshot); }, pretty);
    }
    auto rest = std::span<const std::string>(parts).subspan(3);
    auto metric_request = parseCustomMetricRequest(version, rest, target);
    if (!metric_request) throw ApiError(404, "NotFound", kNotFoundMessage, Json::object());
    if (pretty) return jsonResponse(200, custom_metrics_->handle(*metric_request), true);
    return renderedResponse(custom_metrics_->render(*metric_request) + '\n');
  } catch (const ApiError& error) {
    if (error.code() >= 500)
      spdlog::warn("{} {}: {}", request.method, request.target, error.what());
    return errorResponse(error, pretty);
  } catch (const std::exception& error) {
    spdlog::error("{} {}: unexpected error: {}", request.method, request.target, error.what());
    return errorResponse(ApiError::internal("unexpected error, see the adapter log"), pretty);
  }
}

Json Router::external(const std::vector<std::string>& parts, const RequestTarget& target) const {
  // route() answers the group and version documents themselves.
  if (parts.size() <= 3 || parts[2] != kExternalMetricsVersion) {
    throw ApiError(404, "NotFound", kNotFoundMessage, Json::object());
  }
  auto metric_request =
      parseExternalMetricRequest(std::span<const std::string>(parts).subspan(3), target);
  if (!metric_request || !external_metrics_) {
    throw ApiError(404, "NotFound", kNotFoundMessage, Json::object());
  }
  return external_metrics_->handle(*metric_request);
}

server::HttpResponse Router::health(const std::string& endpoint,
                                    const std::vector<HealthCheck>& checks, bool verbose) const {
  std::string report;
  bool healthy = true;
  for (const auto& check : checks) {
    auto failure = check.check();
    if (failure) {
      healthy = false;
      spdlog::info("{} check {} failed: {}", endpoint, check.name, *failure);
      report += "[-]" + check.name + " failed: reason withheld\n";
    } else {
      report += "[+]" + check.name + " ok\n";
    }
  }
  server::HttpResponse response;
  response.content_type = "text/plain; charset=utf-8";
  response.status = healthy ? 200 : 500;
  if (healthy && !verbose) {
    response.body = "ok";
  } else {
    response.body = report + endpoint + (healthy ? " check passed\n" : " check failed\n");
  }
  return response;
}

}  // namespace metrics_adapter::api
