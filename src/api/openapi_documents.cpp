#include "metrics_adapter/api/openapi_documents.h"

#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <utility>

#include "api/http_caching.h"
#include "api/openapi_schemas.h"
#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/api/discovery_documents.h"

namespace metrics_adapter::api {
namespace {

constexpr std::string_view kDefinitionsPrefix = "#/definitions/";
constexpr std::string_view kSchemasPrefix = "#/components/schemas/";
constexpr const char* kStatus = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
constexpr const char* kResourceList = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";

struct Parameter {
  const char* name;
  const char* in;  // "path" or "query"
  const char* description;
};

// One GET route of a group-version, in the generic form custom-metrics-apiserver publishes.
struct Route {
  std::string path;  // absolute
  std::string operation_id;
  std::string description;
  std::vector<Parameter> parameters;
  std::string response;  // a definition's name; "" for the observer page (HTML)
  // The kind the operation serves, for x-kubernetes-group-version-kind (an item's kind for a
  // list, as the kube-apiserver writes it): `kubectl explain` finds a resource's schema by the
  // kind on its operation. "" for the discovery document and the observer page.
  std::string kind{};
  const char* action = "get";  // x-kubernetes-action
};

struct GroupVersion {
  std::string group;
  std::string version;
  std::string tag;  // groups the operations, e.g. customMetrics_v1beta1
  std::vector<Route> routes;
};

constexpr Parameter kNamespace{"namespace", "path", "The namespace of the objects."};
constexpr Parameter kName{"name", "path", "The name of the object, or * for all of them."};
constexpr Parameter kResource{"resource", "path",
                              "The resource of the objects, e.g. pods or deployments.apps."};
constexpr Parameter kMetric{"subresource", "path", "The metric's name."};
constexpr Parameter kLabelSelector{"labelSelector", "query",
                                   "Only objects (or series) whose labels match this selector."};
constexpr Parameter kMetricLabelSelector{"metricLabelSelector", "query",
                                         "Only series whose metric labels match this selector."};
constexpr Parameter kFieldSelector{"fieldSelector", "query",
                                   "Only objects whose fields match this selector."};
constexpr Parameter kPretty{"pretty", "query", "If 'true', the output is pretty printed."};

std::string operationId(std::string_view verb, const GroupVersion& gv, std::string_view what) {
  // Unique in the aggregator's merged spec: the group-version is part of every id.
  std::string id(verb);
  bool upper = true;
  for (const char c : gv.tag) {
    if (c == '_') {
      upper = true;
      continue;
    }
    id += upper ? static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c) : c;
    upper = false;
  }
  id += what;
  return id;
}

Route discoveryRoute(const GroupVersion& gv) {
  return {"/apis/" + gv.group + "/" + gv.version + "/",
          operationId("get", gv, "APIResources"),
          "The resources of " + gv.group + "/" + gv.version + ".",
          {},
          kResourceList};
}

GroupVersion customMetrics(const std::string& version) {
  GroupVersion gv{kCustomMetricsGroup, version, "customMetrics_" + version, {}};
  const std::string prefix = "/apis/" + gv.group + "/" + version + "/";
  const std::string list = "io.k8s.metrics.pkg.apis.custom_metrics." + version + ".MetricValueList";
  const std::string doc = "The values of a custom metric for the objects described.";
  gv.routes = {
      discoveryRoute(gv),
      {prefix + "{resource}/{name}/{subresource}",
       operationId("list", gv, "MetricValueList"),
       doc + " For cluster-scoped objects.",
       {kResource, kName, kMetric, kLabelSelector, kMetricLabelSelector, kPretty},
       list,
       "MetricValueList"},
      {prefix + "namespaces/{namespace}/{resource}/{name}/{subresource}",
       operationId("list", gv, "NamespacedMetricValueList"),
       doc + " For namespaced objects.",
       {kNamespace, kResource, kName, kMetric, kLabelSelector, kMetricLabelSelector, kPretty},
       list,
       "MetricValueList"},
      {prefix + "namespaces/{namespace}/metrics/{name}",
       operationId("read", gv, "MetricValueListForNamespace"),
       "The value of a custom metric that describes the namespace itself.",
       {kNamespace, Parameter{"name", "path", "The metric's name."}, kMetricLabelSelector, kPretty},
       list,
       "MetricValueList"},
  };
  return gv;
}

GroupVersion externalMetrics() {
  GroupVersion gv{kExternalMetricsGroup, kExternalMetricsVersion, "externalMetrics_v1beta1", {}};
  gv.routes = {
      discoveryRoute(gv),
      {"/apis/" + gv.group + "/" + gv.version + "/namespaces/{namespace}/{resource}",
       operationId("list", gv, "NamespacedExternalMetricValueList"),
       "The values of an external metric: one per series the rule's query returns.",
       {kNamespace, Parameter{"resource", "path", "The external metric's name."}, kLabelSelector,
        kPretty},
       "io.k8s.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValueList",
       "ExternalMetricValueList"},
  };
  return gv;
}

GroupVersion resourceMetrics() {
  GroupVersion gv{kResourceMetricsGroup, kResourceMetricsVersion, "metrics_v1beta1", {}};
  const std::string prefix = "/apis/" + gv.group + "/" + gv.version + "/";
  const std::string types = "io.k8s.metrics.pkg.apis.metrics.v1beta1.";
  const Parameter node{"name", "path", "The node's name."};
  const Parameter pod{"name", "path", "The pod's name."};
  gv.routes = {
      discoveryRoute(gv),
      {prefix + "nodes",
       operationId("list", gv, "NodeMetrics"),
       "The usage of every node.",
       {kLabelSelector, kFieldSelector, kPretty},
       types + "NodeMetricsList",
       "NodeMetrics",
       "list"},
      {prefix + "nodes/{name}",
       operationId("read", gv, "NodeMetrics"),
       "The usage of a node.",
       {node, kPretty},
       types + "NodeMetrics",
       "NodeMetrics"},
      {prefix + "pods",
       operationId("list", gv, "PodMetricsForAllNamespaces"),
       "The usage of every pod in every namespace.",
       {kLabelSelector, kFieldSelector, kPretty},
       types + "PodMetricsList",
       "PodMetrics",
       "list"},
      {prefix + "namespaces/{namespace}/pods",
       operationId("list", gv, "NamespacedPodMetrics"),
       "The usage of the pods of a namespace.",
       {kNamespace, kLabelSelector, kFieldSelector, kPretty},
       types + "PodMetricsList",
       "PodMetrics",
       "list"},
      {prefix + "namespaces/{namespace}/pods/{name}",
       operationId("read", gv, "NamespacedPodMetrics"),
       "The usage of a pod.",
       {kNamespace, pod, kPretty},
       types + "PodMetrics",
       "PodMetrics"},
  };
  return gv;
}

GroupVersion forecastObserver() {
  GroupVersion gv{kForecastGroup, kForecastVersion, "forecast_v1alpha1", {}};
  gv.routes = {
      discoveryRoute(gv),
      {"/apis/" + gv.group + "/" + gv.version + "/namespaces/{namespace}/observer/{name}",
       operationId("read", gv, "ForecastObserver"),
       "The observer page of a forecastRule: what it serves and how well it forecast (HTML).",
       {kNamespace, Parameter{"name", "path", "The forecastRule's name."}},
       ""},
  };
  return gv;
}

std::vector<GroupVersion> servedGroupVersions(bool resource_metrics) {
  std::vector<GroupVersion> served{customMetrics("v1beta1"), customMetrics("v1beta2"),
                                   externalMetrics()};
  if (resource_metrics) served.push_back(resourceMetrics());
  served.push_back(forecastObserver());
  return served;
}

Json definitionRef(const std::string& name, std::string_view prefix) {
  return {{"$ref", std::string(prefix) + name}};
}

// The names of the definitions `seeds` refer to, directly or through others.
std::set<std::string> referencedDefinitions(const std::vector<std::string>& seeds) {
  std::set<std::string> found;
  const Json& all = openapi::definitions();
  std::vector<const Json*> pending;
  auto visit = [&](const std::string& name) {
    if (!found.insert(name).second) return;
    pending.push_back(&all.at(name));
  };
  for (const auto& seed : seeds) visit(seed);
  while (!pending.empty()) {
    const Json* node = pending.back();
    pending.pop_back();
    if (node->is_object()) {
      for (const auto& [key, value] : node->items()) {
        if (key == "$ref" && value.is_string()) {
          visit(value.get<std::string>().substr(kDefinitionsPrefix.size()));
        } else {
          pending.push_back(&value);
        }
      }
    } else if (node->is_array()) {
      for (const auto& value : *node) pending.push_back(&value);
    }
  }
  return found;
}

std::vector<std::string> responsesOf(const std::vector<GroupVersion>& served) {
  std::vector<std::string> names{kStatus};  // every error's body
  for (const auto& gv : served) {
    for (const auto& route : gv.routes) {
      if (!route.response.empty()) names.push_back(route.response);
    }
  }
  return names;
}

Json v2Parameter(const Parameter& parameter) {
  Json json = {{"name", parameter.name},
               {"in", parameter.in},
               {"description", parameter.description},
               {"type", "string"},
               {"uniqueItems", true}};
  if (std::string_view(parameter.in) == "path") json["required"] = true;
  return json;
}

// The kube-apiserver's extensions of an operation: what it does, and the kind it serves.
void addExtensions(Json& operation, const GroupVersion& gv, const Route& route) {
  if (route.kind.empty()) return;
  operation["x-kubernetes-action"] = route.action;
  operation["x-kubernetes-group-version-kind"] = {
      {"group", gv.group}, {"kind", route.kind}, {"version", gv.version}};
}

Json v2Operation(const GroupVersion& gv, const Route& route) {
  Json parameters = Json::array();
  for (const auto& parameter : route.parameters) parameters.push_back(v2Parameter(parameter));
  Json ok = {{"description", "OK"}};
  if (route.response.empty()) {
    ok["schema"] = {{"type", "string"}};
  } else {
    ok["schema"] = definitionRef(route.response, kDefinitionsPrefix);
  }
  Json operation = {
      {"description", route.description},
      {"consumes", Json::array({"*/*"})},
      {"produces", Json::array({route.response.empty() ? "text/html" : "application/json"})},
      {"schemes", Json::array({"https"})},
      {"tags", Json::array({gv.tag})},
      {"operationId", route.operation_id},
      {"parameters", std::move(parameters)},
      {"responses", {{"200", std::move(ok)}, {"401", {{"description", "Unauthorized"}}}}}};
  addExtensions(operation, gv, route);
  return operation;
}

Json securityDefinitions() {
  return {{"BearerToken",
           {{"type", "apiKey"},
            {"name", "authorization"},
            {"in", "header"},
            {"description", "Bearer token authentication"}}}};
}

Json info(const std::string& version) {
  return {{"title", "metrics-adapter"}, {"version", version}};
}

Json swagger(const std::vector<GroupVersion>& served, const std::string& version) {
  Json paths = Json::object();
  for (const auto& gv : served) {
    for (const auto& route : gv.routes) paths[route.path] = {{"get", v2Operation(gv, route)}};
  }
  Json definitions = Json::object();
  for (const auto& name : referencedDefinitions(responsesOf(served))) {
    definitions[name] = openapi::definitions().at(name);
  }
  return {{"swagger", "2.0"},
          {"info", info(version)},
          {"paths", std::move(paths)},
          {"definitions", std::move(definitions)},
          {"securityDefinitions", securityDefinitions()},
          {"security", Json::array({{{"BearerToken", Json::array()}}})}};
}

// A v2 schema in v3's form: refs into #/components/schemas, and a $ref with siblings (a
// description) wrapped in allOf, as the kube-apiserver's own v3 documents write it (a $ref's
// siblings are ignored in OpenAPI 3.0).
Json toV3Schema(const Json& schema) {
  if (schema.is_array()) {
    Json out = Json::array();
    for (const auto& item : schema) out.push_back(toV3Schema(item));
    return out;
  }
  if (!schema.is_object()) return schema;
  Json out = Json::object();
  for (const auto& [key, value] : schema.items()) {
    if (key == "$ref") continue;
    out[key] = toV3Schema(value);
  }
  const auto ref = schema.find("$ref");
  if (ref == schema.end()) return out;
  const std::string target =
      std::string(kSchemasPrefix) + ref->get<std::string>().substr(kDefinitionsPrefix.size());
  if (out.empty()) return {{"$ref", target}};
  out["allOf"] = Json::array({{{"$ref", target}}});
  return out;
}

Json v3Operation(const GroupVersion& gv, const Route& route) {
  Json parameters = Json::array();
  for (const auto& parameter : route.parameters) {
    Json json = {
        {"name", parameter.name}, {"in", parameter.in}, {"description", parameter.description}};
    if (std::string_view(parameter.in) == "path") json["required"] = true;
    json["schema"] = {{"type", "string"}, {"uniqueItems", true}};
    parameters.push_back(std::move(json));
  }
  Json content;
  if (route.response.empty()) {
    content = {{"text/html", {{"schema", {{"type", "string"}}}}}};
  } else {
    content = {{"application/json", {{"schema", definitionRef(route.response, kSchemasPrefix)}}}};
  }
  Json operation = {{"tags", Json::array({gv.tag})},
                    {"description", route.description},
                    {"operationId", route.operation_id},
                    {"parameters", std::move(parameters)},
                    {"responses",
                     {{"200", {{"description", "OK"}, {"content", std::move(content)}}},
                      {"401", {{"description", "Unauthorized"}}}}}};
  addExtensions(operation, gv, route);
  return operation;
}

Json v3Document(const GroupVersion& gv, const std::string& version) {
  Json paths = Json::object();
  for (const auto& route : gv.routes) paths[route.path] = {{"get", v3Operation(gv, route)}};
  Json schemas = Json::object();
  for (const auto& name : referencedDefinitions(responsesOf({gv}))) {
    schemas[name] = toV3Schema(openapi::definitions().at(name));
  }
  Json security_schemes = securityDefinitions();
  return {{"openapi", "3.0.0"},
          {"info", info(version)},
          {"paths", std::move(paths)},
          {"components",
           {{"schemas", std::move(schemas)}, {"securitySchemes", std::move(security_schemes)}}},
          {"security", Json::array({{{"BearerToken", Json::array()}}})}};
}

std::string compact(const Json& json) { return json.dump(); }

}  // namespace

const OpenApiGroupVersion* OpenApiDocuments::find(const std::string& path) const {
  for (const auto& document : v3) {
    if (document.path == path) return &document;
  }
  return nullptr;
}

OpenApiDocuments buildOpenApiDocuments(bool resource_metrics, const std::string& version) {
  const std::vector<GroupVersion> served = servedGroupVersions(resource_metrics);
  OpenApiDocuments documents;
  documents.v2 = compact(swagger(served, version));
  documents.v2_etag = quotedEtag(contentHash(documents.v2));
  Json index = {{"paths", Json::object()}};
  for (const auto& gv : served) {
    OpenApiGroupVersion document;
    document.path = "apis/" + gv.group + "/" + gv.version;
    document.body = compact(v3Document(gv, version));
    document.hash = contentHash(document.body);
    index["paths"][document.path] = {
        {"serverRelativeURL", "/openapi/v3/" + document.path + "?hash=" + document.hash}};
    documents.v3.push_back(std::move(document));
  }
  documents.v3_index = compact(index);
  documents.v3_index_etag = quotedEtag(contentHash(documents.v3_index));
  return documents;
}

LazyOpenApiDocuments::LazyOpenApiDocuments(bool resource_metrics, std::string version)
    : resource_metrics_(resource_metrics), version_(std::move(version)) {}

std::shared_ptr<const OpenApiDocuments> LazyOpenApiDocuments::get() const {
  std::call_once(built_, [this] {
    documents_ = std::make_shared<const OpenApiDocuments>(
        buildOpenApiDocuments(resource_metrics_, version_));
  });
  return documents_;
}

}  // namespace metrics_adapter::api
