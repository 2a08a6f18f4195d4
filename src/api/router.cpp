#include "metrics_adapter/api/router.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "api/http_caching.h"
#include "metrics_adapter/api/aggregated_discovery.h"
#include "metrics_adapter/api/discovery_documents.h"
#include "metrics_adapter/api/forecast_routes.h"
#include "metrics_adapter/api/version_info.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::api {
namespace {

constexpr const char* kNotFoundMessage = "the server could not find the requested resource";

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// JSON is served when the client accepts it at all (docs/api-contract.md "Content negotiation"):
// the HPA lists protobuf first but also */*, and decodes by our Content-Type.
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

bool wantsPretty(const server::HttpRequest& request, const server::RequestInfo& info) {
  std::string pretty = info.get("pretty");
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

std::string compactJsonLine(const Json& body) { return dumpJson(body, false); }

server::HttpResponse jsonResponse(int status, const Json& body, bool pretty) {
  server::HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = dumpJson(body, pretty);
  return response;
}

// A discovery document rendered for one registry snapshot: its compact JSON and, for the
// aggregated document, its ETag.
struct RenderedDocument {
  std::string body;
  std::string etag;  // quoted SHA-512 of body; "" unless asked for
};

// JSON bodies of the discovery documents, rendered once per registry snapshot: they are what
// clients ask for most (the aggregator and every kubectl), and they change only when a relist or
// a config reload swaps the snapshot. Shared by every Router: a body depends only on the snapshot
// and the document, so one cache is right whichever router asks.
class RenderedDocuments {
 public:
  using Snapshot = std::shared_ptr<const discovery::RegistrySnapshot>;
  using Document = std::shared_ptr<const RenderedDocument>;

  // `document` for `snapshot`, rendered by `render` unless already cached for it. Keeps only the
  // newest snapshot's documents (and so that snapshot, which the relister holds anyway). The
  // bytes are shared with every answer that carries them: no copy per request.
  Document get(const Snapshot& snapshot, std::string_view document,
               const std::function<Json()>& render) {
    return getText(
        snapshot, document, [&render] { return compactJsonLine(render()); }, false);
  }

  // The same for a document written as text by `render`, with its ETag when `with_etag`.
  Document getText(const Snapshot& snapshot, std::string_view document,
                   const std::function<std::string()>& render, bool with_etag) {
    {
      std::lock_guard lock(mutex_);
      if (Document found = find(snapshot, document)) return found;
    }
    // Outside the lock: other documents go on.
    RenderedDocument rendered{render(), ""};
    if (with_etag) rendered.etag = quotedEtag(contentHash(rendered.body));
    auto shared = std::make_shared<const RenderedDocument>(std::move(rendered));
    std::lock_guard lock(mutex_);
    if (snapshot != snapshot_) {
      snapshot_ = snapshot;
      documents_.clear();
    }
    if (Document cached = find(snapshot, document)) return cached;
    documents_.emplace_back(std::string(document), shared);
    return shared;
  }

 private:
  Document find(const Snapshot& snapshot, std::string_view document) const {
    if (snapshot != snapshot_) return nullptr;
    for (const auto& [name, rendered] : documents_) {
      if (name == document) return rendered;
    }
    return nullptr;
  }

  std::mutex mutex_;
  Snapshot snapshot_;
  std::vector<std::pair<std::string, Document>> documents_;  // a handful: one per version
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

// A 200 answer carrying bytes rendered once and shared (the discovery documents).
server::HttpResponse sharedResponse(std::shared_ptr<const std::string> body) {
  server::HttpResponse response;
  response.shared_body = std::move(body);
  return response;
}

// The body of a cached document, shared with the cache (no copy, no allocation).
std::shared_ptr<const std::string> bodyOf(const RenderedDocuments::Document& document) {
  return {document, &document->body};
}

// A discovery document for `snapshot`, from the cache unless pretty-printed.
server::HttpResponse discoveryResponse(const RenderedDocuments::Snapshot& snapshot,
                                       std::string_view document,
                                       const std::function<Json()>& render, bool pretty) {
  if (pretty) return jsonResponse(200, render(), true);
  return sharedResponse(bodyOf(renderedDocuments().get(snapshot, document, render)));
}

// A document that never changes (the API groups), rendered once per process.
template <Json (*kDocument)()>
server::HttpResponse fixedResponse(bool pretty) {
  if (pretty) return jsonResponse(200, kDocument(), true);
  static const auto kBody = std::make_shared<const std::string>(compactJsonLine(kDocument()));
  return sharedResponse(kBody);
}

}  // namespace

server::HttpResponse errorResponse(const ApiError& error) {
  server::HttpResponse response;
  response.status = error.code();
  response.content_type = "application/json";
  response.body = error.toStatusJson() + '\n';
  return response;
}

std::string_view routeLabel(const server::RequestInfo& info) {
  const auto& parts = info.parts;
  if (parts.size() == 1) {
    if (parts[0] == "healthz" || parts[0] == "livez" || parts[0] == "readyz") return "health";
    if (parts[0] == "metrics") return "metrics";
    if (parts[0] == "version") return "discovery";
  }
  if (!parts.empty() && parts[0] == "openapi") return "openapi";
  if (parts.empty() || parts[0] != "apis") return "other";
  if (parts.size() <= 3) return "discovery";
  if (parts[1] == kCustomMetricsGroup) return "custom_metric";
  if (parts[1] == kExternalMetricsGroup) return "external_metric";
  if (parts[1] == kResourceMetricsGroup) return "resource_metric";
  if (parts[1] == kForecastGroup) return "forecast_observer";
  return "other";
}

Router::Router(RouterParts parts)
    : parts_(std::move(parts)),
      openapi_(std::make_shared<const LazyOpenApiDocuments>(false, parts_.version.git_version)),
      openapi_with_resource_metrics_(
          std::make_shared<const LazyOpenApiDocuments>(true, parts_.version.git_version)) {}

bool Router::answersFromMemory(const server::RequestInfo& info) {
  const std::string_view route = routeLabel(info);
  return route == "discovery" || route == "openapi";
}

bool Router::servesResourceMetrics() const {
  return parts_.resource_metrics && parts_.snapshots()->resourceRules();
}

server::HttpResponse Router::route(const server::HttpRequest& request,
                                   const server::RequestInfo& info) const {
  const bool pretty = wantsPretty(request, info);
  try {
    const auto& parts = info.parts;

    if (parts.size() == 1 &&
        (parts[0] == "healthz" || parts[0] == "livez" || parts[0] == "readyz")) {
      bool verbose = info.has("verbose");
      if (parts[0] == "readyz") {
        std::vector<HealthCheck> checks = parts_.health.live;
        checks.insert(checks.end(), parts_.health.ready.begin(), parts_.health.ready.end());
        return health(parts[0], checks, verbose);
      }
      return health(parts[0], parts_.health.live, verbose);
    }
    if (request.method != "GET" && request.method != "HEAD") {
      throw ApiError(405, "MethodNotAllowed",
                     "the server does not allow this method on the requested resource",
                     server::StatusDetails{});
    }
    // Before the Accept check: scrapers ask for text formats.
    if (parts.size() == 1 && parts[0] == "metrics" && parts_.self_metrics) {
      server::HttpResponse response;
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      response.body = parts_.self_metrics->exposition();
      return response;
    }
    // Before the Accept check: the observer page is HTML, for browsers too.
    if (parts.size() >= 2 && parts[0] == "apis" && parts[1] == kForecastGroup) {
      return forecastGroup(info, pretty);
    }
    if (!parts.empty() && parts[0] == "openapi") return openApi(request, info);
    // Before the Accept check: the aggregated discovery document is asked for by parameters.
    if (parts.size() == 1 && parts[0] == "apis") return apiGroups(request, pretty);
    if (!acceptsJson(request.header("Accept"))) {
      throw ApiError(406, "NotAcceptable",
                     "only the following media types are accepted: application/json");
    }
    if (parts.size() == 1 && parts[0] == "version") {
      return jsonResponse(200, versionDocument(parts_.version), pretty);
    }
    if (parts.empty() || parts[0] != "apis") {
      throw ApiError(404, "NotFound", kNotFoundMessage, server::StatusDetails{});
    }
    if (parts[1] == kResourceMetricsGroup) return resourceMetrics(info, pretty);
    if (parts[1] == kExternalMetricsGroup) {
      if (parts.size() == 2) return fixedResponse<externalMetricsGroup>(pretty);
      if (parts.size() == 3 && parts[2] == kExternalMetricsVersion) {
        auto snapshot = parts_.snapshots();
        const std::vector<std::string> forecasts =
            parts_.forecasts ? parts_.forecasts->names() : std::vector<std::string>{};
        // The forecast names are part of the cache key: they change with the config only.
        // Built in a string of this thread's, kept, so that a request allocates nothing for it.
        thread_local std::string document;
        document.assign(kExternalMetricsGroup);
        for (const std::string& name : forecasts) {
          document += ' ';
          document += name;
        }
        return discoveryResponse(
            snapshot, document, [&] { return externalMetricsResourceList(*snapshot, forecasts); },
            pretty);
      }
      return jsonResponse(200, external(info), pretty);
    }
    if (parts[1] != kCustomMetricsGroup) {
      throw ApiError(404, "NotFound", kNotFoundMessage, server::StatusDetails{});
    }
    if (parts.size() == 2) return fixedResponse<customMetricsGroup>(pretty);
    const std::string& version = parts[2];
    if (!isCustomMetricsVersion(version)) {
      throw ApiError(404, "NotFound", kNotFoundMessage, server::StatusDetails{});
    }
    if (parts.size() == 3) {
      auto snapshot = parts_.snapshots();
      // The cache key, without building a string per request.
      const std::string_view document =
          version == "v1beta1" ? "custom.metrics.k8s.io/v1beta1" : "custom.metrics.k8s.io/v1beta2";
      return discoveryResponse(
          snapshot, document, [&] { return customMetricsResourceList(version, *snapshot); },
          pretty);
    }
    auto metric_request = parseCustomMetricRequest(info);
    if (!metric_request || !parts_.custom_metrics) {
      throw ApiError(404, "NotFound", kNotFoundMessage, server::StatusDetails{});
    }
    if (pretty) return jsonResponse(200, parts_.custom_metrics->handle(*metric_request), true);
    return renderedResponse(parts_.custom_metrics->render(*metric_request) + '\n');
  } catch (const ApiError& error) {
    if (error.code() >= 500) SPDLOG_WARN("{} {}: {}", request.method, request.target, error.what());
    return errorResponse(error);
  } catch (const std::exception& error) {
    SPDLOG_ERROR("{} {}: unexpected error: {}", request.method, request.target, error.what());
    return errorResponse(ApiError::internal("unexpected error, see the adapter log"));
  }
}

server::HttpResponse Router::apiGroups(const server::HttpRequest& request, bool pretty) const {
  const std::optional<DiscoveryFormat> format = negotiateDiscovery(request.headerView("Accept"));
  if (!format) {
    throw ApiError(406, "NotAcceptable",
                   "only the following media types are accepted: application/json, "
                   "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList, "
                   "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList");
  }
  // metrics.k8s.io is listed only while it is served (a cluster may run metrics-server).
  const bool resource_metrics = servesResourceMetrics();
  if (*format == DiscoveryFormat::kLegacy) {
    if (resource_metrics) return fixedResponse<apiGroupListWithResourceMetrics>(pretty);
    return fixedResponse<apiGroupList>(pretty);
  }
  auto snapshot = parts_.snapshots();
  const std::vector<std::string> forecasts =
      parts_.forecasts ? parts_.forecasts->names() : std::vector<std::string>{};
  auto render = [&] {
    return renderAggregatedDiscovery(servedResources(*snapshot, forecasts, resource_metrics),
                                     *format);
  };
  // The cache key: what the document depends on besides the snapshot.
  std::string key = *format == DiscoveryFormat::kAggregatedV2 ? "apis v2" : "apis v2beta1";
  if (resource_metrics) key += " +metrics.k8s.io";
  for (const std::string& name : forecasts) {
    key += ' ';
    key += name;
  }
  const auto document = renderedDocuments().getText(snapshot, key, render, true);
  server::HttpResponse response;
  response.headers = {{"ETag", document->etag}, {"Vary", "Accept"}, {"Cache-Control", "public"}};
  response.content_type = aggregatedContentType(*format);
  if (ifNoneMatch(request.headerView("If-None-Match"), document->etag)) {
    response.status = 304;
  } else if (pretty) {
    response.body = dumpJson(Json::parse(document->body), true);
  } else {
    response.shared_body = bodyOf(document);
  }
  return response;
}

namespace {

// A document rendered once, with its ETag: 304 for a matching If-None-Match, else the bytes,
// shared with `owner`.
server::HttpResponse cachedDocument(const server::HttpRequest& request,
                                    const std::shared_ptr<const OpenApiDocuments>& owner,
                                    const std::string& body, const std::string& etag) {
  server::HttpResponse response;
  response.headers = {{"ETag", etag}, {"Vary", "Accept"}};
  if (ifNoneMatch(request.headerView("If-None-Match"), etag)) {
    response.status = 304;
  } else {
    response.shared_body = std::shared_ptr<const std::string>(owner, &body);
  }
  return response;
}

void requireJson(const server::HttpRequest& request) {
  if (!acceptsJson(request.header("Accept"))) {
    // Upstream also serves protobuf here; a client that accepts JSON too gets JSON.
    throw ApiError(406, "NotAcceptable",
                   "only the following media types are accepted: application/json");
  }
}

}  // namespace

server::HttpResponse Router::openApi(const server::HttpRequest& request,
                                     const server::RequestInfo& info) const {
  const auto& parts = info.parts;
  const std::shared_ptr<const OpenApiDocuments> documents =
      (servesResourceMetrics() ? openapi_with_resource_metrics_ : openapi_)->get();
  if (parts.size() == 2 && parts[1] == "v2") {
    requireJson(request);
    return cachedDocument(request, documents, documents->v2, documents->v2_etag);
  }
  if (parts.size() == 2 && parts[1] == "v3") {
    requireJson(request);
    return cachedDocument(request, documents, documents->v3_index, documents->v3_index_etag);
  }
  if (parts.size() == 5 && parts[1] == "v3" && parts[2] == "apis") {
    const std::string path = "apis/" + parts[3] + "/" + parts[4];
    if (const OpenApiGroupVersion* document = documents->find(path)) {
      requireJson(request);
      const std::string hash = info.get("hash");
      if (!hash.empty() && hash != document->hash) {
        // An index read before a change: where the current document is, as kube-openapi says.
        server::HttpResponse moved;
        moved.status = 301;
        moved.headers = {{"Location", "/openapi/v3/" + path + "?hash=" + document->hash}};
        moved.content_type = "text/plain; charset=utf-8";
        return moved;
      }
      server::HttpResponse response =
          cachedDocument(request, documents, document->body, quotedEtag(document->hash));
      if (!hash.empty()) {
        // The URL names the content: it never changes, as the kube-apiserver says of its own.
        response.headers.emplace_back("Cache-Control", "public, immutable");
        response.headers.emplace_back("Expires", httpDateInDays(365));
      }
      return response;
    }
  }
  throw ApiError(404, "NotFound", kNotFoundMessage, server::StatusDetails{});
}

Json Router::external(const server::RequestInfo& info) const {
  // route() answers the group and version documents themselves.
  auto metric_request = parseExternalMetricRequest(info);
  if (!metric_request || !parts_.external_metrics) {
    throw ApiError(404, "NotFound", kNotFoundMessage, server::StatusDetails{});
  }
  return parts_.external_metrics->handle(*metric_request);
}

server::HttpResponse Router::resourceMetrics(const server::RequestInfo& info, bool pretty) const {
  const auto& parts = info.parts;
  auto snapshot = parts_.snapshots();
  const auto& rules = snapshot->resourceRules();
  if (!parts_.resource_metrics || !rules ||
      (parts.size() >= 3 && parts[2] != kResourceMetricsVersion)) {
    throw ApiError(404, "NotFound", kNotFoundMessage, server::StatusDetails{});
  }
  if (parts.size() == 2) return fixedResponse<resourceMetricsGroup>(pretty);
  if (parts.size() == 3) return fixedResponse<resourceMetricsResourceList>(pretty);
  auto request = parseResourceMetricsRequest(info);
  if (!request) throw ApiError(404, "NotFound", kNotFoundMessage, server::StatusDetails{});
  const prometheus::Backend& backend = backendOf(*snapshot, rules->backend);
  if (pretty) {
    return jsonResponse(
        200, parts_.resource_metrics->handle(*request, *rules, backend, snapshot->mapper()), true);
  }
  return renderedResponse(
      parts_.resource_metrics->render(*request, *rules, backend, snapshot->mapper()) + '\n');
}

server::HttpResponse Router::forecastGroup(const server::RequestInfo& info, bool pretty) const {
  const auto& parts = info.parts;
  if (parts.size() == 2) return jsonResponse(200, api::forecastGroup(), pretty);
  if (parts[2] != kForecastVersion) {
    throw ApiError(404, "NotFound", kNotFoundMessage, server::StatusDetails{});
  }
  if (parts.size() == 3) return jsonResponse(200, forecastResourceList(), pretty);
  const bool observer = info.resource_request && info.verb == "get" &&
                        info.resource == kObserverResource && !info.namespace_name.empty() &&
                        !info.name.empty() && info.subresource.empty();
  if (!observer || !parts_.forecasts) {
    throw ApiError(404, "NotFound", kNotFoundMessage, server::StatusDetails{});
  }
  return observerPage(*parts_.forecasts, info);
}

server::HttpResponse Router::health(const std::string& endpoint,
                                    const std::vector<HealthCheck>& checks, bool verbose) const {
  std::string report;
  bool healthy = true;
  for (const auto& check : checks) {
    auto failure = check.check();
    if (failure) {
      healthy = false;
      SPDLOG_INFO("{} check {} failed: {}", endpoint, check.name, *failure);
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
